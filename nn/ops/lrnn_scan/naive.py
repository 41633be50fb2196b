"""Sequential reference recurrences of a linear RNN layer (negative-eigenvalues eq. (1)):

    H_t = A(x_t) H_{t−1} + B(x_t),   t = 1..T,

with A(x) looked up per step from a table of rows. Three ways to apply A:

- ``naive_recurrent_lrnn``: the fused matrix A(r) (exact 0/±1 entries for permutations and resets);
- ``naive_recurrent_gh``: factor by factor, h ← h − β_j v_j (v_jᵀ h) for j = 1..k (as DeltaProduct applies them);
- ``naive_recurrent_diagonal``: A = diag(λ) with complex λ, stored as (re, im) pairs in the last dimension.
"""

from __future__ import annotations

from collections.abc import Callable

import torch


def _recurrence(
    step: Callable[[torch.Tensor, torch.LongTensor], torch.Tensor], rows: torch.LongTensor, h0: torch.Tensor
) -> torch.Tensor:
    """H_t = step(H_{t−1}, r_t) for t = 1..T from H_0 = h0, one step at a time: rows (B, T) → H (B, T, *h0.shape)."""
    bsz, length = rows.shape
    h = h0.expand(bsz, *h0.shape)
    out = h0.new_empty(bsz, length, *h0.shape)
    for t in range(length):
        h = step(h, rows[:, t])
        out[:, t] = h
    return out


def naive_recurrent_lrnn(
    a_table: torch.Tensor, b_table: torch.Tensor, rows: torch.LongTensor, h0: torch.Tensor
) -> torch.Tensor:
    """a_table (R, n, n), b_table (R, n), rows (B, T), h0 (n,) → H (B, T, n)."""
    return _recurrence(lambda h, r: torch.bmm(a_table[r], h.unsqueeze(-1)).squeeze(-1) + b_table[r], rows, h0)


def naive_recurrent_gh(
    beta: torch.Tensor, v: torch.Tensor, b_table: torch.Tensor, rows: torch.LongTensor, h0: torch.Tensor
) -> torch.Tensor:
    """beta (R, k), v (R, k, n): A(r) = (I − β_k v_k v_kᵀ) ⋯ (I − β_1 v_1 v_1ᵀ), applied factor by factor."""

    def step(h: torch.Tensor, r: torch.LongTensor) -> torch.Tensor:
        bt, vt = beta[r], v[r]
        for j in range(beta.shape[1]):
            vj = vt[:, j]
            h = h - bt[:, j : j + 1] * vj * (vj * h).sum(-1, keepdim=True)
        return h + b_table[r]

    return _recurrence(step, rows, h0)


def cmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Complex product of tensors whose last dimension holds (re, im)."""
    ar, ai = a[..., 0], a[..., 1]
    br, bi = b[..., 0], b[..., 1]
    return torch.stack([ar * br - ai * bi, ar * bi + ai * br], dim=-1)


def naive_recurrent_diagonal(
    lam_table: torch.Tensor, b_table: torch.Tensor, rows: torch.LongTensor, h0: torch.Tensor
) -> torch.Tensor:
    """lam_table (R, n, 2), b_table (R, n, 2), rows (B, T), h0 (n, 2) → H (B, T, n, 2): h_t = λ ⊙ h_{t−1} + b."""
    return _recurrence(lambda h, r: cmul(lam_table[r], h) + b_table[r], rows, h0)
