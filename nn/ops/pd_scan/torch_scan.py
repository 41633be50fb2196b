"""The PD-SSM scan in torch ops: the transitions A_t = P_t D_t compose inside their class,

    (P₂D₂)(P₁D₁) = P D  with  idx = idx₂[idx₁],  diag = diag₂[idx₁] ⊙ diag₁,

so the affine maps h ↦ A_t h + b_t compose associatively in O(N) each, and the states come from a chunked scan:
prefixes within chunks of about √T steps (all chunks at once), the state entering each chunk, then every state
at once — about 2√T sequential steps of gathers and scatter-adds over the whole batch (autograd differentiates
it). :func:`torch_pd_st_scan` adds the paper's surrogate gradient for the column hardmax as a zero-valued drive
(S_t − sg S_t) sg(D_t h_{t−1}) (README.md), so the dictionary's gradient equals the dense straight-through one;
:func:`torch_pd_dict_st_scan` does the same for logits that are a mixture of a dictionary, one time block at a time.
"""

from __future__ import annotations

import math

import torch
from torch.utils.checkpoint import checkpoint

from .naive import pd_apply

#: logits B·C·N² of one time block in :func:`torch_pd_dict_st_scan`
LOGIT_BLOCK = 1 << 24


def _prefixes(idx: torch.Tensor, diag: torch.Tensor, b: torch.Tensor):
    """Within-row prefixes of the affine PD maps, step by step over the second axis (all rows at once): the
    composition of steps 0..s as (idx, diag, b), each (R, C, N)."""
    rows, steps, n = b.shape
    p_idx = torch.arange(n, device=b.device).expand(rows, n)
    p_diag = torch.ones(rows, n, dtype=diag.dtype, device=b.device)
    p_b = torch.zeros(rows, n, dtype=b.dtype, device=b.device)
    out_i, out_d, out_b = [], [], []
    for s in range(steps):
        i_s, d_s = idx[:, s], diag[:, s]
        p_diag = d_s.gather(-1, p_idx) * p_diag
        p_idx = i_s.gather(-1, p_idx)
        p_b = pd_apply(i_s, d_s, p_b) + b[:, s]
        out_i.append(p_idx)
        out_d.append(p_diag)
        out_b.append(p_b)
    return torch.stack(out_i, 1), torch.stack(out_d, 1), torch.stack(out_b, 1)


def torch_pd_scan(
    idx: torch.Tensor, diag: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None
) -> torch.Tensor:
    """idx (B, T, N) int64, diag and b (B, T, N), h0 (B, N) or None (zeros) → h (B, T, N).

    Chunked scan: the time axis in n_c chunks of C ≈ √T steps; (1) the prefixes of every chunk, all chunks at once
    (C steps); (2) the state entering each chunk, chunk by chunk (n_c steps); (3) h_t = prefix_t(h_in) for every
    step at once. About 2√T sequential steps and O(T·N) work; autograd differentiates it."""
    bsz, length, n = b.shape
    if length == 0:
        return b.clone()
    chunk = max(1, math.isqrt(length - 1) + 1)
    n_chunks = -(-length // chunk)
    pad = n_chunks * chunk - length
    if pad:  # identity steps: P = I, D = 1, b = 0
        idx = torch.cat([idx, torch.arange(n, device=idx.device).expand(bsz, pad, n)], 1)
        diag = torch.cat([diag, torch.ones(bsz, pad, n, dtype=diag.dtype, device=diag.device)], 1)
        b = torch.cat([b, torch.zeros(bsz, pad, n, dtype=b.dtype, device=b.device)], 1)
    p_idx, p_diag, p_b = _prefixes(*(t.reshape(bsz * n_chunks, chunk, n) for t in (idx, diag, b)))
    p_idx, p_diag, p_b = (t.reshape(bsz, n_chunks, chunk, n) for t in (p_idx, p_diag, p_b))
    h = torch.zeros(bsz, n, dtype=b.dtype, device=b.device) if h0 is None else h0
    entering = []
    for c in range(n_chunks):
        entering.append(h)
        h = pd_apply(p_idx[:, c, -1], p_diag[:, c, -1], h) + p_b[:, c, -1]
    h_in = torch.stack(entering, 1)[:, :, None].expand(bsz, n_chunks, chunk, n)
    out = pd_apply(p_idx, p_diag, h_in) + p_b
    return out.reshape(bsz, n_chunks * chunk, n)[:, :length]


def _previous_states(idx: torch.Tensor, diag: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None) -> torch.Tensor:
    """sg(D_t h_{t−1}) of the hard recurrence (h_0 first), without a gradient."""
    with torch.no_grad():
        h = torch_pd_scan(idx, diag, b, h0)
        start = h.new_zeros(h.shape[0], 1, h.shape[2]) if h0 is None else h0[:, None]
        return diag * torch.cat([start, h[:, :-1]], 1)


def surrogate_drive(logits: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """(S − sg S) v with S the column softmax of ``logits`` (…, N, N) and v (…, N): zero in value, with the
    derivative of S v in the logits."""
    soft = torch.softmax(logits, dim=-2)
    delta = soft - soft.detach()
    if v.is_complex():
        return torch.complex((delta @ v.real[..., None])[..., 0], (delta @ v.imag[..., None])[..., 0])
    return (delta @ v[..., None])[..., 0]


def torch_pd_st_scan(
    logits: torch.Tensor, diag: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The straight-through PD-SSM scan of :func:`naive_pd_st_scan` without N × N matrices in the recurrence:
    the hard scan over idx, plus, when a gradient is wanted, the surrogate drive whose value is zero."""
    with torch.no_grad():
        idx = logits.argmax(-2)
    if not (torch.is_grad_enabled() and logits.requires_grad):
        return torch_pd_scan(idx, diag, b, h0), idx
    surrogate = surrogate_drive(logits, _previous_states(idx, diag, b, h0))
    return torch_pd_scan(idx, diag, b + surrogate.to(b.dtype), h0), idx


def _mixture(weights: torch.Tensor, dictionary: torch.Tensor) -> torch.Tensor:
    return torch.einsum("btk,kij->btij", weights, dictionary)


def _dict_surrogate(weights: torch.Tensor, dictionary: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return surrogate_drive(_mixture(weights, dictionary), v)


def torch_pd_dict_st_scan(
    weights: torch.Tensor,
    dictionary: torch.Tensor,
    diag: torch.Tensor,
    b: torch.Tensor,
    h0: torch.Tensor | None = None,
    block: int = LOGIT_BLOCK,
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`torch_pd_st_scan` of the logits M_t = Σ_k weights_t[k] dictionary[k] without holding them: the
    column argmax is taken ``block`` logits at a time, and the surrogate drive is computed per time block under
    activation checkpointing (the block's logits are recomputed in the backward pass), so memory stays at one
    block of B·C·N² logits."""
    bsz, length, _ = weights.shape
    n = dictionary.shape[-1]
    step = max(1, block // max(1, bsz * n * n))
    spans = [(s, min(s + step, length)) for s in range(0, length, step)]
    with torch.no_grad():  # Mᵀ: the column argmax as a contiguous row argmax
        flipped = dictionary.transpose(-1, -2)
        parts = [_mixture(weights[:, s:e], flipped).argmax(-1) for s, e in spans]
        idx = torch.cat(parts, 1) if parts else b.new_zeros(b.shape, dtype=torch.long)
    if not (torch.is_grad_enabled() and (weights.requires_grad or dictionary.requires_grad)):
        return torch_pd_scan(idx, diag, b, h0), idx
    v = _previous_states(idx, diag, b, h0)
    drives = [
        checkpoint(_dict_surrogate, weights[:, s:e], dictionary, v[:, s:e], use_reentrant=False) for s, e in spans
    ]
    return torch_pd_scan(idx, diag, b + torch.cat(drives, 1).to(b.dtype), h0), idx
