"""Integer keys of compiled models: the mixed-radix codec, its limit, and the key → value lookup of every table.

A compiled model indexes its tables by tuples of small integers (a symbol and layer states, or head indices)
packed into one int64 code. Two conventions are in use, each named here and used for one purpose only:

- :data:`LOW_FIRST` — *first digit least significant*: Σ_i c_i·Π_{j<i} r_j. The linear-RNN targets: a layer's
  row key (x_t, s_0(t−1), …) and the final readout's key (s_0(t), …, s_{L−1}(t)) (compiler/targets/lrnn/README.md).
- :data:`HIGH_FIRST` — *first digit most significant*: Σ_i c_i·Π_{j>i} r_j. The NFSM target: a layer's key
  (x_t, upper heads' indices at t−1) and a configuration's code (head indices in order)
  (compiler/targets/nfsm/README.md).

:func:`encode` and :func:`decode` are the codec, written once for numpy arrays and torch tensors alike (the
executors of every backend call them). Every code space is at most :data:`MAX_KEY_SPACE` (:func:`check_key_space`).
:class:`KeyLookup` maps codes to values, −1 where a code is absent: a dense table when the space is at most
:data:`DENSE_KEYS` (:func:`dense_keys`, the one threshold the numpy and torch lookups share), else a binary search
over the sorted codes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..fsa.errors import LimitExceededError
from .xp import Array, is_tensor, stack

#: mixed-radix codes are int64; the product of the radices must stay at most this
MAX_KEY_SPACE = 2**62
#: key spaces up to this size get a dense lookup table (one gather), larger ones a binary search
DENSE_KEYS = 1 << 22


def key_space(radix: Sequence[int]) -> int:
    """Π radix: the number of distinct codes (a Python int: no overflow)."""
    space = 1
    for r in radix:
        space *= int(r)
    return space


def dense_keys(space: int) -> bool:
    """Whether a key space of this size gets a dense table (numpy and torch lookups alike)."""
    return int(space) <= DENSE_KEYS


def check_key_space(radix: Sequence[int], what: str) -> None:
    """LimitExceededError when the codes of ``radix`` would not fit the int64 limit MAX_KEY_SPACE."""
    space = key_space(radix)
    if space > MAX_KEY_SPACE:
        raise LimitExceededError(f"{what}: key space {space} exceeds the limit {MAX_KEY_SPACE} = 2^62 of int64 keys")


#: the two digit orders of mixed-radix codes (module docstring)
LOW_FIRST, HIGH_FIRST = "low_first", "high_first"


def key_weights(radices: Sequence[int], order: str) -> list[int]:
    """The weight of every digit: Π_{j<i} r_j (:data:`LOW_FIRST`) or Π_{j>i} r_j (:data:`HIGH_FIRST`)."""
    if order == LOW_FIRST:
        return [key_space(radices[:i]) for i in range(len(radices))]
    if order == HIGH_FIRST:
        return [key_space(radices[i + 1 :]) for i in range(len(radices))]
    raise ValueError(f"unknown digit order {order!r} (choose {LOW_FIRST} or {HIGH_FIRST})")


def _columns(digits: Any) -> list[Array]:
    if isinstance(digits, (list, tuple)):
        return [c if is_tensor(c) else np.asarray(c, dtype=np.int64) for c in digits]
    if not is_tensor(digits):
        digits = np.asarray(digits, dtype=np.int64)
    return [digits[..., i] for i in range(digits.shape[-1])]


def encode(digits: Any, radices: Sequence[int], order: str) -> Array:
    """The int64 code Σ_i d_i·w_i of integer digits — a sequence of broadcastable columns, or one array (numpy or
    torch) whose last axis holds the digits — in the digit ``order`` (:func:`key_weights`)."""
    cols = _columns(digits)
    key = None
    for c, w in zip(cols, key_weights(radices, order)):
        key = c * w if key is None else key + c * w
    return key if key is not None else np.zeros((), dtype=np.int64)


def decode(codes: Array, radices: Sequence[int], order: str) -> Array:
    """The digits (…, len(radices)) of int64 codes (numpy or torch): the inverse of :func:`encode`."""
    if not is_tensor(codes):
        codes = np.asarray(codes, dtype=np.int64)
    positions = range(len(radices)) if order == LOW_FIRST else range(len(radices) - 1, -1, -1)
    if order not in (LOW_FIRST, HIGH_FIRST):
        key_weights(radices, order)  # the error naming the orders
    out: dict[int, Array] = {}
    for i in positions:
        out[i] = codes % int(radices[i])
        codes = codes // int(radices[i])
    return stack([out[i] for i in range(len(radices))], axis=-1)


def lookup_sorted(sorted_keys: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Index of each key in a sorted 1-D array, −1 where absent."""
    keys = np.asarray(keys, dtype=np.int64)
    if len(sorted_keys) == 0:
        return np.full(keys.shape, -1, dtype=np.int64)
    pos = np.minimum(np.searchsorted(sorted_keys, keys), len(sorted_keys) - 1)
    return np.where(sorted_keys[pos] == keys, pos, -1)


class KeyLookup:
    """``lookup(keys)``: the value of every key (any shape), −1 where absent or outside 0..space−1."""

    def __init__(self, keys: np.ndarray, values: np.ndarray, space: int) -> None:
        keys = np.asarray(keys, dtype=np.int64).reshape(-1)
        values = np.asarray(values, dtype=np.int64).reshape(-1)
        order = np.argsort(keys, kind="stable")
        self.keys, self.values = keys[order], values[order]
        self.space = int(space)
        self.dense: np.ndarray | None = None
        if dense_keys(self.space):
            # one slot past the end answers every key outside 0..space−1
            self.dense = np.full(self.space + 1, -1, dtype=np.int64)
            self.dense[keys] = values

    def __call__(self, key: np.ndarray) -> np.ndarray:
        key = np.asarray(key, dtype=np.int64)
        if self.dense is not None:
            inside = (key >= 0) & (key < self.space)
            return self.dense[key if inside.all() else np.where(inside, key, self.space)]
        if self.keys.size == 0:
            return np.full(key.shape, -1, dtype=np.int64)
        idx = lookup_sorted(self.keys, key)
        return np.where(idx >= 0, self.values[np.maximum(idx, 0)], -1)


__all__ = [
    "DENSE_KEYS",
    "MAX_KEY_SPACE",
    "KeyLookup",
    "check_key_space",
    "dense_keys",
    "HIGH_FIRST",
    "LOW_FIRST",
    "decode",
    "encode",
    "key_space",
    "key_weights",
    "lookup_sorted",
]
