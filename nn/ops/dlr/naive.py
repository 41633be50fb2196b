"""Direct O(L²) reference of the DLR convolution (Diagonal Linear RNNs, eq. (4)): the kernel by repeated
multiplication, K_k = Σ_i w_i λ_i^k with λ^k = λ^{k−1}·λ, and y = K ∗ u as a product with the Toeplitz matrix
T[i, j] = K_{i−j} (i ≥ j). Autograd differentiates it; the FFT path is tested against it."""

from __future__ import annotations

import torch

from .kernel import cast_kernel


def naive_kernel(log_lambda: torch.Tensor, w: torch.Tensor, length: int) -> torch.Tensor:
    """K (…, H, L) complex: K_k = Σ_n w_n λ_n^k for k < L, the powers by repeated multiplication."""
    lam = torch.exp(log_lambda)
    power = torch.ones_like(lam)
    ks = []
    for _ in range(length):
        ks.append((w * power).sum(-1))
        power = power * lam
    return torch.stack(ks, -1) if ks else lam.new_zeros(*lam.shape[:-1], 0)


def _toeplitz(k: torch.Tensor) -> torch.Tensor:
    """(H, L) → (H, L, L) with T[h, i, j] = k[h, i − j] for i ≥ j, 0 above the diagonal."""
    length = k.shape[-1]
    lag = torch.arange(length, device=k.device)[:, None] - torch.arange(length, device=k.device)[None, :]
    return k[:, lag.clamp(min=0)] * (lag >= 0)


def naive_dlr(
    log_lambda: torch.Tensor, w: torch.Tensor, u: torch.Tensor, kernel: str = "re", bidirectional: bool = False
) -> torch.Tensor:
    """Same contract as :func:`fsa2rnn.nn.ops.dlr_kernel_conv`, computed directly in u's dtype."""
    length = u.shape[1]
    k = cast_kernel(naive_kernel(log_lambda, w, length), kernel).to(u.dtype)
    if not bidirectional:
        return torch.einsum("hij,bjh->bih", _toeplitz(k), u)
    causal = torch.einsum("hij,bjh->bih", _toeplitz(k[0]), u)
    anti = torch.einsum("hji,bjh->bih", _toeplitz(k[1]), u)  # y_i += Σ_{j ≥ i} K'_{j−i} u_j
    return causal + anti
