"""Parallel (log-depth) scan of affine maps h ↦ A h + b in pure torch.

The recurrence H_t = A_t H_{t−1} + b_t is the prefix composition of the affine maps (A_t, b_t) under
(A₂, b₂) ∘ (A₁, b₁) = (A₂A₁, A₂b₁ + b₂), which is associative, so it runs as a Hillis–Steele inclusive scan in
⌈log₂ S⌉ rounds over segments of S steps; the segments are chained sequentially through their carried state, which
bounds memory at (B, S, n, n) per segment. Diagonal maps compose elementwise (complex, as (re, im) pairs).
"""

from __future__ import annotations

import torch

from .naive import cmul

#: steps per segment: memory is B·S·n² per segment, rounds ⌈log₂ S⌉
DEFAULT_SEGMENT = 2048


def _gather(table: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """table[rows] through index_select (the fast path for small trailing dimensions)."""
    return table.index_select(0, rows.reshape(-1)).view(*rows.shape, *table.shape[1:])


def _scan_matrix(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Inclusive scan over dim 1 of (a (B, S, n, n), b (B, S, n)) under affine composition."""
    length = a.shape[1]
    d = 1
    while d < length:
        a_prev, b_prev = a[:, :-d], b[:, :-d]
        a_cur, b_cur = a[:, d:], b[:, d:]
        new_a = torch.matmul(a_cur, a_prev)
        new_b = torch.matmul(a_cur, b_prev.unsqueeze(-1)).squeeze(-1) + b_cur
        a = torch.cat([a[:, :d], new_a], dim=1)
        b = torch.cat([b[:, :d], new_b], dim=1)
        d *= 2
    return a, b


def _scan_diagonal(lam: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Inclusive scan over dim 1 of (λ (B, S, n, 2), b (B, S, n, 2)) under elementwise complex affine composition."""
    length = lam.shape[1]
    d = 1
    while d < length:
        new_l = cmul(lam[:, d:], lam[:, :-d])
        new_b = cmul(lam[:, d:], b[:, :-d]) + b[:, d:]
        lam = torch.cat([lam[:, :d], new_l], dim=1)
        b = torch.cat([b[:, :d], new_b], dim=1)
        d *= 2
    return lam, b


def parallel_scan_lrnn(
    a_table: torch.Tensor,
    b_table: torch.Tensor,
    rows: torch.LongTensor,
    h0: torch.Tensor,
    segment: int = DEFAULT_SEGMENT,
) -> torch.Tensor:
    """Same contract as naive_recurrent_lrnn: a_table (R, n, n), b_table (R, n), rows (B, T), h0 (n,) → (B, T, n)."""
    bsz, length = rows.shape
    h = h0.expand(bsz, -1)
    out = h0.new_empty(bsz, length, h0.shape[-1])
    for s in range(0, length, segment):
        r = rows[:, s : s + segment]
        cum_a, cum_b = _scan_matrix(_gather(a_table, r), _gather(b_table, r))
        seg = torch.matmul(cum_a, h[:, None, :, None]).squeeze(-1) + cum_b
        out[:, s : s + segment] = seg
        h = seg[:, -1]
    return out


def parallel_scan_diagonal(
    lam_table: torch.Tensor,
    b_table: torch.Tensor,
    rows: torch.LongTensor,
    h0: torch.Tensor,
    segment: int = DEFAULT_SEGMENT,
) -> torch.Tensor:
    """Same contract as naive_recurrent_diagonal, (re, im) in the last dimension."""
    bsz, length = rows.shape
    h = h0.expand(bsz, -1, -1)
    out = h0.new_empty(bsz, length, *h0.shape)
    for s in range(0, length, segment):
        r = rows[:, s : s + segment]
        cum_l, cum_b = _scan_diagonal(_gather(lam_table, r), _gather(b_table, r))
        seg = cmul(cum_l, h[:, None]) + cum_b
        out[:, s : s + segment] = seg
        h = seg[:, -1]
    return out
