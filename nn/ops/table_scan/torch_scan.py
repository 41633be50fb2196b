"""Parallel table scan in torch: Hillis–Steele prefix composition of tables, O(log T) rounds of gathers.

Round r composes each prefix with the one 2^r steps earlier, P_t ← P_t ∘ P_{t−2^r} (a gather:
(P_t ∘ P_s)(j) = P_t[P_s[j]]), so after ⌈log2 T⌉ rounds P_t = σ_t ∘ … ∘ σ_1 and h_t = P_t(h0). Every merge is an
exact integer gather, so the result is bit-identical to the sequential scan whatever the tree (Prop. G.1).
Work O(T·d·log T), memory O(B·T·d): the shape of the GPU algorithm, runnable on any device.
"""

from __future__ import annotations

import torch

from .naive import _mask


def torch_table_scan(
    bank: torch.Tensor, keys: torch.Tensor, h0: torch.Tensor, lengths: torch.Tensor | None = None
) -> torch.Tensor:
    """Same contract as :func:`naive_table_scan`."""
    bsz, length = keys.shape
    if length == 0:
        return torch.empty(bsz, 0, dtype=torch.long, device=keys.device)
    prefix = bank.long()[keys.long()]  # (B, T, d): σ_t
    shift = 1
    while shift < length:
        # the right side is computed in full before the assignment, so every round reads the previous round
        prefix[:, shift:] = torch.gather(prefix[:, shift:], 2, prefix[:, :-shift])
        shift *= 2
    idx = h0.long().view(bsz, 1, 1).expand(bsz, length, 1)
    out = torch.gather(prefix, 2, idx).squeeze(2)
    return _mask(out, lengths)
