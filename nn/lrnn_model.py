"""The compiled linear-RNN model, re-exported from nn/compiled/lrnn_model.py (the old import path)."""

from .compiled.lrnn_model import LinearRNNModel, encode_rows

__all__ = ["LinearRNNModel", "encode_rows"]
