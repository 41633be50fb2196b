"""The compiled linear-RNN layers, re-exported from nn/compiled/lrnn.py (the old import path)."""

from .compiled.lrnn import SCANS, DiagonalLinearRNN, GHLinearRNN, KeyTable, lookup_sorted

__all__ = ["SCANS", "DiagonalLinearRNN", "GHLinearRNN", "KeyTable", "lookup_sorted"]
