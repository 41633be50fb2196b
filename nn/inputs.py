"""Symbol-id inputs of the compiled modules, re-exported from nn/compiled/inputs.py (the old import path)."""

from .compiled.inputs import symbol_id_tensor

__all__ = ["symbol_id_tensor"]
