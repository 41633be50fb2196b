"""Sequential reference scan over transition tables: h_t = σ_t(h_{t-1}), one step at a time (docs/theory.md, "Neural
Finite-State Machines").

This is the recurrence itself, read left to right; every other path in this folder is checked against it.
"""

from __future__ import annotations

import torch


def naive_table_scan(
    bank: torch.Tensor, keys: torch.Tensor, h0: torch.Tensor, lengths: torch.Tensor | None = None
) -> torch.Tensor:
    """States after each step of a keyed table scan.

    ``bank`` (K, d) integer tables (row k is the table σ with σ(j) = bank[k, j]); ``keys`` (B, T) row of ``bank``
    used at each step; ``h0`` (B,) start indices; ``lengths`` (B,) or None. Returns (B, T) int64 with
    h_t = bank[keys[:, t], h_{t-1}] and -1 at positions t ≥ lengths[b].
    """
    bsz, length = keys.shape
    bank = bank.long()
    h = h0.long().clone()
    out = torch.empty(bsz, length, dtype=torch.long, device=keys.device)
    for t in range(length):
        h = bank[keys[:, t].long(), h]
        out[:, t] = h
    return _mask(out, lengths)


def _mask(out: torch.Tensor, lengths: torch.Tensor | None) -> torch.Tensor:
    """Set positions at or past each word's length to -1 (states before them never depend on them: causality)."""
    if lengths is None:
        return out
    pos = torch.arange(out.shape[1], device=out.device)
    return out.masked_fill(pos[None, :] >= lengths.to(out.device)[:, None], -1)
