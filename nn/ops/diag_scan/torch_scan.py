"""Chunked diagonal scan in torch, with a custom backward (derivation in README.md).

Forward, h_t = a_t ⊙ h_{t−1} + b_t over (B, T, D). The time axis is cut into tiles of T' steps whose a, b and h
fit a share of the L3 cache (``choose_tile``), taken in scan order, each from the state the previous one left;
every tile is scanned in three passes over chunks of C steps (``choose_chunk``):

1. chunk totals: every chunk that passes a state on (all but the tile's last) composes its affine maps from a
   zero state, all chunks at once (C batched steps): c_k = the chunk's state from 0, P_k = ∏ a_t (one reduction);
2. carry: the states entering the chunks, h_in[k+1] = P_k ⊙ h_in[k] + c_k — itself a diagonal scan over the K
   chunks, done by the same function (recursively);
3. replay: every chunk reruns h_t = a_t ⊙ h_{t−1} + b_t from h_in[k], writing the states (C batched steps).

Sequential depth 2C + depth(K) per tile instead of T'. Passes 1 and 3 both read a and b; the tiling makes the
second read come from the cache rather than from memory. A cost model (per-step dispatch against the extra
passes) picks C, and runs the plain loop when the batch alone has enough lanes.

Backward (no division by a_t, no logarithm): with g_t = ∂L/∂h_t (PyTorch's convention, conjugates for complex),
the adjoint λ_t = g_t + conj(a_{t+1}) ⊙ λ_{t+1} is the same scan run in reverse; then ∂L/∂b_t = λ_t,
∂L/∂a_t = λ_t ⊙ conj(h_{t−1}) with h_{t−1} read from the saved forward states (an exclusive scan: h_{−1} = h0),
and ∂L/∂h0 = conj(a_1) ⊙ λ_1.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch
from torch.autograd.function import once_differentiable

from ..checks import length_mask

#: cost model (seconds, one CPU thread; fitted on benchmarks/bench_ops.py's shapes): dispatch cost of one batched
#: step; time per element of one extra pass over memory. The loop wins from about 4000 lanes on.
_STEP_COST = 3e-6
_ELEM_COST = 2.5e-10
#: bytes of a, b and out that one tile may span: a quarter of the 32 MiB L3 of the machine the costs were fitted on
#: (AMD EPYC, L2 1 MiB per core, L3 32 MiB shared by the cores), so that a tile read by pass 1 is still cached when
#: pass 3 reads it again. An L2-sized tile (1 MiB) would hold ~40 steps at 2048 lanes: too few to amortize the
#: per-tile dispatches (2C + K per tile).
_TILE_BYTES = 8 * 2**20


def choose_tile(length: int, lanes: int, itemsize: int) -> int:
    """Steps per tile: the largest T' with a, b and out of T' steps (3·T'·lanes·itemsize bytes) within
    ``_TILE_BYTES``, balanced so that the tiles of ``length`` steps have equal lengths (``length``: one tile)."""
    fit = max(1, _TILE_BYTES // (3 * lanes * itemsize))
    tiles = -(-length // fit)
    return -(-length // tiles)


def choose_chunk(length: int, lanes: int) -> int:
    """Chunk length C for a scan of ``length`` steps over ``lanes`` parallel lanes (``length``: no chunking).

    C is the power of two nearest √(T/2). The plain loop costs T dispatches; the chunked scan about
    2C + 2√(T/C) dispatches (the carry is chunked again) plus three extra passes over the T·lanes elements (steps 1
    and 3 both read a and b, and step 1 reads a twice; within a tile the repeated reads come from the cache, but on
    one CPU thread those passes cost about as much per element as a read from memory, so they are charged in
    full). With many lanes the dispatches are amortized and the loop wins."""
    c = min(256, max(4, 2 ** round(math.log2(max(1.0, math.sqrt(length / 2))))))
    if length < 4 * c:
        return length
    chunked = (2 * c + 2 * math.sqrt(length / c) + length % c) * _STEP_COST + 3 * length * lanes * _ELEM_COST
    return c if chunked < length * _STEP_COST else length


def scan_into(
    a: torch.Tensor, b: torch.Tensor, h: torch.Tensor, out: torch.Tensor, *, reverse: bool = False
) -> torch.Tensor:
    """Write h_t = a_t ⊙ h_{t−1} + b_t into ``out`` (B, T, D) from h_{−1} = ``h`` (B, D); ``reverse``: h_t =
    a_t ⊙ h_{t+1} + b_t from h_T = ``h``. ``a``, ``b`` and ``out`` may be strided views, ``a`` a lazy conjugate.
    Returns the last state computed (h_{T−1}, or h_0 in reverse). Not differentiable: the autograd function below
    supplies the backward. cpu_kernel.scan_into has the same contract (the C kernel).

    The time axis is cut into tiles (:func:`choose_tile`) taken in scan order, each scanned by :func:`_scan_tile`
    from the state the previous tile left."""
    bsz, length, d = a.shape
    if length == 0 or bsz * d == 0:  # nothing to scan (and no lanes to size a tile by)
        return h if length == 0 else out[:, 0 if reverse else -1]
    a = a.resolve_conj()  # addcmul with a lazily conjugated operand would re-conjugate every step
    tile = choose_tile(length, bsz * d, a.element_size())
    starts = range(0, length, tile)
    for s in reversed(starts) if reverse else starts:
        span = slice(s, min(s + tile, length))
        h = _scan_tile(a[:, span], b[:, span], h, out[:, span], reverse)
    return h


def _scan_tile(a, b, h, out, reverse):
    """The chunked three-pass scan of one tile (module docstring)."""
    bsz, length, d = a.shape
    c = choose_chunk(length, bsz * d)
    k = length // c
    if k < 2:
        return _sequential(a, b, h, out, reverse)
    # the body is k whole chunks; the rest (< c steps) is run sequentially, after the body in scan order
    body = slice(length - k * c, length) if reverse else slice(0, k * c)
    rest = slice(0, length - k * c) if reverse else slice(k * c, length)
    a4, b4, o4 = (x[:, body].unflatten(1, (k, c)) for x in (a, b, out))  # (B, K, C, D)
    # 1. totals of the chunks that pass a state on (all but the last in scan order), from a zero state:
    #    c_k by C batched steps, P_k = ∏ a_t by one reduction
    feed = slice(1, k) if reverse else slice(0, k - 1)
    steps_a, steps_b = a4[:, feed].unbind(2), b4[:, feed].unbind(2)
    order = list(range(c - 1, -1, -1) if reverse else range(c))
    tot = steps_b[order[0]]  # a view of b: the second step writes a fresh tensor, the later ones update it
    if c > 1:
        tot = torch.addcmul(steps_b[order[1]], steps_a[order[1]], tot)
        for j in order[2:]:
            torch.addcmul(steps_b[j], steps_a[j], tot, out=tot)
    p = a4[:, feed].prod(dim=2)
    # 2. carry: h_in[k] is the state entering chunk k (in scan order), a scan over the chunks
    h_in = torch.empty(bsz, k, d, dtype=out.dtype, device=out.device)
    if reverse:
        h_in[:, -1] = h
        scan_into(p, tot, h, h_in[:, :-1], reverse=True)
    else:
        h_in[:, 0] = h
        scan_into(p, tot, h, h_in[:, 1:])
    # 3. replay every chunk from its entering state
    all_a, all_b, all_o = a4.unbind(2), b4.unbind(2), o4.unbind(2)
    prev = h_in
    for j in order:
        torch.addcmul(all_b[j], all_a[j], prev, out=all_o[j])
        prev = all_o[j]
    last = out[:, body.start] if reverse else out[:, body.stop - 1]
    return _sequential(a[:, rest], b[:, rest], last, out[:, rest], reverse)


def _sequential(a, b, h, out, reverse):
    steps = zip(a.unbind(1), b.unbind(1), out.unbind(1))
    for a_t, b_t, o_t in reversed(list(steps)) if reverse else steps:
        torch.addcmul(b_t, a_t, h, out=o_t)
        h = o_t
    return h


class _DiagScan(torch.autograd.Function):
    """The scan with the backward above; ``scan`` (:func:`scan_into`, or the C kernel's) runs the forward scan and
    the reverse scan of the adjoint."""

    @staticmethod
    def forward(ctx, a, b, h0, lengths, scan):
        h_init = b.new_zeros(b.shape[0], b.shape[2]) if h0 is None else h0
        h = torch.empty(b.shape, dtype=b.dtype, device=b.device)
        scan(a, b, h_init, h)
        mask = None
        if lengths is not None:
            mask = length_mask(lengths, h.shape[1], h.device)
            h.masked_fill_(mask, 0)
        ctx.save_for_backward(a, h, h_init)
        ctx.mask, ctx.scan = mask, scan
        return h

    @staticmethod
    @once_differentiable
    def backward(ctx, g):
        a, h, h_init = ctx.saved_tensors
        need_a, need_b, need_h0, _, _ = ctx.needs_input_grad
        if g.shape[1] == 0:  # nothing depends on the inputs
            needs = (need_a, need_b, need_h0)
            return (*(torch.zeros_like(x) if n else None for x, n in zip((a, g, h_init), needs)), None, None)
        if ctx.mask is not None:
            g = g.masked_fill(ctx.mask, 0)
        lam = adjoint(a, g, ctx.scan)
        grad_a = grad_h0 = None
        if need_a:
            grad_a = torch.empty_like(lam)
            torch.mul(lam[:, 1:], h[:, :-1].conj(), out=grad_a[:, 1:])
            torch.mul(lam[:, 0], h_init.conj(), out=grad_a[:, 0])
        if need_h0:
            grad_h0 = a[:, 0].conj() * lam[:, 0]
        return grad_a, lam if need_b else None, grad_h0, None, None


def adjoint(a: torch.Tensor, g: torch.Tensor, scan: Callable = scan_into) -> torch.Tensor:
    """λ_t = g_t + conj(a_{t+1}) ⊙ λ_{t+1}, λ_{T−1} = g_{T−1}: the reverse scan of the backward pass (T ≥ 1), by
    ``scan``, which receives conj(a) as a lazy conjugate (resolved by :func:`scan_into`, read as stored by the C
    kernel)."""
    g = g.contiguous()
    lam = torch.empty(g.shape, dtype=g.dtype, device=g.device)
    lam[:, -1] = g[:, -1]
    scan(a[:, 1:].conj(), g[:, :-1], lam[:, -1], lam[:, :-1], reverse=True)
    return lam


def torch_diag_scan(
    a: torch.Tensor,
    b: torch.Tensor,
    h0: torch.Tensor | None = None,
    lengths: torch.Tensor | None = None,
    *,
    scan: Callable = scan_into,
) -> torch.Tensor:
    """Same contract as :func:`naive_diag_scan`; float16 and bfloat16 are computed in float32. ``scan``: the
    function with :func:`scan_into`'s contract that runs both scans (cpu_kernel.scan_into: the C kernel)."""
    dtype = a.dtype
    if dtype in (torch.float16, torch.bfloat16):
        a, b = a.float(), b.float()
        h0 = h0.float() if h0 is not None else None
    return _DiagScan.apply(a, b, h0, lengths, scan).to(dtype)
