"""The few array operations the written-once pieces of a compiled model need, on numpy arrays and torch tensors alike.

The mixed-radix keys, the cascade wiring and the accepting mask (compiler/keys.py, compiler/wiring.py) are written
once over these functions and Python's operators (``+``, ``*``, ``//``, ``%``, comparisons, indexing), which numpy
and torch share; the numpy executors, the exact interpreters and the torch modules call the same definitions. A
tensor is recognized by its type's module, so this module never imports torch.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

import numpy as np

Array = Any  #: a numpy array or a torch tensor


def is_tensor(a: Any) -> bool:
    """Whether ``a`` is a torch tensor (without importing torch)."""
    return type(a).__module__.split(".")[0] == "torch"


def _torch(a: Any) -> Any:
    return sys.modules["torch"]  # a tensor exists, so torch is imported already


def stack(arrays: Sequence[Array], axis: int = -1) -> Array:
    """Arrays of one shape stacked along a new ``axis``."""
    if is_tensor(arrays[0]):
        return _torch(arrays[0]).stack(list(arrays), dim=axis)
    return np.stack(arrays, axis=axis)


def concat(arrays: Sequence[Array], axis: int = 0) -> Array:
    """Arrays joined along an existing ``axis``."""
    if is_tensor(arrays[0]):
        return _torch(arrays[0]).cat(list(arrays), dim=axis)
    return np.concatenate(arrays, axis=axis)


def clip_low(a: Array, low: int) -> Array:
    """max(a, low) elementwise."""
    return a.clamp(min=low) if is_tensor(a) else np.maximum(a, low)


def full_like(a: Array, shape: Sequence[int], value: Any) -> Array:
    """An array of ``shape`` filled with ``value``, of ``a``'s dtype (and device)."""
    return a.new_full(tuple(shape), value) if is_tensor(a) else np.full(tuple(shape), value, dtype=a.dtype)


def take_last(a: Array, index: Array) -> Array:
    """a[..., index[...]]: one entry of the last axis per position (``index`` has ``a``'s shape without it)."""
    if is_tensor(a):
        return a.gather(-1, index[..., None])[..., 0]
    return np.take_along_axis(a, index[..., None], -1)[..., 0]


def where(condition: Array, a: Array, b: Array | int) -> Array:
    """``a`` where ``condition``, else ``b`` (a scalar is broadcast)."""
    if is_tensor(condition):
        return _torch(condition).where(condition, a, b if is_tensor(b) else _torch(condition).zeros_like(a) + b)
    return np.where(condition, a, b)


def on_device_of(table: Array, like: Array) -> Array:
    """``table`` where ``like`` lives (a torch table is moved to ``like``'s device; numpy is returned as is)."""
    return table.to(like.device) if is_tensor(table) else table


__all__ = ["Array", "clip_low", "concat", "full_like", "is_tensor", "on_device_of", "stack", "take_last", "where"]
