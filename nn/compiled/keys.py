"""Integer key → value tables of the compiled modules in torch: the lookup of compiler/keys.py ``KeyLookup`` (a dense
table when the key space is at most ``dense_keys``, the threshold both share, else a binary search)."""

from __future__ import annotations

import torch
from torch import nn

from ...compiler.keys import dense_keys


def lookup_sorted(sorted_keys: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """Index of each key in a sorted 1-D tensor, −1 where absent."""
    if sorted_keys.numel() == 0:
        return torch.full_like(keys, -1)
    pos = torch.searchsorted(sorted_keys, keys).clamp(max=sorted_keys.numel() - 1)
    return torch.where(sorted_keys[pos] == keys, pos, torch.full_like(pos, -1))


class KeyTable(nn.Module):
    """Map int64 keys to values (−1 where absent): a dense table for small key spaces (compiler/keys.py
    ``dense_keys``, the threshold the numpy KeyLookup uses too), else binary search."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, space: int) -> None:
        super().__init__()
        keys, values = torch.as_tensor(keys, dtype=torch.int64), torch.as_tensor(values, dtype=torch.int64)
        order = torch.argsort(keys)
        self.register_buffer("keys", keys[order])
        self.register_buffer("values", values[order])
        self.space = int(space)
        if dense_keys(self.space):
            dense = torch.full((self.space,), -1, dtype=torch.int64)
            dense[keys] = values
            self.register_buffer("dense", dense)
        else:
            self.dense = None

    def forward(self, key: torch.Tensor) -> torch.Tensor:
        if self.dense is not None:
            if key.numel() == 0:
                return torch.full_like(key, -1)
            lo, hi = torch.aminmax(key)
            if int(lo) >= 0 and int(hi) < self.space:  # every key in range: one gather
                return self.dense.index_select(0, key.reshape(-1)).view(key.shape)
            ok = (key >= 0) & (key < self.space)
            return torch.where(ok, self.dense[key.clamp(0, self.space - 1)], torch.full_like(key, -1))
        idx = lookup_sorted(self.keys, key)
        return torch.where(idx >= 0, self.values[idx.clamp(min=0)], torch.full_like(idx, -1))


__all__ = ["KeyTable", "lookup_sorted"]
