"""Straight-through table scan in torch: exact table-scan forward, chunked adjoint-scan backward (README.md).

Forward: the hard tables σ_t = argmax(θ_t + g_t) of all steps at once, their composition by the existing exact table
scan (nn/ops/table_scan: the chunked numpy scan on the CPU, the Hillis–Steele torch scan elsewhere), one-hot states.
Backward (:class:`_STTableScan`): the adjoint λ_t = ḡ_t + λ_{t+1}∘σ_{t+1} (λ_{T−1} = ḡ_{T−1}) by a chunked reverse scan
of the affine maps λ ↦ c + λ∘σ (:func:`adjoint_scan`), then the gradient of the realized rows through the softmax
Jacobian, (1/τ)·s ⊙ (λ_t − ⟨s, λ_t⟩) with s = softmax(z_t[h_{t−1}, ·]/τ), scattered into a zero gradient.
"""

from __future__ import annotations

import math

import torch

from ..checks import length_mask
from ..table_scan import table_scan

#: Cost model (seconds) for the adjoint scan's chunk length: per vectorized torch step, per element.
_STEP_COST = 8e-6
_ELEM_COST = 2e-9


def compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """The dtype the backward computes in: float32 for the half types, the input dtype otherwise."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def hard_indices(sigma: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """Exact indices (N, T) of per-step tables ``sigma`` (N, T, d) from ``h0`` (N,), unmasked (the table scan)."""
    return table_scan(sigma, h0, impl="chunked" if sigma.device.type == "cpu" else "torch")


def previous_indices(idx: torch.Tensor, h0: torch.Tensor) -> torch.Tensor:
    """h_{t−1} for every step: (N, T) from the unmasked indices (N, T) and h0 (N,) — the realized rows."""
    return torch.cat([h0.long()[:, None], idx[:, :-1]], dim=1)


def to_sequences(x: torch.Tensor) -> torch.Tensor:
    """(B, T, H, …) → (B·H, T, …) contiguous: one sequence per (batch row, head)."""
    bsz, length, heads = x.shape[:3]
    return x.transpose(1, 2).reshape(bsz * heads, length, *x.shape[3:])


def from_sequences(x: torch.Tensor, bsz: int) -> torch.Tensor:
    """(B·H, T, …) → (B, T, H, …)."""
    n, length = x.shape[:2]
    return x.reshape(bsz, n // bsz, length, *x.shape[2:]).transpose(1, 2)


def one_hot_states(idx: torch.Tensor, d: int, dtype: torch.dtype, lengths: torch.Tensor | None) -> tuple:
    """(states (B, T, H, d) one-hot, masked indices (B, T, H)) from unmasked indices (B, T, H)."""
    states = torch.zeros(*idx.shape, d, dtype=dtype, device=idx.device).scatter_(-1, idx.unsqueeze(-1), 1.0)
    if lengths is None:
        return states, idx
    pad = length_mask(lengths, idx.shape[1], idx.device)
    return states.masked_fill(pad[..., None], 0), idx.masked_fill(pad, -1)


def realized_rows(prev: torch.Tensor, d: int) -> torch.Tensor:
    """Flat row numbers ((b·T + t)·H + h)·d + h_{t−1} of the realized rows in the (B·T·H·d, d) view of the logits."""
    return (torch.arange(prev.numel(), device=prev.device) * d + prev.reshape(-1)).contiguous()


def adjoint_scan(gbar: torch.Tensor, sigma: torch.Tensor, chunk: int | None = None) -> torch.Tensor:
    """λ (N, T, d) with λ_t = ḡ_t + λ_{t+1}∘σ_{t+1}, λ_{T−1} = ḡ_{T−1}, i.e. λ_t[k] = ḡ_t[k] + λ_{t+1}[σ_{t+1}[k]].

    ``gbar`` (N, T, d) floating, ``sigma`` (N, T, d) int64 tables. Chunked (README.md, "Adjoint scan"): with
    τ_t = σ_{t+1}, each chunk computes, for every step t in it, the local adjoint ℓ_t (zero adjoint entering the
    chunk from the right) and the composite Q_t = τ_{t_end} ∘ ⋯ ∘ τ_t, so that λ_t = ℓ_t + λ_in∘Q_t; the entering
    adjoints λ_in of the chunks are chained right to left; then every λ_t is one gather.
    """
    n, length, d = gbar.shape
    if length == 0:
        return gbar.clone()
    if chunk is None:
        chunk = _choose_chunk(n, length, d)
    chunk = max(1, min(int(chunk), length))
    n_c = -(-length // chunk)
    if n_c == 1:  # one chunk: the recurrence itself, vectorized over the sequences
        lam = torch.empty_like(gbar)
        lam[:, -1] = gbar[:, -1]
        for t in range(length - 2, -1, -1):
            torch.add(gbar[:, t], torch.gather(lam[:, t + 1], 1, sigma[:, t + 1]), out=lam[:, t])
        return lam
    padded = n_c * chunk
    # τ_t = σ_{t+1}; past the end (and at T−1) any valid table: the adjoint entering from there is zero
    tau = sigma.new_zeros(n, padded, d)
    tau[:, : length - 1] = sigma[:, 1:]
    g = gbar.new_zeros(n, padded, d)
    g[:, :length] = gbar
    # time-major inside chunks: (C, N, n_c, d), so that step s of every chunk is one contiguous slab
    g = g.view(n, n_c, chunk, d).permute(2, 0, 1, 3).contiguous()
    tau = tau.view(n, n_c, chunk, d).permute(2, 0, 1, 3).contiguous()
    local = torch.empty_like(g)
    comp = torch.empty_like(tau)
    local[chunk - 1] = g[chunk - 1]
    comp[chunk - 1] = tau[chunk - 1]
    for s in range(chunk - 2, -1, -1):  # ℓ_t = ḡ_t + ℓ_{t+1}∘τ_t,  Q_t = Q_{t+1}∘τ_t
        torch.add(g[s], torch.gather(local[s + 1], 2, tau[s]), out=local[s])
        torch.gather(comp[s + 1], 2, tau[s], out=comp[s])
    # entering adjoints, right to left: λ_in(n_c − 1) = 0, λ_in(c − 1) = ℓ_{cC} + λ_in(c)∘Q_{cC}
    enter = torch.empty(n, n_c, d, dtype=g.dtype, device=g.device)
    cur = g.new_zeros(n, d)
    for c in range(n_c - 1, -1, -1):
        enter[:, c] = cur
        cur = local[0, :, c] + torch.gather(cur, 1, comp[0, :, c])
    lam = local + torch.gather(enter.unsqueeze(0).expand(chunk, n, n_c, d), 3, comp)
    return lam.permute(1, 2, 0, 3).reshape(n, padded, d)[:, :length]


def _choose_chunk(n: int, length: int, d: int) -> int:
    """Chunk length minimizing (C + n_c)·step + 3·N·T·d·elem, or the plain loop's T·step + N·T·d·elem."""
    plain = length * _STEP_COST + n * length * d * _ELEM_COST
    c = max(1, round(math.sqrt(length)))
    chunked = (c + -(-length // c)) * _STEP_COST + 3 * n * length * d * _ELEM_COST
    return length if plain <= chunked else c


def realized_row_grad(z_rows: torch.Tensor, lam: torch.Tensor, tau: float) -> torch.Tensor:
    """d loss / d z_t[h_{t−1}, ·] = (1/τ)·s ⊙ (λ_t − ⟨s, λ_t⟩), s = softmax(z_t[h_{t−1}, ·]/τ) (softmax Jacobian)."""
    s = torch.softmax(z_rows / tau, dim=-1)
    return s * (lam - (s * lam).sum(-1, keepdim=True)) / tau


class _STTableScan(torch.autograd.Function):
    """Forward: exact hard-table scan. Backward: the straight-through gradient (adjoint scan + realized rows)."""

    @staticmethod
    def forward(ctx, logits, gumbel, h0, lengths, tau):  # noqa: D102
        bsz, length, heads, d, _ = logits.shape
        z = logits if gumbel is None else logits + gumbel
        sigma = to_sequences(z.argmax(dim=-1))  # (N, T, d): σ_t(k) = argmax_j z_t[k, j]
        h0s = h0.reshape(-1).long()
        idx = hard_indices(sigma, h0s)  # (N, T), unmasked
        prev = from_sequences(previous_indices(idx, h0s), bsz)  # (B, T, H): the realized rows h_{t−1}
        rows = realized_rows(prev, d)
        z_rows = z.reshape(-1, d).index_select(0, rows).view(bsz, length, heads, d)  # z_t[h_{t−1}, ·]
        ctx.save_for_backward(sigma, rows, z_rows, lengths)
        ctx.tau, ctx.has_gumbel = tau, gumbel is not None
        ctx.logits_shape, ctx.logits_dtype = logits.shape, logits.dtype
        states, out_idx = one_hot_states(from_sequences(idx, bsz), d, logits.dtype, lengths)
        ctx.mark_non_differentiable(out_idx)
        return states, out_idx

    @staticmethod
    def backward(ctx, grad_states, _grad_idx):  # noqa: D102
        sigma, rows, z_rows, lengths = ctx.saved_tensors
        bsz, length, heads, d, _ = ctx.logits_shape
        dt = compute_dtype(ctx.logits_dtype)
        gbar = grad_states.to(dt)
        if lengths is not None:  # the states there are constant zeros
            gbar = gbar.masked_fill(length_mask(lengths, length, gbar.device)[..., None], 0)
        lam = from_sequences(adjoint_scan(to_sequences(gbar), sigma), bsz)  # (B, T, H, d)
        row_grad = realized_row_grad(z_rows.to(dt), lam, ctx.tau).to(ctx.logits_dtype)
        grad = torch.zeros(ctx.logits_shape, dtype=ctx.logits_dtype, device=row_grad.device)
        grad.view(-1, d).index_copy_(0, rows, row_grad.reshape(-1, d))
        want_logits, want_gumbel = ctx.needs_input_grad[0], ctx.has_gumbel and ctx.needs_input_grad[1]
        grad_g = (grad.clone() if want_logits else grad) if want_gumbel else None
        return (grad if want_logits else None), grad_g, None, None, None


def torch_st_table_scan(
    logits: torch.Tensor,
    h0: torch.Tensor,
    *,
    tau: float = 0.5,
    gumbel: torch.Tensor | None = None,
    lengths: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Same contract as :func:`naive_st_table_scan` (inputs assumed validated)."""
    bsz, length, heads, d, _ = logits.shape
    if length == 0 or bsz == 0 or heads == 0:
        return logits.new_zeros(bsz, length, heads, d), torch.full(
            (bsz, length, heads), -1, dtype=torch.long, device=logits.device
        )
    return _STTableScan.apply(logits, gumbel, h0, lengths, float(tau))
