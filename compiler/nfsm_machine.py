"""The NFSM as a finite machine, re-exported from compiler/exact/nfsm.py (the old import path)."""

from .exact.nfsm import MAX_PAIRS, Exploration, LayerTables, NFSMMachine, Readout, check_radix_limit, mixed_radix

__all__ = ["MAX_PAIRS", "Exploration", "LayerTables", "NFSMMachine", "Readout", "check_radix_limit", "mixed_radix"]
