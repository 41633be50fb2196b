"""The diagonal linear recurrence h_t = a_t ⊙ h_{t−1} + b_t (Mamba-style diagonal, DLR), differentiable, for every
eigenvalue the theory allows: a_t = 0, a_t = −1 and complex a_t on the unit circle are ordinary inputs (the backward
keeps h_{t−1} and never divides by a_t nor takes its logarithm; README.md).

- ``naive``  the recurrence over ``unbind``, differentiated by autograd (naive.py): the reference
- ``torch``  chunked scan of torch ops with a custom backward (torch_scan.py): the CPU path without a C compiler
- ``cpu``    the same autograd function with both scans in a fused C kernel (cpu_kernel.py, diag_scan.c, compiled on
  first use; the torch path when no compiler is found, a build fails or ``FSA2RNN_NO_CKERNEL=1``)
- ``triton`` chunked forward and backward kernels (triton.py, imported on first use): CUDA, or CPU under
  TRITON_INTERPRET=1

:func:`selective_scan` (selective.py) is the scan of the Mamba-style layer, a_t and b_t built from Δ, A, B and read
out by C, fused with them on the CPU.
"""

from __future__ import annotations

import torch

from ..checks import OpInputError, check_dtype, check_impl, check_lengths, check_shape, check_tensor
from . import cpu_kernel
from .cpu_kernel import cpu_diag_scan
from .naive import naive_diag_scan
from .selective import selective_scan
from .torch_scan import torch_diag_scan

IMPLEMENTATIONS = ("naive", "torch", "cpu", "triton")
DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128)
_OP = "diag_scan"


def diag_scan(
    a: torch.Tensor,
    b: torch.Tensor,
    h0: torch.Tensor | None = None,
    *,
    lengths: torch.Tensor | None = None,
    impl: str = "auto",
) -> torch.Tensor:
    """States of h_t = a_t ⊙ h_{t−1} + b_t (negative-eigenvalues eq. (1) with A_t = diag(a_t)), t = 1..T.

    ``a``, ``b`` (B, T, D), real or complex, of one dtype; ``h0`` (B, D) of that dtype, or None (zeros);
    ``lengths`` (B,) integers or None. Returns h (B, T, D), zero at positions t ≥ lengths[b]. Differentiable in
    ``a``, ``b`` and ``h0`` with PyTorch's convention for complex gradients. ``impl``: naive | torch | cpu | triton |
    auto (Triton on CUDA; on the CPU the C kernel when it compiled, else torch). float16 and bfloat16 are computed
    in float32 by the torch, cpu and Triton paths.
    """
    check_impl(_OP, impl, IMPLEMENTATIONS)
    check_tensor(_OP, "a", a, 3)
    check_tensor(_OP, "b", b, 3)
    check_shape(_OP, "b", b, a.shape, "the shape of a, (B, T, D)")
    check_dtype(_OP, "a", a, DTYPES, "a floating or complex dtype")
    check_dtype(_OP, "b", b, a.dtype, "the dtype of a")
    bsz, length, d = a.shape
    if h0 is not None:
        check_tensor(_OP, "h0", h0)
        check_shape(_OP, "h0", h0, (bsz, d), "(B, D) from a's shape")
        check_dtype(_OP, "h0", h0, a.dtype, "the dtype of a")
    check_lengths(_OP, lengths, bsz, length)
    if b.device != a.device or (h0 is not None and h0.device != a.device):
        raise OpInputError(f"{_OP}: a, b and h0 must be on one device, got {a.device} and {b.device}")
    if impl == "cpu" and a.device.type != "cpu":
        raise OpInputError(f"{_OP}: impl 'cpu' needs CPU tensors, got a on {a.device}")
    if impl == "auto":
        if a.is_cuda:
            impl = "triton" if _triton().triton_available(a.device) else "torch"
        else:
            impl = "cpu" if a.device.type == "cpu" and cpu_kernel.available() else "torch"
    if impl == "naive":
        return naive_diag_scan(a, b, h0, lengths)
    if impl == "torch":
        return torch_diag_scan(a, b, h0, lengths)
    if impl == "cpu":
        return cpu_diag_scan(a, b, h0, lengths)
    return _triton().triton_diag_scan(a, b, h0, lengths)


def _triton():
    from . import triton

    return triton


__all__ = ["diag_scan", "cpu_diag_scan", "naive_diag_scan", "selective_scan", "torch_diag_scan", "IMPLEMENTATIONS"]
