"""DLR convolution by FFT (Diagonal Linear RNNs, §A.1): the kernel K_k = Σ_n w_n exp(k·log λ_n) for all k < L at
once (a product of two small Vandermonde factors per channel), and the Toeplitz product y = K ∗ u as a circular
convolution of size 2L, where the zero-padding keeps the wrap-around out of the first L outputs. Bidirectional: the
anti-causal kernel K' sits in the upper half of the same circulant (entry 2L − m holds K'_m), so one FFT pair serves
both directions."""

from __future__ import annotations

import math

import torch

from .kernel import cast_kernel


def fft_kernel(log_lambda: torch.Tensor, w: torch.Tensor, length: int) -> torch.Tensor:
    """K (…, H, L) complex: K_k = Σ_n w_n exp(k·log λ_n), in log_lambda's dtype.

    With k = qS + r (S = ⌈√L⌉), K_{qS+r} = Σ_n [w_n λ_n^{qS}] · λ_n^r is a matrix product per channel, (Q × N) by
    (N × S): N·(Q + S) exponentials instead of N·L, and no (N, L) Vandermonde in memory. The powers are taken in
    complex128 whatever the parameters' dtype: in float32 the phase k·θ of a |λ| = 1 eigenvalue would carry an
    absolute error k·|θ|·2⁻²⁴ (10⁻⁴ at k = 1000), which would dominate the op's error."""
    s = max(1, math.isqrt(max(0, length - 1)) + 1)
    q = -(-length // s)
    log64 = log_lambda.to(torch.complex128)[..., None]
    steps = torch.arange(max(s, q), dtype=torch.float64, device=log_lambda.device)
    low = torch.exp(log64 * steps[:s]).to(log_lambda.dtype)  # (…, N, S): λ^r
    high = torch.exp(log64 * (steps[:q] * s)).to(log_lambda.dtype) * w[..., None]  # (…, N, Q): w λ^{qS}
    k = torch.matmul(high.transpose(-1, -2), low)  # (…, Q, S)
    return k.flatten(-2)[..., :length]


def fft_dlr(
    log_lambda: torch.Tensor, w: torch.Tensor, u: torch.Tensor, kernel: str = "re", bidirectional: bool = False
) -> torch.Tensor:
    """Same contract as :func:`fsa2rnn.nn.ops.dlr_kernel_conv`; u of float32 or float64."""
    length = u.shape[1]
    k = cast_kernel(fft_kernel(log_lambda, w, length), kernel)
    if bidirectional:  # circulant of size 2L: [K_0 + K'_0, K_1..K_{L−1}, 0, K'_{L−1}..K'_1]
        fwd, bwd = k[0], k[1]
        k = torch.cat([fwd[:, :1] + bwd[:, :1], fwd[:, 1:], torch.zeros_like(fwd[:, :1]), bwd[:, 1:].flip(-1)], -1)
    n = 2 * length
    spectrum = torch.fft.rfft(u, n=n, dim=1) * torch.fft.rfft(k, n=n, dim=-1).T
    return torch.fft.irfft(spectrum, n=n, dim=1)[:, :length]
