"""The exact check of linear-RNN models, re-exported from compiler/exact/lrnn.py (the old import path)."""

from .exact.lrnn import MAX_CONFIGURATIONS, ExactnessError, exact_check, explore

__all__ = ["MAX_CONFIGURATIONS", "ExactnessError", "exact_check", "explore"]
