"""The DLR convolution (Diagonal Linear RNNs): y = K ∗ u with K_k = Σ_i w_i λ_i^k, differentiable.

- ``naive`` direct O(L²): kernel by repeated multiplication, Toeplitz product (naive.py): the reference
- ``fft``   Vandermonde kernel and a circular convolution of size 2L (fft.py): the fast path (``auto``)
"""

from __future__ import annotations

import torch

from ..checks import OpInputError, check_dtype, check_impl, check_shape, check_tensor
from .fft import fft_dlr, fft_kernel
from .kernel import KERNELS, cast_kernel
from .naive import naive_dlr, naive_kernel

IMPLEMENTATIONS = ("naive", "fft")
_OP = "dlr_kernel_conv"
#: parameter dtype → the input dtypes it serves (float16/bfloat16 inputs are computed in float32)
_REAL_FOR = {
    torch.complex64: (torch.float32, torch.float16, torch.bfloat16),
    torch.complex128: (torch.float64,),
}


def dlr_kernel_conv(
    log_lambda: torch.Tensor,
    w: torch.Tensor,
    u: torch.Tensor,
    *,
    kernel: str = "re",
    bidirectional: bool = False,
    impl: str = "auto",
) -> torch.Tensor:
    """The DLR layer's convolution (eq. (4) with the cast of §2.1), per channel h:

        K_k[h] = Σ_n w[h, n] · exp(k · log_lambda[h, n]),   k = 0..L−1,
        y[:, i, h] = Σ_{j ≤ i} κ_{i−j}[h] · u[:, j, h],      κ = Re K ("re") or Re K · Im K ("prod").

    ``log_lambda``, ``w`` (H, N) complex (λ = exp(log_lambda); the layer's parameterization, e.g.
    −a² + iθ, is the layer's job); ``u`` (B, L, H) real (float32 or float16/bfloat16 with complex64 parameters,
    float64 with complex128). Returns y (B, L, H) in u's dtype.

    ``bidirectional=True`` sums two independent DLRs, one per direction: ``log_lambda`` and ``w`` are (2, H, N),
    index 0 the causal one and index 1 the anti-causal one, which is the same DLR run on the reversed sequence:
    y[:, i] += Σ_{j ≥ i} κ'_{j−i} · u[:, j] (both directions see u_i itself).
    """
    check_impl(_OP, impl, IMPLEMENTATIONS)
    if kernel not in KERNELS:
        raise OpInputError(f"{_OP}: unknown kernel {kernel!r} (choose from {', '.join(KERNELS)})")
    lead = (2,) if bidirectional else ()
    check_tensor(_OP, "log_lambda", log_lambda, len(lead) + 2)
    if bidirectional and log_lambda.shape[0] != 2:
        raise OpInputError(
            f"{_OP}: log_lambda has shape {tuple(log_lambda.shape)}, expected (2, H, N) with bidirectional=True "
            "(index 0 causal, 1 anti-causal)"
        )
    check_dtype(_OP, "log_lambda", log_lambda, tuple(_REAL_FOR), "complex parameters")
    check_tensor(_OP, "w", w)
    check_shape(_OP, "w", w, log_lambda.shape, "the shape of log_lambda")
    check_dtype(_OP, "w", w, log_lambda.dtype, "the dtype of log_lambda")
    check_tensor(_OP, "u", u, 3)
    n_ch = log_lambda.shape[-2]
    if u.shape[2] != n_ch:
        raise OpInputError(f"{_OP}: u has shape {tuple(u.shape)}, expected (B, L, {n_ch}) (H from log_lambda)")
    check_dtype(_OP, "u", u, _REAL_FOR[log_lambda.dtype], f"a real dtype matching {log_lambda.dtype}")
    if w.device != log_lambda.device or u.device != log_lambda.device:
        raise OpInputError(f"{_OP}: log_lambda, w and u must be on one device")
    if impl == "naive":
        return naive_dlr(log_lambda, w, u, kernel, bidirectional)
    dtype = u.dtype
    if dtype in (torch.float16, torch.bfloat16):
        u = u.float()
    return fft_dlr(log_lambda, w, u, kernel, bidirectional).to(dtype)


__all__ = ["dlr_kernel_conv", "naive_dlr", "fft_dlr", "naive_kernel", "fft_kernel", "cast_kernel", "IMPLEMENTATIONS"]
