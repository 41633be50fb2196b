"""The PD-SSM scan in torch ops: the transitions A_t = P_t D_t compose inside their class,

    (P₂D₂)(P₁D₁) = P D  with  idx = idx₂[idx₁],  diag = diag₂[idx₁] ⊙ diag₁,

so the affine maps h ↦ A_t h + b_t compose associatively in O(N) each, and the states come from a Hillis–Steele
prefix scan of depth ⌈log₂ T⌉ (every step a gather and a scatter-add over the whole batch; autograd differentiates
it). :func:`torch_pd_st_scan` adds the paper's surrogate gradient for the column hardmax as a zero-valued drive
(S_t − sg S_t) sg(D_t h_{t−1}) (README.md), so the dictionary's gradient equals the dense straight-through one.
"""

from __future__ import annotations

import torch

from .naive import pd_apply


def torch_pd_scan(
    idx: torch.Tensor, diag: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None
) -> torch.Tensor:
    """idx (B, T, N) int64, diag and b (B, T, N), h0 (B, N) or None (zeros) → h (B, T, N)."""
    length = b.shape[1]
    shift = 1
    while shift < length:
        # compose step t with the prefix ending at t − shift (earlier step on the right of the product)
        i_l, d_l, b_l = idx[:, :-shift], diag[:, :-shift], b[:, :-shift]
        i_r, d_r, b_r = idx[:, shift:], diag[:, shift:], b[:, shift:]
        idx = torch.cat([idx[:, :shift], i_r.gather(-1, i_l)], 1)
        diag = torch.cat([diag[:, :shift], d_r.gather(-1, i_l) * d_l], 1)
        b = torch.cat([b[:, :shift], pd_apply(i_r, d_r, b_l) + b_r], 1)
        shift *= 2
    if h0 is None:
        return b
    return pd_apply(idx, diag, h0[:, None].expand_as(b)) + b


def torch_pd_st_scan(
    logits: torch.Tensor, diag: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The straight-through PD-SSM scan of :func:`naive_pd_st_scan` without N × N matrices in the recurrence:
    the hard scan over idx, plus, when a gradient is wanted, the surrogate drive whose value is zero."""
    with torch.no_grad():
        idx = logits.argmax(-2)
    if not (torch.is_grad_enabled() and logits.requires_grad):
        return torch_pd_scan(idx, diag, b, h0), idx
    with torch.no_grad():  # h_{t−1} of the hard recurrence, h_0 first
        h = torch_pd_scan(idx, diag, b, h0)
        start = h.new_zeros(h.shape[0], 1, h.shape[2]) if h0 is None else h0[:, None]
        v = diag * torch.cat([start, h[:, :-1]], 1)  # sg(D_t h_{t−1})
    soft = torch.softmax(logits, dim=-2)
    delta = soft - soft.detach()  # value 0, derivative that of the column softmax
    if v.is_complex():
        surrogate = torch.complex((delta @ v.real[..., None])[..., 0], (delta @ v.imag[..., None])[..., 0])
    else:
        surrogate = (delta @ v[..., None])[..., 0]
    return torch_pd_scan(idx, diag, b + surrogate.to(b.dtype), h0), idx
