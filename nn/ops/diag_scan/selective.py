"""The selective scan of the Mamba-style layer: the diagonal scan with Mamba's factorized a_t, b_t and readout, fused
(README.md, "Selective scan").

Per batch row, channel d and state index n (negative-eigenvalues Table 1, Mamba row, B̄ = Δ·B):

    a_t[d, n] = exp(−Δ_t[d] A[d, n])   (``negative``: 2·exp(−Δ_t[d] A[d, n]) − 1),
    h_t[d, n] = a_t[d, n] h_{t−1}[d, n] + x_t[d] B_t[n],      y_t[d] = Σ_n C_t[n] h_t[d, n],

with x = Δ ⊙ u. Written out, the layer materializes a, b, h and their products, (B, T, D, N) each, in memory and
in autograd's saved tensors: on a CPU that traffic, not the recurrence, is most of the layer's training step
(benchmarks/bench_train.py).

- ``naive``  a and b materialized, :func:`naive_diag_scan`, the readout — the layer written out, the reference;
- ``triton`` the same with the Triton diagonal scan;
- ``torch``  fused (:class:`_SelectiveScan`): time chunks of about :data:`CHUNK_ELEMENTS` elements, each built,
  scanned and read out while it is in cache; each chunk's a and h are kept, and the backward runs the adjoint scan
  on them chunk by chunk, from the last, reducing the gradients of Δ, x, A, B and C as it goes.
"""

from __future__ import annotations

import torch
from torch.autograd.function import once_differentiable

from ..checks import OpInputError, check_dtype, check_impl, check_shape, check_tensor
from .naive import naive_diag_scan

IMPLEMENTATIONS = ("naive", "torch", "triton")
#: elements of one time chunk (B · L · D · N) in the fused path: a few such tensors stay in a core's L2/L3 cache
CHUNK_ELEMENTS = 2**17
_OP = "selective_scan"
_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def selective_eigenvalues(dt: torch.Tensor, A: torch.Tensor, negative: bool) -> torch.Tensor:
    """a = exp(−Δ[..., d] A[d, n]) (…, D, N) in (0, 1], or 2a − 1 ∈ (−1, 1] with ``negative`` (the fix of the
    negative-eigenvalues paper)."""
    a = torch.exp(-dt[..., None] * A)
    return 2 * a - 1 if negative else a


def selective_scan(
    dt: torch.Tensor,
    x: torch.Tensor,
    A: torch.Tensor,
    B: torch.Tensor,
    C: torch.Tensor,
    h0: torch.Tensor,
    *,
    negative: bool = False,
    impl: str = "auto",
    chunk: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Outputs y (B, T, D) and the last state h_T (B, D, N) of the selective scan (module docstring).

    ``dt`` Δ and ``x`` = Δ ⊙ u (B, T, D), ``A`` (D, N), ``B``, ``C`` (B, T, N), ``h0`` (B, D, N), one floating dtype;
    differentiable in all of them. ``impl``: naive | torch | triton | auto (Triton's diagonal scan on CUDA, else the
    fused torch path); ``chunk`` forces the fused path's time-chunk length. float16 and bfloat16 are computed in
    float32 by the torch path.
    """
    check_impl(_OP, impl, IMPLEMENTATIONS)
    for name, t in (("dt", dt), ("x", x), ("B", B), ("C", C)):
        check_tensor(_OP, name, t, 3)
    check_tensor(_OP, "A", A, 2)
    check_tensor(_OP, "h0", h0, 3)
    bsz, length, d = dt.shape
    n = A.shape[1]
    check_dtype(_OP, "dt", dt, _FLOATS, "a floating dtype")
    check_shape(_OP, "x", x, dt.shape, "the shape of dt, (B, T, D)")
    check_shape(_OP, "A", A, (d, n), "(D, N), D from dt's shape")
    check_shape(_OP, "B", B, (bsz, length, n), "(B, T, N) from dt and A")
    check_shape(_OP, "C", C, (bsz, length, n), "(B, T, N) from dt and A")
    check_shape(_OP, "h0", h0, (bsz, d, n), "(B, D, N) from dt and A")
    for name, t in (("x", x), ("A", A), ("B", B), ("C", C), ("h0", h0)):
        check_dtype(_OP, name, t, dt.dtype, "the dtype of dt")
        if t.device != dt.device:
            raise OpInputError(f"{_OP}: {name} is on {t.device}, expected dt's device {dt.device}")
    if impl == "auto":
        impl = "torch"
        if dt.is_cuda:
            from .triton import triton_available

            impl = "triton" if triton_available(dt.device) else "torch"
    if impl == "naive" or length == 0:
        return materialized_selective_scan(dt, x, A, B, C, h0, negative, naive_diag_scan)
    if impl == "triton":
        from .triton import triton_diag_scan

        return materialized_selective_scan(dt, x, A, B, C, h0, negative, triton_diag_scan)
    dtype = dt.dtype
    if dtype in (torch.float16, torch.bfloat16):
        dt, x, A, B, C, h0 = (t.float() for t in (dt, x, A, B, C, h0))
    size = _chunk_length(length, bsz * d * n, chunk)
    if torch.is_grad_enabled() and any(t.requires_grad for t in (dt, x, A, B, C, h0)):
        y, h_last = _SelectiveScan.apply(dt, x, A, B, C, h0, bool(negative), size)
    else:  # inference: nothing kept for a backward
        y, h_last, _ = _fused_forward(dt, x, A, B, C, h0, bool(negative), size, keep=False)
    return y.to(dtype), h_last.to(dtype)


def materialized_selective_scan(dt, x, A, B, C, h0, negative, scan) -> tuple[torch.Tensor, torch.Tensor]:
    """The selective scan written out: a and b (B, T, D, N) materialized, ``scan`` (a diagonal scan with the
    contract of :func:`naive_diag_scan`) over the B × T × D·N view, then the readout; differentiated by autograd."""
    bsz, length, d = dt.shape
    n = A.shape[1]
    a = selective_eigenvalues(dt, A, negative)  # (B, T, D, N)
    inp = x[..., None] * B[:, :, None, :]
    h = scan(a.reshape(bsz, length, d * n), inp.reshape(bsz, length, d * n), h0.reshape(bsz, d * n))
    h = h.reshape(bsz, length, d, n)
    y = (h * C[:, :, None, :]).sum(-1)
    return y, (h[:, -1] if length else h0)


def _chunk_length(length: int, lanes: int, chunk: int | None) -> int:
    if chunk is not None:
        return max(1, min(int(chunk), length))
    return max(1, min(length, CHUNK_ELEMENTS // max(1, lanes)))


# Inside the fused path a chunk is laid out (B, L, N, D): the sums over n then run across contiguous rows of D
# lanes, and the sums over d are reductions of contiguous rows.
def _chunk_eigs(dt_c: torch.Tensor, minus_at: torch.Tensor, negative: bool) -> torch.Tensor:
    """a of one chunk (B, L, N, D) from Δ (B, L, D) and −Aᵀ (N, D), in place after the one product."""
    a = torch.mul(dt_c[:, :, None, :], minus_at).exp_()
    return a.mul_(2).sub_(1) if negative else a


def _chunk_states(a: torch.Tensor, x_c: torch.Tensor, B_c: torch.Tensor, h_in: torch.Tensor) -> torch.Tensor:
    """h of one chunk (B, L, N, D) from its entering state (B, N, D): b = B ⊗ x, then the scan in place over b."""
    h = B_c[..., None] * x_c[:, :, None, :]
    _scan_in_place(a, h, h_in)
    return h


def _scan_in_place(a: torch.Tensor, h: torch.Tensor, h_in: torch.Tensor, reverse: bool = False) -> None:
    """h_t ← a_t ⊙ h_{t−1} + h_t over dim 1 from h_{−1} = h_in (``reverse``: h_t ← a_t ⊙ h_{t+1} + h_t from
    h_L = h_in), one in-place ``addcmul_`` per step (the chunk is short: the plain loop of torch_scan.py)."""
    steps = list(zip(a.unbind(1), h.unbind(1)))
    prev = h_in
    for a_t, h_t in reversed(steps) if reverse else steps:
        prev = h_t.addcmul_(a_t, prev)


def _fused_forward(dt, x, A, B, C, h0, negative, size, keep):
    """y (B, T, D), h_T (B, D, N) and, with ``keep``, every chunk's (a, h) (B, L, N, D), chunk by chunk."""
    bsz, length, d = dt.shape
    minus_at = -A.t().contiguous()  # (N, D)
    y = dt.new_empty(bsz, length, d)
    kept = []
    h = h0.transpose(1, 2)
    for t0 in range(0, length, size):
        sl = slice(t0, min(t0 + size, length))
        a = _chunk_eigs(dt[:, sl], minus_at, negative)
        hc = _chunk_states(a, x[:, sl], B[:, sl], h)
        y[:, sl] = torch.matmul(C[:, sl, None, :], hc).squeeze(2)  # Σ_n C h
        if keep:
            kept.append((a, hc))
        h = hc[:, -1]
    return y, h.transpose(1, 2).contiguous(), kept


class _SelectiveScan(torch.autograd.Function):
    """Fused selective scan over time chunks of ``size`` steps; the chunks' a and h are kept for the backward (one
    chunk-sized tensor each: after the first step they come from the heap, not from fresh pages)."""

    @staticmethod
    def forward(ctx, dt, x, A, B, C, h0, negative, size):  # noqa: D102
        y, h_last, kept = _fused_forward(dt, x, A, B, C, h0, negative, size, keep=True)
        ctx.save_for_backward(dt, x, A, B, C, h0)
        ctx.kept, ctx.negative, ctx.size = kept, negative, size
        return y, h_last

    @staticmethod
    @once_differentiable
    def backward(ctx, gy, g_last):  # noqa: D102
        dt, x, A, B, C, h0 = ctx.saved_tensors
        kept, negative, size = ctx.kept, ctx.negative, ctx.size
        length = dt.shape[1]
        minus_at = -A.t().contiguous()
        grad_dt, grad_x = torch.empty_like(dt), torch.empty_like(x)
        grad_B, grad_C = torch.empty_like(B), torch.empty_like(C)
        grad_at = torch.zeros_like(minus_at)  # −∂L/∂Aᵀ
        # carry = a_{t+1} ⊙ λ_{t+1} entering a chunk from the right (the cotangent of h_T at the end)
        carry = g_last.transpose(1, 2).to(dt.dtype)
        starts = list(range(0, length, size))
        for k in range(len(starts) - 1, -1, -1):
            sl = slice(starts[k], min(starts[k] + size, length))
            dt_c, x_c, B_c, C_c, gy_c = dt[:, sl], x[:, sl], B[:, sl], C[:, sl], gy[:, sl]
            a, h = kept[k]
            h_enter = h0.transpose(1, 2) if k == 0 else kept[k - 1][1][:, -1]
            # adjoint λ_t = g_t + a_{t+1} ⊙ λ_{t+1} with g_t = C_t ⊗ gy_t, in place in lam
            lam = C_c[..., None] * gy_c[:, :, None, :]
            lam[:, -1] += carry
            _scan_in_place(a[:, 1:], lam[:, :-1], lam[:, -1], reverse=True)
            carry = a[:, 0] * lam[:, 0]
            grad_x[:, sl] = torch.matmul(B_c[:, :, None, :], lam).squeeze(2)  # Σ_n B λ
            grad_B[:, sl] = (lam * x_c[:, :, None, :]).sum(-1)  # Σ_d λ x
            grad_C[:, sl] = (h * gy_c[:, :, None, :]).sum(-1)  # Σ_d h gy
            # ∂L/∂a_t = λ_t ⊙ h_{t−1};  r = −∂L/∂(Δ A) = ∂L/∂a ⊙ (a, or a + 1 = 2·exp(−ΔA) with negative)
            lam[:, 1:] *= h[:, :-1]
            lam[:, 0] *= h_enter
            r = lam.addcmul_(lam, a) if negative else lam.mul_(a)
            grad_dt[:, sl] = (r * minus_at).sum(2)
            grad_at += (r * dt_c[:, :, None, :]).sum((0, 1))
        return grad_dt, grad_x, -grad_at.t(), grad_B, grad_C, carry.transpose(1, 2), None, None


__all__ = ["IMPLEMENTATIONS", "materialized_selective_scan", "selective_eigenvalues", "selective_scan"]
