"""Integer key → value maps of the executors (the row tables and readouts of compiled models): a dense array for
small key spaces (one gather), else a binary search over the sorted keys; −1 where a key is absent."""

from __future__ import annotations

import numpy as np

#: key spaces up to this size get a dense table (here and in the torch runtime's nn.lrnn.KeyTable)
DENSE_KEYS = 1 << 22


class KeyLookup:
    """``lookup(keys)``: the value of every key (any shape), −1 where absent or negative."""

    def __init__(self, keys: np.ndarray, values: np.ndarray, space: int) -> None:
        keys = np.asarray(keys, dtype=np.int64).reshape(-1)
        values = np.asarray(values, dtype=np.int64).reshape(-1)
        order = np.argsort(keys, kind="stable")
        self.keys, self.values = keys[order], values[order]
        self.space = int(space)
        self.dense: np.ndarray | None = None
        if self.space <= DENSE_KEYS:
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
        pos = np.minimum(np.searchsorted(self.keys, key), self.keys.size - 1)
        return np.where(self.keys[pos] == key, self.values[pos], -1)
