"""Sequential references of the PD-SSM recurrence (Terzić et al. 2025, arXiv 2509.22284, eq. (3) with A(x) = P(x)D(x)):

    h_t = P_t D_t h_{t−1} + b_t,   (P_t D_t h)[i] = Σ_{j : idx_t[j] = i} diag_t[j] h[j],

P_t column one-hot (column j has its one in row idx_t[j]), D_t = diag(diag_t), one step at a time; autograd
differentiates them. :func:`naive_pd_scan` takes P as index arrays; :func:`naive_pd_st_scan` takes the column logits
M_t and builds the dense straight-through transition (P_t + S_t − sg(S_t)) D_t, S_t the column softmax of M_t:
the paper's surrogate gradient, written out as matrices. Every faster path is tested against them.
"""

from __future__ import annotations

import torch


def pd_apply(idx: torch.Tensor, diag: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """(P D) h for P given by ``idx`` (…, N) (column j → row idx[j]), D = diag(``diag``) (…, N), h (…, N)."""
    return torch.zeros_like(h).scatter_add(-1, idx, diag * h)


def naive_pd_scan(
    idx: torch.Tensor, diag: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None
) -> torch.Tensor:
    """idx (B, T, N) int64, diag and b (B, T, N), h0 (B, N) or None (zeros) → h (B, T, N)."""
    h = b.new_zeros(b.shape[0], b.shape[2]) if h0 is None else h0
    hs = []
    for i_t, d_t, b_t in zip(idx.unbind(1), diag.unbind(1), b.unbind(1)):
        h = pd_apply(i_t, d_t, h) + b_t
        hs.append(h)
    return torch.stack(hs, 1) if hs else b.new_zeros(b.shape)


def naive_pd_st_scan(
    logits: torch.Tensor, diag: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """logits M (B, T, N, N) real, diag and b (B, T, N), h0 (B, N) or None → (h (B, T, N), idx (B, T, N)), with
    idx_t[j] = argmax_i M_t[i, j] (column hardmax, first index on ties) and the dense straight-through transition
    Ã_t = (P_t + S_t − sg(S_t)) D_t, S_t = softmax(M_t) over each column: Ã_t = P_t D_t in value, and its
    derivative in M_t is that of S_t D_t."""
    idx = logits.argmax(-2)
    soft = torch.softmax(logits, dim=-2)
    hard = torch.zeros_like(logits).scatter_(-2, idx[..., None, :], 1.0)
    mats = (hard + soft - soft.detach()).to(diag.dtype) * diag[..., None, :]  # (B, T, N, N): column j times diag[j]
    h = b.new_zeros(b.shape[0], b.shape[2]) if h0 is None else h0
    hs = []
    for m_t, b_t in zip(mats.unbind(1), b.unbind(1)):
        h = (m_t @ h[..., None])[..., 0] + b_t
        hs.append(h)
    return (torch.stack(hs, 1) if hs else b.new_zeros(b.shape)), idx


def naive_pd_dict_st_scan(
    weights: torch.Tensor, dictionary: torch.Tensor, diag: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`naive_pd_st_scan` of the logits M_t = Σ_k weights_t[k] dictionary[k] (weights (B, T, K), dictionary
    (K, N, N)), formed whole."""
    return naive_pd_st_scan(torch.einsum("btk,kij->btij", weights, dictionary), diag, b, h0)
