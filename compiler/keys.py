"""Integer keys of compiled models: mixed-radix codes, their limit, and the key → value lookup of every table.

A compiled model indexes its tables by tuples of small integers (a symbol and layer states, or head indices)
packed into one int64 code. Two conventions are in use, each named here and used for one purpose only:

- :func:`encode_keys` — *first digit least significant*: Σ_i c_i·Π_{j<i} r_j. The linear-RNN targets: a layer's
  row key (x_t, s_0(t−1), …) and the final readout's key (s_0(t), …, s_{L−1}(t)) (compiler/README.md).
- :func:`mixed_radix` — *first digit most significant*: Σ_i c_i·Π_{j>i} r_j. The NFSM target: a layer's key
  (x_t, upper heads' indices at t−1) and a configuration's code (head indices in order) (compiler/NFSM.md).

Every code space is at most :data:`MAX_KEY_SPACE` (:func:`check_key_space`). :class:`KeyLookup` maps codes to
values, −1 where a code is absent: a dense table when the space is at most :data:`DENSE_KEYS` (:func:`dense_keys`,
the one threshold the numpy and torch executors share), else a binary search over the sorted codes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fsa2rnn.fsa.errors import LimitExceededError

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


def encode_keys(cols: Sequence[np.ndarray], radix: Sequence[int]) -> np.ndarray:
    """Mixed-radix int64 codes of integer columns, the first column least significant (linear-RNN row keys)."""
    key = np.zeros(np.broadcast(*cols).shape if cols else (), dtype=np.int64)
    mult = 1
    for c, r in zip(cols, radix):
        key = key + np.asarray(c, dtype=np.int64) * mult
        mult *= int(r)
    return key


def mixed_radix(digits: np.ndarray, radices: Sequence[int]) -> np.ndarray:
    """Σ digits[..., i]·Π_{j>i} radices[j], the first digit most significant, int64 (NFSM keys, configurations)."""
    code = np.zeros(np.shape(digits)[:-1], dtype=np.int64)
    for i, r in enumerate(radices):
        code = code * int(r) + np.asarray(digits)[..., i]
    return code


def mixed_radix_weights(radices: Sequence[int]) -> list[int]:
    """The weight Π_{j>i} radices[j] of every digit of :func:`mixed_radix`."""
    return [key_space(radices[i + 1 :]) for i in range(len(radices))]


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
    "encode_keys",
    "key_space",
    "lookup_sorted",
    "mixed_radix",
    "mixed_radix_weights",
]
