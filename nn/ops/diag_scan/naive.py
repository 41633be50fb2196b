"""Sequential reference of the diagonal linear recurrence (negative-eigenvalues eq. (1) with A_t = diag(a_t)):

    h_t = a_t ⊙ h_{t−1} + b_t,   t = 1..T,

one step at a time over ``unbind``; autograd differentiates it. Every other path is tested against it.
"""

from __future__ import annotations

import torch

from ..checks import length_mask


def naive_diag_scan(
    a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None, lengths: torch.Tensor | None = None
) -> torch.Tensor:
    """a, b (B, T, D), h0 (B, D) or None (zeros) → h (B, T, D), zero at positions t ≥ lengths[b]."""
    h = b.new_zeros(b.shape[0], b.shape[2]) if h0 is None else h0
    hs = []
    for a_t, b_t in zip(a.unbind(1), b.unbind(1)):
        h = a_t * h + b_t
        hs.append(h)
    out = torch.stack(hs, 1) if hs else b.new_zeros(b.shape)
    if lengths is not None:
        out = out.masked_fill(length_mask(lengths, out.shape[1], out.device), 0)
    return out
