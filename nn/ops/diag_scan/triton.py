"""Triton diagonal scan: chunked forward and backward kernels (README.md, "Triton").

Three kernels, each a loop over the steps of one chunk inside one program of BLOCK_D lanes, runnable on the CPU
interpreter (TRITON_INTERPRET=1):

1. ``_chunk_totals`` grid (B, D/BLOCK_D, n_c): the chunk's map from a zero state, (P_k, c_k);
2. ``_carry``        grid (B, D/BLOCK_D):      h_in[0] = h0, h_in[k+1] = P_k ⊙ h_in[k] + c_k;
3. ``_replay``       grid (B, D/BLOCK_D, n_c): h ← α_t ⊙ h + β_t from h_in[k], storing every state.

With ADJOINT the same kernels run the backward's reverse scan λ_t = g_t + conj(a_{t+1}) ⊙ λ_{t+1} (steps taken
from t = T−1 down, the coefficient read one step ahead, g read as zero at t ≥ lengths[b]) and the replay also
writes ∂L/∂a_t = λ_t ⊙ conj(h_{t−1}) from the saved states. Complex tensors are read as interleaved (re, im) pairs
(``torch.view_as_real``); float16, bfloat16 and float32 are computed in float32, float64 in float64.
With one chunk (enough lanes), kernels 1 and 2 are skipped. Imports are guarded: without triton, :data:`HAS_TRITON`
is False and the scan raises.
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

#: lanes per program (two per thread of NUM_WARPS warps), and the number of programs to aim for on a GPU when choosing
#: the chunk length
BLOCK_D = 64
NUM_WARPS = 1
TARGET_PROGRAMS = 1024
MIN_CHUNK = 32

if HAS_TRITON:

    @triton.jit
    def _step(
        t, bidx, offs, lane, coef, inp, lengths, T, D, ADJOINT: tl.constexpr, COMPLEX: tl.constexpr, ACC: tl.constexpr
    ):
        """α_t, β_t at step t (real parts, imaginary parts); zeros outside [0, T)."""
        valid = (t >= 0) & (t < T)
        if ADJOINT:
            ta = t + 1  # λ_t = g_t + conj(a_{t+1}) λ_{t+1}
            lim = tl.load(lengths + bidx)
            valid_b = valid & (t < lim)
        else:
            ta = t
            valid_b = valid
        valid_a = (ta >= 0) & (ta < T)
        w = 2 if COMPLEX else 1
        ia = ((bidx * T + ta) * D + offs) * w
        ib = ((bidx * T + t) * D + offs) * w
        ar = tl.load(coef + ia, mask=lane & valid_a, other=0.0).to(ACC)
        br = tl.load(inp + ib, mask=lane & valid_b, other=0.0).to(ACC)
        if COMPLEX:
            ai = tl.load(coef + ia + 1, mask=lane & valid_a, other=0.0).to(ACC)
            bi = tl.load(inp + ib + 1, mask=lane & valid_b, other=0.0).to(ACC)
            if ADJOINT:
                ai = -ai
        else:
            ai = ar * 0.0
            bi = br * 0.0
        return ar, ai, br, bi

    @triton.jit
    def _chunk_totals(
        coef, inp, lengths, p_out, c_out, T, D, n_c, chunk,
        BLOCK_D: tl.constexpr, ADJOINT: tl.constexpr, COMPLEX: tl.constexpr, ACC: tl.constexpr,
    ):  # fmt: skip
        bidx = tl.program_id(0).to(tl.int64)
        offs = tl.program_id(1).to(tl.int64) * BLOCK_D + tl.arange(0, BLOCK_D)
        lane = offs < D
        k = tl.program_id(2).to(tl.int64)
        pr = tl.full((BLOCK_D,), 1.0, ACC)
        pi = tl.zeros((BLOCK_D,), ACC)
        cr = tl.zeros((BLOCK_D,), ACC)
        ci = tl.zeros((BLOCK_D,), ACC)
        zero = tl.zeros((BLOCK_D,), tl.int64)  # step indices as blocks: every mask is a block (interpreter-safe)
        for s in range(chunk):
            idx = k * chunk + s + zero
            t = T - 1 - idx if ADJOINT else idx
            ar, ai, br, bi = _step(t, bidx, offs, lane, coef, inp, lengths, T, D, ADJOINT, COMPLEX, ACC)
            inside = idx < T  # past the end of the sequence a chunk keeps its map (identity step)
            ar = tl.where(inside, ar, 1.0)
            if COMPLEX:
                cr, ci = ar * cr - ai * ci + br, ar * ci + ai * cr + bi
                pr, pi = ar * pr - ai * pi, ar * pi + ai * pr
            else:
                cr = ar * cr + br
                pr = ar * pr
        w = 2 if COMPLEX else 1
        o = ((bidx * n_c + k) * D + offs) * w
        tl.store(p_out + o, pr, mask=lane)
        tl.store(c_out + o, cr, mask=lane)
        if COMPLEX:
            tl.store(p_out + o + 1, pi, mask=lane)
            tl.store(c_out + o + 1, ci, mask=lane)

    @triton.jit
    def _carry(p, c, h0, h_in, D, n_c, BLOCK_D: tl.constexpr, COMPLEX: tl.constexpr, ACC: tl.constexpr):
        bidx = tl.program_id(0).to(tl.int64)
        offs = tl.program_id(1).to(tl.int64) * BLOCK_D + tl.arange(0, BLOCK_D)
        lane = offs < D
        w = 2 if COMPLEX else 1
        o0 = (bidx * D + offs) * w
        hr = tl.load(h0 + o0, mask=lane, other=0.0).to(ACC)
        hi = tl.zeros((BLOCK_D,), ACC)
        if COMPLEX:
            hi = tl.load(h0 + o0 + 1, mask=lane, other=0.0).to(ACC)
        for k in range(n_c):
            o = ((bidx * n_c + k) * D + offs) * w
            tl.store(h_in + o, hr, mask=lane)
            pr = tl.load(p + o, mask=lane, other=0.0)
            cr = tl.load(c + o, mask=lane, other=0.0)
            if COMPLEX:
                tl.store(h_in + o + 1, hi, mask=lane)
                pi = tl.load(p + o + 1, mask=lane, other=0.0)
                ci = tl.load(c + o + 1, mask=lane, other=0.0)
                hr, hi = pr * hr - pi * hi + cr, pr * hi + pi * hr + ci
            else:
                hr = pr * hr + cr

    @triton.jit
    def _replay(
        coef, inp, lengths, h_in, out, hs, h0, grad_a, T, D, n_c, chunk,
        BLOCK_D: tl.constexpr, ADJOINT: tl.constexpr, COMPLEX: tl.constexpr,
        GRAD_A: tl.constexpr, ACC: tl.constexpr,
    ):  # fmt: skip
        bidx = tl.program_id(0).to(tl.int64)
        offs = tl.program_id(1).to(tl.int64) * BLOCK_D + tl.arange(0, BLOCK_D)
        lane = offs < D
        k = tl.program_id(2).to(tl.int64)
        w = 2 if COMPLEX else 1
        oi = ((bidx * n_c + k) * D + offs) * w
        hr = tl.load(h_in + oi, mask=lane, other=0.0).to(ACC)
        hi = tl.zeros((BLOCK_D,), ACC)
        if COMPLEX:
            hi = tl.load(h_in + oi + 1, mask=lane, other=0.0).to(ACC)
        lim = tl.load(lengths + bidx)  # T when no lengths were given
        zero = tl.zeros((BLOCK_D,), tl.int64)  # step indices as blocks: every mask is a block (interpreter-safe)
        for s in range(chunk):
            idx = k * chunk + s + zero
            t = T - 1 - idx if ADJOINT else idx
            ar, ai, br, bi = _step(t, bidx, offs, lane, coef, inp, lengths, T, D, ADJOINT, COMPLEX, ACC)
            if COMPLEX:
                hr, hi = ar * hr - ai * hi + br, ar * hi + ai * hr + bi
            else:
                hr = ar * hr + br
            inside = idx < T
            keep = t < lim
            o = ((bidx * T + t) * D + offs) * w
            tl.store(out + o, tl.where(keep, hr, 0.0), mask=lane & inside)
            if COMPLEX:
                tl.store(out + o + 1, tl.where(keep, hi, 0.0), mask=lane & inside)
            if GRAD_A:  # ∂L/∂a_t = λ_t ⊙ conj(h_{t−1}), h_{−1} = h0
                first = t == 0
                op = ((bidx * T + t - 1) * D + offs) * w
                o0 = (bidx * D + offs) * w
                qr = tl.where(
                    first,
                    tl.load(h0 + o0, mask=lane & inside & first, other=0.0).to(ACC),
                    tl.load(hs + op, mask=lane & inside & (t > 0), other=0.0).to(ACC),
                )
                if COMPLEX:
                    qi = tl.where(
                        first,
                        tl.load(h0 + o0 + 1, mask=lane & inside & first, other=0.0).to(ACC),
                        tl.load(hs + op + 1, mask=lane & inside & (t > 0), other=0.0).to(ACC),
                    )
                    tl.store(grad_a + o, hr * qr + hi * qi, mask=lane & inside)
                    tl.store(grad_a + o + 1, hi * qr - hr * qi, mask=lane & inside)
                else:
                    tl.store(grad_a + o, hr * qr, mask=lane & inside)


def triton_available(device: torch.device | str | None = None) -> bool:
    """Whether the kernels can run for tensors on ``device`` (CUDA, or CPU under TRITON_INTERPRET=1)."""
    if not HAS_TRITON:
        return False
    if device is not None and torch.device(device).type == "cuda":
        return True
    return os.environ.get("TRITON_INTERPRET") == "1"


def choose_chunk(bsz: int, length: int, d: int) -> int:
    """Chunk length: one chunk when the lanes alone fill the GPU, else enough chunks for TARGET_PROGRAMS."""
    programs = bsz * triton.cdiv(d, BLOCK_D)
    if programs >= TARGET_PROGRAMS or length <= MIN_CHUNK:
        return max(1, length)
    n_c = triton.cdiv(TARGET_PROGRAMS, programs)
    return max(MIN_CHUNK, triton.cdiv(length, n_c))


def _flat(x: torch.Tensor) -> torch.Tensor:
    """Contiguous storage the kernels index: interleaved (re, im) for complex tensors."""
    x = x.contiguous()
    return torch.view_as_real(x) if x.is_complex() else x


def _run(coef, inp, h_init, out, lengths, *, adjoint, hs=None, h0=None, grad_a=None, chunk=None):
    """Launch the three kernels: ``out`` (B, T, D) ← the scan of (coef, inp) from ``h_init`` (B, D)."""
    bsz, length, d = inp.shape
    cplx = inp.is_complex()
    f64 = inp.dtype in (torch.float64, torch.complex128)
    acc, acc_dtype = (tl.float64, torch.float64) if f64 else (tl.float32, torch.float32)
    chunk = choose_chunk(bsz, length, d) if chunk is None else max(1, min(int(chunk), length))
    n_c = triton.cdiv(length, chunk)
    grid = (bsz, triton.cdiv(d, BLOCK_D))
    coef_f, inp_f, out_f = _flat(coef), _flat(inp), _flat(out)
    lens = lengths if lengths is not None else torch.full((bsz,), length, dtype=torch.int64, device=inp.device)
    lens = lens.to(device=inp.device, dtype=torch.int64).contiguous()
    if n_c == 1:
        h_in = _flat(h_init)
    else:
        shape = (bsz, n_c, d, 2) if cplx else (bsz, n_c, d)
        p, c, h_in = (torch.empty(shape, dtype=acc_dtype, device=inp.device) for _ in range(3))
        _chunk_totals[(*grid, n_c)](
            coef_f, inp_f, lens, p, c, length, d, n_c, chunk,
            BLOCK_D=BLOCK_D, ADJOINT=adjoint, COMPLEX=cplx, ACC=acc, num_warps=NUM_WARPS,
        )  # fmt: skip
        _carry[grid](p, c, _flat(h_init), h_in, d, n_c, BLOCK_D=BLOCK_D, COMPLEX=cplx, ACC=acc, num_warps=NUM_WARPS)
    ga = _flat(grad_a) if grad_a is not None else out_f
    _replay[(*grid, n_c)](
        coef_f, inp_f, lens, h_in, out_f,
        _flat(hs) if hs is not None else out_f, _flat(h0) if h0 is not None else h_in, ga,
        length, d, n_c, chunk,
        BLOCK_D=BLOCK_D, ADJOINT=adjoint, COMPLEX=cplx, GRAD_A=grad_a is not None, ACC=acc,
        num_warps=NUM_WARPS,
    )  # fmt: skip


class _TritonDiagScan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, h0, lengths, chunk):
        h_init = b.new_zeros(b.shape[0], b.shape[2]) if h0 is None else h0.contiguous()
        a, b = a.contiguous(), b.contiguous()
        h = torch.empty_like(b)
        if b.shape[1] > 0:
            _run(a, b, h_init, h, lengths, adjoint=False, chunk=chunk)
        ctx.save_for_backward(a, h, h_init, lengths)
        ctx.chunk = chunk
        return h

    @staticmethod
    def backward(ctx, g):
        a, h, h_init, lengths = ctx.saved_tensors
        need_a, need_b, need_h0 = ctx.needs_input_grad[:3]
        g = g.contiguous()
        lam = torch.empty_like(g)
        grad_a = torch.empty_like(a) if need_a else None
        if g.shape[1] > 0:
            zero = torch.zeros_like(h_init)
            _run(a, g, zero, lam, lengths, adjoint=True, hs=h, h0=h_init, grad_a=grad_a, chunk=ctx.chunk)
        grad_h0 = a[:, 0].conj() * lam[:, 0] if need_h0 and g.shape[1] > 0 else None
        if need_h0 and grad_h0 is None:
            grad_h0 = torch.zeros_like(h_init)
        return grad_a, lam if need_b else None, grad_h0, None, None


def triton_diag_scan(
    a: torch.Tensor,
    b: torch.Tensor,
    h0: torch.Tensor | None = None,
    lengths: torch.Tensor | None = None,
    *,
    chunk: int | None = None,
) -> torch.Tensor:
    """Same contract as :func:`naive_diag_scan`; ``chunk`` forces the chunk length (None: by the lanes)."""
    if not HAS_TRITON:
        raise RuntimeError("diag_scan: impl='triton' needs triton installed")
    if not triton_available(a.device):
        raise RuntimeError("diag_scan: impl='triton' needs a CUDA tensor, or TRITON_INTERPRET=1 on the CPU")
    return _TritonDiagScan.apply(a, b, h0, lengths, chunk)
