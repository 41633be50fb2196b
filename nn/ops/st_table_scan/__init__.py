"""The NFSM's straight-through table scan (length-independent-state-tracking §6; docs/theory.md, "Learned layers").

``st_table_scan(logits, h0, *, tau, gumbel, lengths, impl) -> (states, indices)`` runs r = H independent heads of d
attractor indices. Step t of head h has logits θ_t ∈ R^{d×d} (θ_t[k, j]: the score of moving from index k to j) and,
optionally, Gumbel noise g_t; with z_t = θ_t + g_t:

- **forward** (exact): the hard table σ_t(k) = argmax_j z_t[k, j] (first index on ties), the index
  h_t = σ_t(h_{t−1}) from h0, and the one-hot state a_t = e_{h_t} — the composition of the hard tables by the
  existing exact table scan (nn/ops/table_scan);
- **backward** (straight-through): the gradient of the relaxed recurrence a_t = S̃_tᵀ a_{t−1}, where S̃_t equals the
  hard 0/1 table in value and its row k has the derivative of softmax(z_t[k, ·]/τ). Since a_{t−1} = e_{h_{t−1}} in
  value, only the realized row k = h_{t−1} of each θ_t receives a gradient, and the adjoint λ_{t−1}[k] =
  ḡ_{t−1}[k] + λ_t[σ_t(k)] is a scan over the same hard tables (README.md derives it). This is exactly the gradient
  autograd computes through ``NFSMLayer.relaxed_forward`` (nn/nfsm.py) with the same noise.

Positions t ≥ lengths[b] give zero states, index −1 (the table scan's convention), and no gradient. The paths:
``naive`` (the recurrence step by step, autograd; naive.py), ``torch`` (exact table scan forward, chunked adjoint
scan backward; torch_scan.py), ``triton`` (kernels for both passes; triton.py). ``auto``: Triton on CUDA, else torch.
"""

from __future__ import annotations

import math

import torch

from ..checks import OpInputError, check_impl, check_lengths, check_shape, check_tensor
from .naive import gumbel_noise, naive_st_table_scan
from .torch_scan import torch_st_table_scan

IMPLEMENTATIONS = ("naive", "torch", "triton")
#: Largest number of attractor indices per head the Triton kernels accept (the table scan's limit).
MAX_TRITON_INDICES = 256
_OP = "st_table_scan"
_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def st_table_scan(
    logits: torch.Tensor,
    h0: torch.Tensor,
    *,
    tau: float = 0.5,
    gumbel: torch.Tensor | None = None,
    lengths: torch.Tensor | None = None,
    impl: str = "auto",
) -> tuple[torch.Tensor, torch.Tensor]:
    """Straight-through table scan of H heads of d indices.

    ``logits`` (B, T, H, d, d) floating; ``h0`` (B, H) integer start indices in [0, d); ``tau`` > 0 the softmax
    temperature of the backward pass; ``gumbel`` None or noise of the logits' shape and dtype, added before the
    argmax and the softmax (draw it with :func:`gumbel_noise`); ``lengths`` None or (B,) in [0, T].
    Returns ``states`` (B, T, H, d) one-hot e_{h_t} in the logits' dtype, carrying the straight-through gradient,
    and ``indices`` (B, T, H) int64 h_t; both zero (states) and −1 (indices) at positions t ≥ lengths[b].
    Differentiable in ``logits`` and ``gumbel``.
    """
    impl = _check(logits, h0, tau, gumbel, lengths, impl)
    if impl == "naive":
        return naive_st_table_scan(logits, h0, tau=tau, gumbel=gumbel, lengths=lengths)
    if impl == "torch":
        return torch_st_table_scan(logits, h0, tau=tau, gumbel=gumbel, lengths=lengths)
    from .triton import triton_st_table_scan

    return triton_st_table_scan(logits, h0, tau=tau, gumbel=gumbel, lengths=lengths)


def _check(logits: object, h0: object, tau: object, gumbel: object, lengths: object, impl: str) -> str:
    """Validate every argument (before any memory is spent) and resolve ``impl="auto"``."""
    check_impl(_OP, impl, IMPLEMENTATIONS)
    check_tensor(_OP, "logits", logits, 5)
    bsz, length, heads, d, d2 = logits.shape
    if d != d2 or d < 1:
        raise OpInputError(
            f"{_OP}: logits has shape {tuple(logits.shape)}, expected (B, T, H, d, d) with d ≥ 1 (θ[k, j] per head)"
        )
    if logits.dtype not in _FLOATS:
        raise OpInputError(
            f"{_OP}: logits has dtype {str(logits.dtype).removeprefix('torch.')}, expected a floating dtype"
        )
    check_tensor(_OP, "h0", h0, 2)
    check_shape(_OP, "h0", h0, (bsz, heads), "one start index per sequence and head")
    if h0.dtype.is_floating_point or h0.dtype.is_complex or h0.dtype == torch.bool:
        raise OpInputError(f"{_OP}: h0 has dtype {str(h0.dtype).removeprefix('torch.')}, expected an integer")
    if h0.device != logits.device:
        raise OpInputError(f"{_OP}: h0 is on {h0.device}, expected the logits' device {logits.device}")
    if h0.numel() and (int(h0.min()) < 0 or int(h0.max()) >= d):
        raise OpInputError(f"{_OP}: h0 must lie in [0, {d}) (d = {d}), got [{int(h0.min())}, {int(h0.max())}]")
    if gumbel is not None:
        check_tensor(_OP, "gumbel", gumbel)
        check_shape(_OP, "gumbel", gumbel, logits.shape, "the logits' shape")
        if gumbel.dtype != logits.dtype or gumbel.device != logits.device:
            raise OpInputError(
                f"{_OP}: gumbel has dtype {str(gumbel.dtype).removeprefix('torch.')} on {gumbel.device}, expected "
                f"the logits' {str(logits.dtype).removeprefix('torch.')} on {logits.device}"
            )
    check_lengths(_OP, lengths, bsz, length)
    if not isinstance(tau, (int, float)) or isinstance(tau, bool) or not (math.isfinite(tau) and tau > 0):
        raise OpInputError(f"{_OP}: tau must be a finite number > 0, got {tau!r}")
    if impl == "auto":
        impl = "torch"
        if logits.is_cuda:
            from .triton import triton_available

            impl = "triton" if triton_available(logits.device) and d <= MAX_TRITON_INDICES else "torch"
    if impl == "triton":
        if d > MAX_TRITON_INDICES:
            raise OpInputError(
                f"{_OP}: logits has shape {tuple(logits.shape)}, the Triton table kernels take d ≤ "
                f"{MAX_TRITON_INDICES} indices (got d = {d}); use impl='torch'"
            )
        from .triton import triton_available

        if not triton_available(logits.device):
            raise OpInputError(
                f"{_OP}: impl='triton' needs triton and a CUDA tensor (or TRITON_INTERPRET=1 on the CPU); "
                f"logits are on {logits.device}"
            )
    return impl


__all__ = ["IMPLEMENTATIONS", "MAX_TRITON_INDICES", "gumbel_noise", "st_table_scan"]
