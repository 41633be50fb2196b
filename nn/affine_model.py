"""The compiled shift-register model, re-exported from nn/compiled/affine_model.py (the old import path)."""

from .compiled.affine_model import AffineModel

__all__ = ["AffineModel"]
