"""Chunked diagonal scan in torch, with a custom backward (derivation in README.md).

Forward, h_t = a_t ⊙ h_{t−1} + b_t over (B, T, D), as three passes over chunks of C steps:

1. chunk totals: every chunk composes its affine maps from a zero state, all chunks at once (C batched steps):
   P_k = ∏ a_t, c_k = the chunk's state from 0;
2. carry: the states entering the chunks, h_in[k+1] = P_k ⊙ h_in[k] + c_k — itself a diagonal scan over the K
   chunks, done by the same function (recursively);
3. replay: every chunk reruns h_t = a_t ⊙ h_{t−1} + b_t from h_in[k], writing the states (C batched steps).

Sequential depth 2C + depth(K) instead of T; passes 1 and 3 both read a and b, so the scan moves about 6 tensors'
worth of bytes where a fused kernel moves 3. A cost model (per-step dispatch against the extra passes) picks C, and
runs the plain loop when the batch alone has enough lanes.

Backward (no division by a_t, no logarithm): with g_t = ∂L/∂h_t (PyTorch's convention, conjugates for complex),
the adjoint λ_t = g_t + conj(a_{t+1}) ⊙ λ_{t+1} is the same scan run in reverse; then ∂L/∂b_t = λ_t,
∂L/∂a_t = λ_t ⊙ conj(h_{t−1}) with h_{t−1} read from the saved forward states (an exclusive scan: h_{−1} = h0),
and ∂L/∂h0 = conj(a_1) ⊙ λ_1.
"""

from __future__ import annotations

import math

import torch
from torch.autograd.function import once_differentiable

from ..checks import length_mask

#: cost model (seconds, one CPU thread; fitted on benchmarks/bench_ops.py's shapes): dispatch cost of one batched
#: step; time per element of one extra pass over memory. The loop wins from about 4000 lanes on.
_STEP_COST = 3e-6
_ELEM_COST = 2.5e-10


def choose_chunk(length: int, lanes: int) -> int:
    """Chunk length C for a scan of ``length`` steps over ``lanes`` parallel lanes (``length``: no chunking).

    C is the power of two nearest √(T/2). The plain loop costs T dispatches; the chunked scan about
    2C + 2√(T/C) dispatches (the carry is chunked again) plus three extra passes over the T·lanes elements (steps 1
    and 3 both read a and b, and step 1 reads a twice). With many lanes the dispatches are amortized and the loop
    wins."""
    c = min(256, max(4, 2 ** round(math.log2(max(1.0, math.sqrt(length / 2))))))
    if length < 4 * c:
        return length
    chunked = (2 * c + 2 * math.sqrt(length / c) + length % c) * _STEP_COST + 3 * length * lanes * _ELEM_COST
    return c if chunked < length * _STEP_COST else length


def scan_into(
    a: torch.Tensor, b: torch.Tensor, h: torch.Tensor, out: torch.Tensor, *, reverse: bool = False
) -> torch.Tensor:
    """Write h_t = a_t ⊙ h_{t−1} + b_t into ``out`` (B, T, D) from h_{−1} = ``h`` (B, D); ``reverse``: h_t =
    a_t ⊙ h_{t+1} + b_t from h_T = ``h``. ``a``, ``b`` and ``out`` may be strided views. Returns the last state
    computed (h_{T−1}, or h_0 in reverse). Not differentiable: the autograd function below supplies the backward."""
    bsz, length, d = a.shape
    if length == 0:
        return h
    c = choose_chunk(length, bsz * d)
    k = length // c
    if k < 2:
        return _sequential(a, b, h, out, reverse)
    # the body is k whole chunks; the rest (< c steps) is run sequentially, after the body in scan order
    body = slice(length - k * c, length) if reverse else slice(0, k * c)
    rest = slice(0, length - k * c) if reverse else slice(k * c, length)
    a4, b4, o4 = (x[:, body].unflatten(1, (k, c)) for x in (a, b, out))  # (B, K, C, D)
    order = range(c - 1, -1, -1) if reverse else range(c)
    first, *others = order
    # 1. chunk totals from a zero state: P_k = ∏ a_t (one reduction), c_k by C batched steps
    p = a4.prod(dim=2)
    tot = b4[:, :, first].contiguous()
    for j in others:
        torch.addcmul(b4[:, :, j], a4[:, :, j], tot, out=tot)
    # 2. carry: h_in[k] is the state entering chunk k (in scan order), a scan over the chunks
    h_in = torch.empty_like(tot)
    if reverse:
        h_in[:, -1] = h
        scan_into(p[:, 1:], tot[:, 1:], h, h_in[:, :-1], reverse=True)
    else:
        h_in[:, 0] = h
        scan_into(p[:, :-1], tot[:, :-1], h, h_in[:, 1:])
    # 3. replay every chunk from its entering state
    prev = h_in
    for j in order:
        torch.addcmul(b4[:, :, j], a4[:, :, j], prev, out=o4[:, :, j])
        prev = o4[:, :, j]
    last = out[:, body.start] if reverse else out[:, body.stop - 1]
    return _sequential(a[:, rest], b[:, rest], last, out[:, rest], reverse)


def _sequential(a, b, h, out, reverse):
    steps = zip(a.unbind(1), b.unbind(1), out.unbind(1))
    for a_t, b_t, o_t in reversed(list(steps)) if reverse else steps:
        torch.addcmul(b_t, a_t, h, out=o_t)
        h = o_t
    return h


class _DiagScan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, h0, lengths):
        h_init = b.new_zeros(b.shape[0], b.shape[2]) if h0 is None else h0
        h = torch.empty(b.shape, dtype=b.dtype, device=b.device)
        scan_into(a, b, h_init, h)
        mask = None
        if lengths is not None:
            mask = length_mask(lengths, h.shape[1], h.device)
            h.masked_fill_(mask, 0)
        ctx.save_for_backward(a, h, h_init)
        ctx.mask = mask
        return h

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        a, h, h_init = ctx.saved_tensors
        need_a, need_b, need_h0, _ = ctx.needs_input_grad
        if g.shape[1] == 0:  # nothing depends on the inputs
            needs = (need_a, need_b, need_h0)
            return (*(torch.zeros_like(x) if n else None for x, n in zip((a, g, h_init), needs)), None)
        if ctx.mask is not None:
            g = g.masked_fill(ctx.mask, 0)
        lam = adjoint(a, g)
        grad_a = grad_h0 = None
        if need_a:
            grad_a = torch.empty_like(lam)
            torch.mul(lam[:, 1:], h[:, :-1].conj(), out=grad_a[:, 1:])
            torch.mul(lam[:, 0], h_init.conj(), out=grad_a[:, 0])
        if need_h0:
            grad_h0 = a[:, 0].conj() * lam[:, 0]
        return grad_a, lam if need_b else None, grad_h0, None


def adjoint(a: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    """λ_t = g_t + conj(a_{t+1}) ⊙ λ_{t+1}, λ_{T−1} = g_{T−1}: the reverse scan of the backward pass (T ≥ 1)."""
    g = g.contiguous()
    lam = torch.empty(g.shape, dtype=g.dtype, device=g.device)
    lam[:, -1] = g[:, -1]
    coef = a[:, 1:].conj().resolve_conj()  # addcmul with a lazily conjugated operand would re-conjugate every step
    scan_into(coef, g[:, :-1], lam[:, -1], lam[:, :-1], reverse=True)
    return lam


def torch_diag_scan(
    a: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None, lengths: torch.Tensor | None = None
) -> torch.Tensor:
    """Same contract as :func:`naive_diag_scan`; float16 and bfloat16 are computed in float32."""
    dtype = a.dtype
    if dtype in (torch.float16, torch.bfloat16):
        a, b = a.float(), b.float()
        h0 = h0.float() if h0 is not None else None
    return _DiagScan.apply(a, b, h0, lengths).to(dtype)
