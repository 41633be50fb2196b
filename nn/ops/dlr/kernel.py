"""The real kernel a DLR convolves with: Re(K) ("re", the paper's cast of y to ℝ) or Re(K)·Im(K) ("prod",
DLR-prod)."""

from __future__ import annotations

import torch

KERNELS = ("re", "prod")


def cast_kernel(k: torch.Tensor, kernel: str) -> torch.Tensor:
    """Complex K → the real kernel: Re K, or Re K · Im K."""
    return k.real if kernel == "re" else k.real * k.imag
