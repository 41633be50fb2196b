"""The compiled NFSM model, re-exported from nn/compiled/nfsm_model.py (the old import path)."""

from .compiled.nfsm_model import NFSMModel

__all__ = ["NFSMModel"]
