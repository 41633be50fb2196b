"""The DeltaProduct recurrence, one delta step at a time (negative-eigenvalues §4.2; the reference of every path).

Per token t and for j = 1..n_h:  S ← (I − β_{t,j} k_{t,j} k_{t,j}ᵀ) S + β_{t,j} k_{t,j} v_{t,j}ᵀ,  then  o_t = Sᵀ q_t.
Written as S ← S + β k (v − Sᵀk)ᵀ (the same map), one loop over ``unbind(1)``; positions t ≥ lengths[b] keep S and
give o_t = 0. Differentiable by autograd.
"""

from __future__ import annotations

import torch


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype every path computes in: float32 for the half types, the input dtype otherwise."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def valid_mask(lengths: torch.Tensor | None, bsz: int, length: int, device: torch.device) -> torch.Tensor | None:
    """(B, T) bool, True at t < lengths[b]; None when every position is valid."""
    if lengths is None:
        return None
    return torch.arange(length, device=device)[None, :] < lengths.to(device)[:, None]


def naive_delta_product(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    beta: torch.Tensor,
    h0: torch.Tensor | None = None,
    lengths: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """q (B, T, H, dk), k (B, T, n_h, H, dk), v (B, T, n_h, H, dv), beta (B, T, n_h, H), h0 (B, H, dk, dv) or None
    → o (B, T, H, dv), S_T (B, H, dk, dv). Inputs are assumed validated (see :func:`delta_product`)."""
    bsz, length, heads, dk = q.shape
    n_h, dv = k.shape[2], v.shape[-1]
    out_dtype, dt = q.dtype, compute_dtype(q.dtype)
    q, k, v, beta = q.to(dt), k.to(dt), v.to(dt), beta.to(dt)
    S = q.new_zeros(bsz, heads, dk, dv) if h0 is None else h0.to(dt)
    valid = valid_mask(lengths, bsz, length, q.device)
    k_col = k.unsqueeze(-1)  # (B, T, n_h, H, dk, 1)
    k_row, kb = k_col.transpose(-1, -2), beta[..., None, None] * k_col
    v_row = v.unsqueeze(-2)  # (B, T, n_h, H, 1, dv)
    outs = []
    for t, (q_t, k_t, kb_t, v_t) in enumerate(zip(q.unbind(1), k_row.unbind(1), kb.unbind(1), v_row.unbind(1))):
        S_in = S
        for j in range(n_h):
            S = S + kb_t[:, j] @ (v_t[:, j] - k_t[:, j] @ S)  # S + β k (v − Sᵀk)ᵀ
        o_t = (q_t.unsqueeze(-2) @ S).squeeze(-2)
        if valid is not None:
            m = valid[:, t]
            S = torch.where(m[:, None, None, None], S, S_in)
            o_t = torch.where(m[:, None, None], o_t, torch.zeros_like(o_t))
        outs.append(o_t)
    o = torch.stack(outs, dim=1) if outs else q.new_zeros(bsz, 0, heads, dv)
    return o.to(out_dtype), S.to(out_dtype)
