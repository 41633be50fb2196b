"""Triton straight-through table scan: a table kernel and the table scan's kernels forward, three adjoint kernels
backward (README.md). All run under the CPU interpreter (TRITON_INTERPRET=1).

Forward:
1. ``_hard_tables`` grid (⌈B·T·H·d / ROWS⌉,): ROWS rows of z = θ + g at a time, σ_t(k) = argmax_j z_t[k, j] (first
   index on ties), stored as uint8 (d ≤ 256) in sequence layout (B·H, T, d);
2. the exact table scan of nn/ops/table_scan/triton.py (compose / carry / replay) on those tables.
Backward, the adjoint λ_t = ḡ_t + λ_{t+1}∘σ_{t+1} chunked as in torch_scan.adjoint_scan:
3. ``_adj_compose`` grid (B·H, n_c): right to left inside a chunk, the local adjoint ℓ and the composite Q in
   registers (``tl.gather``), stored once per chunk;
4. ``_adj_carry``   grid (B·H,): the adjoints entering the chunks, right to left;
5. ``_adj_replay``  grid (B·H, n_c): λ_t again from the entering adjoint, and at each step the gradient of the
   realized row, (1/τ)·s ⊙ (λ_t − ⟨s, λ_t⟩) with s = softmax(z_t[h_{t−1}, ·]/τ), written into a zero gradient.
The backward computes in float32 (float64 for float64 logits). Imports are guarded: without triton,
:data:`HAS_TRITON` is False and the scan raises.
"""

from __future__ import annotations

import torch

from ..checks import length_mask
from ..table_scan.triton import HAS_TRITON, triton_available, triton_table_scan
from .torch_scan import compute_dtype, one_hot_states

if HAS_TRITON:  # pragma: no branch
    import triton
    import triton.language as tl

    @triton.jit
    def _hard_tables(
        z, g, sigma, n_rows, T, H, d, HAS_G: tl.constexpr, WIDE: tl.constexpr, ROWS: tl.constexpr, D_PAD: tl.constexpr
    ):
        pid = tl.program_id(0).to(tl.int64)
        r = pid * ROWS + tl.arange(0, ROWS).to(tl.int64)  # row ((b·T + t)·H + h)·d + k of the logits
        j = tl.arange(0, D_PAD)
        rmask = r < n_rows
        m = rmask[:, None] & (j[None, :] < d)
        acc = tl.float64 if WIDE else tl.float32
        x = tl.load(z + r[:, None] * d + j[None, :], mask=m, other=0.0).to(acc)
        if HAS_G:  # θ + g rounded to the storage dtype, as torch adds them
            x = (x + tl.load(g + r[:, None] * d + j[None, :], mask=m, other=0.0).to(acc)).to(z.dtype.element_ty)
        x = tl.where(m, x.to(acc), float("-inf"))  # padding lanes never win
        best = tl.argmax(x, axis=1, tie_break_left=True)
        k = r % d
        q = r // d
        h = q % H
        q = q // H
        t = q % T
        b = q // T
        tl.store(sigma + ((b * H + h) * T + t) * d + k, best.to(tl.uint8), mask=rmask)

    @triton.jit
    def _adj_compose(gbar, sigma, loc, comp, T, H, n_c, d, CHUNK: tl.constexpr, D_PAD: tl.constexpr):
        n = tl.program_id(0).to(tl.int64)
        c = tl.program_id(1).to(tl.int64)
        b = n // H
        h = n % H
        offs = tl.arange(0, D_PAD)
        lane = offs < d
        lam = tl.zeros([D_PAD], dtype=loc.dtype.element_ty)
        cur = offs
        for i in range(CHUNK):
            t = c * CHUNK + (CHUNK - 1 - i)
            valid = t < T
            tc = tl.minimum(t, T - 1)
            g_t = tl.load(gbar + ((b * T + tc) * H + h) * d + offs, mask=lane, other=0.0)
            nxt = tl.load(sigma + (n * T + tl.minimum(tc + 1, T - 1)) * d + offs, mask=lane, other=0).to(tl.int32)
            # ℓ_t = ḡ_t + ℓ_{t+1}∘τ_t and Q_t = Q_{t+1}∘τ_t with τ_t = σ_{t+1}; past the end both stay put. At
            # t = T − 1 any table will do (σ_{T−1} is read): the adjoint entering the last chunk is zero
            lam = tl.where(valid, g_t + tl.gather(lam, nxt, 0), lam)
            cur = tl.where(valid, tl.gather(cur, nxt, 0), cur)
        tl.store(loc + (n * n_c + c) * d + offs, lam, mask=lane)
        tl.store(comp + (n * n_c + c) * d + offs, cur.to(tl.int32), mask=lane)

    @triton.jit
    def _adj_carry(loc, comp, enter, n_c, d, D_PAD: tl.constexpr):
        n = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, D_PAD)
        lane = offs < d
        cur = tl.zeros([D_PAD], dtype=loc.dtype.element_ty)
        for i in range(n_c):
            c = n_c - 1 - i
            tl.store(enter + (n * n_c + c) * d + offs, cur, mask=lane)
            q = tl.load(comp + (n * n_c + c) * d + offs, mask=lane, other=0)
            cur = tl.load(loc + (n * n_c + c) * d + offs, mask=lane, other=0.0) + tl.gather(cur, q, 0)

    @triton.jit
    def _adj_replay(
        gbar,
        sigma,
        enter,
        logits,
        g,
        h0,
        idx,
        grad,
        inv_tau,
        T,
        H,
        n_c,
        d,
        HAS_G: tl.constexpr,
        CHUNK: tl.constexpr,
        D_PAD: tl.constexpr,
    ):
        n = tl.program_id(0).to(tl.int64)
        c = tl.program_id(1).to(tl.int64)
        b = n // H
        h = n % H
        offs = tl.arange(0, D_PAD)
        lane = offs < d
        lam = tl.load(enter + (n * n_c + c) * d + offs, mask=lane, other=0.0)
        start = tl.load(h0 + n).to(tl.int64)
        for i in range(CHUNK):
            t = c * CHUNK + (CHUNK - 1 - i)
            valid = t < T
            tc = tl.minimum(t, T - 1)
            g_t = tl.load(gbar + ((b * T + tc) * H + h) * d + offs, mask=lane, other=0.0)
            nxt = tl.load(sigma + (n * T + tl.minimum(tc + 1, T - 1)) * d + offs, mask=lane, other=0).to(tl.int32)
            lam = tl.where(valid, g_t + tl.gather(lam, nxt, 0), lam)  # λ_t = ḡ_t + λ_{t+1}∘σ_{t+1}
            prev = tl.load(idx + n * T + tl.maximum(tc - 1, 0)).to(tl.int64)
            prev = tl.where(tc == 0, start, prev)  # the realized row h_{t−1}
            row = ((b * T + tc) * H + h) * d * d + prev * d + offs
            x = tl.load(logits + row, mask=lane, other=0.0).to(lam.dtype)
            if HAS_G:  # z = θ + g rounded to the storage dtype, as in the forward
                x = (x + tl.load(g + row, mask=lane, other=0.0).to(lam.dtype)).to(logits.dtype.element_ty)
            x = tl.where(lane, x.to(lam.dtype) * inv_tau, float("-inf"))
            e = tl.where(lane, tl.exp(x - tl.max(x, 0)), 0.0)
            s = e / tl.sum(e, 0)
            mean = tl.sum(tl.where(lane, s * lam, 0.0), 0)
            out = s * (lam - mean) * inv_tau
            tl.store(grad + row, out.to(grad.dtype.element_ty), mask=offs < tl.where(valid, d, 0))  # lane and t < T


def hard_tables(logits: torch.Tensor, gumbel: torch.Tensor | None) -> torch.Tensor:
    """uint8 tables (B·H, T, d) of argmax(θ + g) (the ``_hard_tables`` kernel)."""
    bsz, length, heads, d, _ = logits.shape
    sigma = torch.empty(bsz * heads, length, d, dtype=torch.uint8, device=logits.device)
    n_rows = bsz * length * heads * d
    d_pad = max(2, triton.next_power_of_2(d))
    rows = max(1, min(128, 4096 // d_pad))
    g = gumbel if gumbel is not None else logits
    _hard_tables[(triton.cdiv(n_rows, rows),)](
        logits, g, sigma, n_rows, length, heads, d, HAS_G=gumbel is not None, WIDE=logits.dtype == torch.float64,
        ROWS=rows, D_PAD=d_pad,
    )  # fmt: skip
    return sigma


def _warps(d_pad: int) -> int:
    return max(1, min(8, d_pad // 32))


class _TritonSTTableScan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, gumbel, h0, lengths, tau, chunk):  # noqa: D102
        bsz, length, heads, d, _ = logits.shape
        logits = logits.contiguous()
        gumbel = gumbel.contiguous() if gumbel is not None else None
        sigma = hard_tables(logits, gumbel)
        h0s = h0.reshape(-1).long().contiguous()
        idx = triton_table_scan(sigma.view(-1, d), None, h0s, chunk=chunk, direct_shape=(bsz * heads, length))
        ctx.save_for_backward(logits, gumbel, sigma, h0s, idx, lengths)
        ctx.tau, ctx.chunk = tau, chunk
        states, out_idx = one_hot_states(idx.view(bsz, heads, length).transpose(1, 2), d, logits.dtype, lengths)
        ctx.mark_non_differentiable(out_idx)
        return states, out_idx

    @staticmethod
    def backward(ctx, grad_states, _grad_idx):  # noqa: D102
        logits, gumbel, sigma, h0s, idx, lengths = ctx.saved_tensors
        bsz, length, heads, d, _ = logits.shape
        n = bsz * heads
        gbar = grad_states.to(compute_dtype(logits.dtype))
        if lengths is not None:  # the states there are constant zeros
            gbar = gbar.masked_fill(length_mask(lengths, length, gbar.device)[..., None], 0)
        gbar = gbar.contiguous()
        chunk = max(1, min(ctx.chunk, length))
        n_c = -(-length // chunk)
        d_pad = max(2, triton.next_power_of_2(d))
        loc = torch.empty(n, n_c, d, dtype=gbar.dtype, device=gbar.device)
        comp = torch.empty(n, n_c, d, dtype=torch.int32, device=gbar.device)
        enter = torch.empty_like(loc)
        grad = torch.zeros_like(logits)
        w = _warps(d_pad)
        _adj_compose[(n, n_c)](gbar, sigma, loc, comp, length, heads, n_c, d, CHUNK=chunk, D_PAD=d_pad, num_warps=w)
        _adj_carry[(n,)](loc, comp, enter, n_c, d, D_PAD=d_pad, num_warps=w)
        g = gumbel if gumbel is not None else logits
        _adj_replay[(n, n_c)](
            gbar, sigma, enter, logits, g, h0s, idx, grad, 1.0 / ctx.tau, length, heads, n_c, d,
            HAS_G=gumbel is not None, CHUNK=chunk, D_PAD=d_pad, num_warps=w,
        )  # fmt: skip
        want_logits = ctx.needs_input_grad[0]
        want_gumbel = gumbel is not None and ctx.needs_input_grad[1]
        grad_g = (grad.clone() if want_logits else grad) if want_gumbel else None
        return (grad if want_logits else None), grad_g, None, None, None, None


def triton_st_table_scan(
    logits: torch.Tensor,
    h0: torch.Tensor,
    *,
    tau: float = 0.5,
    gumbel: torch.Tensor | None = None,
    lengths: torch.Tensor | None = None,
    chunk: int = 64,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Same contract as :func:`naive_st_table_scan` (inputs assumed validated; d ≤ 256); ``chunk``: the chunk
    length of the forward table scan and of the adjoint scan."""
    if not HAS_TRITON:
        raise RuntimeError("triton is not installed")
    bsz, length, heads, d, _ = logits.shape
    if length == 0 or bsz == 0 or heads == 0:
        return logits.new_zeros(bsz, length, heads, d), torch.full(
            (bsz, length, heads), -1, dtype=torch.long, device=logits.device
        )
    return _TritonSTTableScan.apply(logits, gumbel, h0, lengths, float(tau), int(chunk))


__all__ = ["HAS_TRITON", "hard_tables", "triton_available", "triton_st_table_scan"]
