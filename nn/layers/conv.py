"""The short causal depthwise convolution of Mamba and DeltaNet (kernel size 4, SiLU), with a carried cache.

y_t[c] = silu(Σ_{i<K} w[c, i] · x_{t−K+1+i}[c] + b[c]), b[c] only with ``bias=True``; the cache holds the last
K − 1 inputs, so a sequence read in chunks gives the outputs of the whole sequence. Besides local mixing it provides the
one-step causal shift that cascade wiring needs (docs/theory.md, "The timing of cascades").

The bias follows the authors' layers: fla's ``ShortConvolution`` (the convolution of the DeltaNet/DeltaProduct the
Grazzi et al. runs use) has ``bias=False``; the Mamba block's ``nn.Conv1d`` has a bias (``conv_bias=True`` in
mamba_ssm's ``Mamba``). With the PyTorch default initialisation a bias is not small: at 32 channels of kernel 4 its
std is ≈ 0.29, more than the embedded token's share of a q/k/v channel at fla's init, so a biased convolution makes
q, k, v nearly independent of the input at the start of training (issue 32).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn


class ShortConv(nn.Module):
    """Depthwise causal convolution over (B, T, C) with SiLU; ``forward(x, cache) -> (y, cache)``.

    ``bias``: False as fla's ``ShortConvolution`` (DeltaNet, DeltaProduct), True as the Mamba block's convolution."""

    def __init__(self, channels: int, kernel_size: int = 4, activation: bool = True, *, bias: bool = False) -> None:
        super().__init__()
        self.kernel_size = int(kernel_size)
        self.conv = nn.Conv1d(channels, channels, self.kernel_size, groups=channels, bias=bool(bias))
        self.activation = activation

    def forward(self, x: torch.Tensor, cache: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """x (B, T, C), cache (B, K − 1, C) or None (zeros) → y (B, T, C), the new cache."""
        bsz, _, c = x.shape
        if cache is None:
            cache = x.new_zeros(bsz, self.kernel_size - 1, c)
        full = torch.cat([cache.to(x.dtype), x], dim=1)
        y = self.conv(full.transpose(1, 2)).transpose(1, 2)
        return (F.silu(y) if self.activation else y), full[:, full.shape[1] - (self.kernel_size - 1) :]
