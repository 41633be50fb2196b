"""DeltaProduct as a fused recurrent Triton kernel, forward and backward (README.md, "Triton kernels").

One program per (value block, batch·head) keeps its (dk, BV) slice of the state S in registers and walks the
T·n_h delta steps, reading q, k, v, β once and writing o once: the columns of S evolve independently, so the value
dimension splits across programs. At the state-tracking widths (dk, dv ≤ 128) the state fits in registers and the
kernel is bound by one pass over the inputs, which is why a recurrent kernel (not the chunked form) is the choice.

Backward: the adjoint G = ∂L/∂S runs backwards, G ← (I − β k kᵀ) G, then G += q doᵀ at each read-out. Every step
needs the state before it, and (I − β k kᵀ) is singular at β = 1, so the state is never recovered by inverting a
step. The forward pass stores S at the start of every chunk of CT tokens; the backward pass, chunk by chunk from the
last, recomputes the chunk's states into a per-program scratch buffer and then walks them in reverse. The gradients
of q, k and β sum over the value dimension: each value block writes its partial sum, added up afterwards.
Imports are guarded: without triton, :data:`HAS_TRITON` is False and calling the op raises.
"""

from __future__ import annotations

import os

import torch

try:  # pragma: no cover - exercised where triton is installed
    import triton
    import triton.language as tl

    HAS_TRITON = True
except ImportError:  # pragma: no cover
    HAS_TRITON = False

#: largest key or value width the kernels take (the state tile lives in registers)
MAX_WIDTH = 256
#: delta steps per checkpoint chunk (rounded down to a multiple of n_h)
CHECKPOINT_STEPS = 32

if HAS_TRITON:

    @triton.jit
    def _fwd(
        q,
        k,
        v,
        beta,
        h0,
        lengths,
        o,
        ht,
        ckpt,
        T,
        H,
        NC,
        NH: tl.constexpr,
        DK: tl.constexpr,
        DV: tl.constexpr,
        BK: tl.constexpr,
        BV: tl.constexpr,
        CT: tl.constexpr,
        HAS_H0: tl.constexpr,
        HAS_LEN: tl.constexpr,
        SAVE: tl.constexpr,
        ACC: tl.constexpr,
    ):
        iv = tl.program_id(0)
        bh = tl.program_id(1).to(tl.int64)
        b = bh // H
        h = bh % H
        ok = tl.arange(0, BK)
        ov = iv * BV + tl.arange(0, BV)
        mk = ok < DK
        mv = ov < DV
        m2 = mk[:, None] & mv[None, :]
        s_off = ok[:, None] * DV + ov[None, :]
        if HAS_H0:
            S = tl.load(h0 + bh * DK * DV + s_off, mask=m2, other=0).to(ACC)
        else:
            S = tl.zeros([BK, BV], dtype=ACC)
        L = T
        if HAS_LEN:
            L = tl.load(lengths + b).to(tl.int32)
        for c in range(0, tl.cdiv(L, CT)):
            if SAVE:
                tl.store(ckpt + (bh * NC + c) * DK * DV + s_off, S, mask=m2)
            for t in range(c * CT, tl.minimum(c * CT + CT, L)):
                tok = b * T + t
                for j in tl.static_range(NH):
                    row = (tok * NH + j) * H + h
                    kj = tl.load(k + row * DK + ok, mask=mk, other=0).to(ACC)
                    vj = tl.load(v + row * DV + ov, mask=mv, other=0).to(ACC)
                    bj = tl.load(beta + row).to(ACC)
                    err = vj - tl.sum(kj[:, None] * S, 0)  # v − Sᵀk
                    S += (bj * kj)[:, None] * err[None, :]
                qt = tl.load(q + (tok * H + h) * DK + ok, mask=mk, other=0).to(ACC)
                ot = tl.sum(qt[:, None] * S, 0)
                tl.store(o + (tok * H + h) * DV + ov, ot.to(o.dtype.element_ty), mask=mv)
        tl.store(ht + bh * DK * DV + s_off, S.to(ht.dtype.element_ty), mask=m2)

    @triton.jit
    def _bwd(
        q,
        k,
        v,
        beta,
        lengths,
        ckpt,
        do,
        dht,
        dq,
        dk,
        dv,
        dbeta,
        dh0,
        scratch,
        T,
        H,
        B,
        NC,
        NH: tl.constexpr,
        DK: tl.constexpr,
        DV: tl.constexpr,
        BK: tl.constexpr,
        BV: tl.constexpr,
        CT: tl.constexpr,
        HAS_DHT: tl.constexpr,
        HAS_LEN: tl.constexpr,
        ACC: tl.constexpr,
    ):
        iv = tl.program_id(0)
        bh = tl.program_id(1).to(tl.int64)
        b = bh // H
        h = bh % H
        ok = tl.arange(0, BK)
        ov = iv * BV + tl.arange(0, BV)
        mk = ok < DK
        mv = ov < DV
        m2 = mk[:, None] & mv[None, :]
        s_off = ok[:, None] * DV + ov[None, :]
        # scratch: CT·NH + 1 states (BK, BV) of this program, the chunk's entry state first
        tile = ok[:, None] * BV + tl.arange(0, BV)[None, :]
        base = scratch + (bh * tl.num_programs(0) + iv) * (CT * NH + 1) * BK * BV
        part = iv.to(tl.int64) * B * T  # this value block's slice of the partial sums (dq, dk, dβ)
        if HAS_DHT:
            G = tl.load(dht + bh * DK * DV + s_off, mask=m2, other=0).to(ACC)
        else:
            G = tl.zeros([BK, BV], dtype=ACC)
        L = T
        if HAS_LEN:
            L = tl.load(lengths + b).to(tl.int32)
        n_c = tl.cdiv(L, CT)
        for ci in range(0, n_c):
            c = n_c - 1 - ci
            t0 = c * CT
            t1 = tl.minimum(t0 + CT, L)
            S = tl.load(ckpt + (bh * NC + c) * DK * DV + s_off, mask=m2, other=0).to(ACC)
            tl.store(base + tile, S)
            for t in range(t0, t1):  # recompute the chunk's states
                tok = b * T + t
                for j in tl.static_range(NH):
                    row = (tok * NH + j) * H + h
                    kj = tl.load(k + row * DK + ok, mask=mk, other=0).to(ACC)
                    vj = tl.load(v + row * DV + ov, mask=mv, other=0).to(ACC)
                    bj = tl.load(beta + row).to(ACC)
                    S += (bj * kj)[:, None] * (vj - tl.sum(kj[:, None] * S, 0))[None, :]
                    tl.store(base + ((t - t0) * NH + j + 1) * BK * BV + tile, S)
            tl.debug_barrier()
            for ti in range(0, t1 - t0):  # walk them in reverse
                t = t1 - 1 - ti
                tok = b * T + t
                S = tl.load(base + ((t - t0 + 1) * NH) * BK * BV + tile)
                dot = tl.load(do + (tok * H + h) * DV + ov, mask=mv, other=0).to(ACC)
                qt = tl.load(q + (tok * H + h) * DK + ok, mask=mk, other=0).to(ACC)
                tl.store(dq + ((part + tok) * H + h) * DK + ok, tl.sum(S * dot[None, :], 1), mask=mk)
                G += qt[:, None] * dot[None, :]
                for jj in tl.static_range(NH):
                    j = NH - 1 - jj
                    row = (tok * NH + j) * H + h
                    Sp = tl.load(base + ((t - t0) * NH + j) * BK * BV + tile)  # the state before this step
                    kj = tl.load(k + row * DK + ok, mask=mk, other=0).to(ACC)
                    vj = tl.load(v + row * DV + ov, mask=mv, other=0).to(ACC)
                    bj = tl.load(beta + row).to(ACC)
                    err = vj - tl.sum(kj[:, None] * Sp, 0)
                    gk = tl.sum(kj[:, None] * G, 0)  # Gᵀk
                    tl.store(dv + row * DV + ov, bj * gk, mask=mv)
                    tl.store(dbeta + part * NH * H + row, tl.sum(gk * err))
                    dkj = bj * (tl.sum(G * err[None, :], 1) - tl.sum(Sp * gk[None, :], 1))
                    tl.store(dk + (part * NH * H + row) * DK + ok, dkj, mask=mk)
                    G -= (bj * kj)[:, None] * gk[None, :]
            tl.debug_barrier()
        tl.store(dh0 + bh * DK * DV + s_off, G, mask=m2)


def triton_available(device: torch.device | str | None = None) -> bool:
    """Whether the kernels can run for tensors on ``device`` (CUDA, or CPU under TRITON_INTERPRET=1)."""
    if not HAS_TRITON:
        return False
    if device is not None and torch.device(device).type == "cuda":
        return True
    return os.environ.get("TRITON_INTERPRET") == "1"


def _blocks(dk: int, dv: int, n_h: int) -> tuple[int, int, int]:
    """(BK, BV, CT): the padded key width, the value block and the tokens per checkpoint."""
    bk = triton.next_power_of_2(dk)
    bv = min(triton.next_power_of_2(dv), max(8, 4096 // bk), 64)
    return bk, bv, max(1, CHECKPOINT_STEPS // n_h)


def _warps(bk: int, bv: int, backward: bool = False) -> int:
    """One warp for small tiles (the per-step reductions stay inside a warp); up to four for a (128, 32) tile
    forward and eight backward (it holds the state, the state before the step and the adjoint)."""
    return max(1, min(8, bk * bv // 512)) if backward else max(1, min(4, bk * bv // 1024))


def _acc(dtype: torch.dtype):
    return tl.float64 if dtype == torch.float64 else tl.float32


def _forward(q, k, v, beta, h0, lengths, save: bool):
    bsz, length, heads, dk = q.shape
    n_h, dv = k.shape[2], v.shape[-1]
    bk, bv, ct = _blocks(dk, dv, n_h)
    acc_dtype = torch.float64 if q.dtype == torch.float64 else torch.float32
    n_c = max(1, -(-length // ct))
    o = torch.zeros(bsz, length, heads, dv, dtype=q.dtype, device=q.device)
    ht = torch.empty(bsz, heads, dk, dv, dtype=q.dtype, device=q.device)
    ckpt = torch.empty(bsz * heads * n_c * dk * dv if save else 1, dtype=acc_dtype, device=q.device)
    grid = (triton.cdiv(dv, bv), bsz * heads)
    _fwd[grid](
        q, k, v, beta, h0 if h0 is not None else q, lengths if lengths is not None else q, o, ht, ckpt,
        length, heads, n_c, NH=n_h, DK=dk, DV=dv, BK=bk, BV=bv, CT=ct,
        HAS_H0=h0 is not None, HAS_LEN=lengths is not None, SAVE=save, ACC=_acc(q.dtype), num_warps=_warps(bk, bv),
    )  # fmt: skip
    return o, ht, ckpt


class _FusedRecurrent(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, beta, h0, lengths):
        save = any(ctx.needs_input_grad[:5])
        o, ht, ckpt = _forward(q, k, v, beta, h0, lengths, save)
        ctx.save_for_backward(q, k, v, beta, lengths, ckpt)
        ctx.has_h0 = h0 is not None
        return o, ht

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, do, dht):
        q, k, v, beta, lengths, ckpt = ctx.saved_tensors
        bsz, length, heads, dk = q.shape
        n_h, dv = k.shape[2], v.shape[-1]
        bk, bv, ct = _blocks(dk, dv, n_h)
        n_v = triton.cdiv(dv, bv)
        n_c = max(1, -(-length // ct))
        acc_dtype = ckpt.dtype
        zeros = lambda *shape: torch.zeros(*shape, dtype=acc_dtype, device=q.device)  # noqa: E731
        dq, dk_, dbeta = zeros(n_v, *q.shape), zeros(n_v, *k.shape), zeros(n_v, *beta.shape)
        dv_, dh0 = zeros(*v.shape), zeros(bsz, heads, dk, dv)
        scratch = torch.empty(bsz * heads * n_v * (ct * n_h + 1) * bk * bv, dtype=acc_dtype, device=q.device)
        do = do.contiguous()
        _bwd[(n_v, bsz * heads)](
            q, k, v, beta, lengths if lengths is not None else q, ckpt, do,
            dht.contiguous() if dht is not None else do, dq, dk_, dv_, dbeta, dh0, scratch,
            length, heads, bsz, n_c, NH=n_h, DK=dk, DV=dv, BK=bk, BV=bv, CT=ct,
            HAS_DHT=dht is not None, HAS_LEN=lengths is not None, ACC=_acc(q.dtype), num_warps=_warps(bk, bv, True),
        )  # fmt: skip
        dt = q.dtype
        return (
            dq.sum(0).to(dt),
            dk_.sum(0).to(dt),
            dv_.to(dt),
            dbeta.sum(0).to(dt),
            dh0.to(dt) if ctx.has_h0 else None,
            None,
        )


def triton_delta_product(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    beta: torch.Tensor,
    h0: torch.Tensor | None = None,
    lengths: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Same contract as :func:`naive_delta_product`, by the fused recurrent kernels (CUDA, or the interpreter)."""
    if not HAS_TRITON:
        raise RuntimeError("delta_product: impl='triton' needs triton, which is not installed")
    if not triton_available(q.device):
        raise RuntimeError("delta_product: impl='triton' needs CUDA tensors (or TRITON_INTERPRET=1 on the CPU)")
    q, k, v, beta = (x.contiguous() for x in (q, k, v, beta))
    h0 = h0.contiguous() if h0 is not None else None
    if lengths is not None:
        lengths = lengths.to(device=q.device, dtype=torch.int32).contiguous()
    return _FusedRecurrent.apply(q, k, v, beta, h0, lengths)
