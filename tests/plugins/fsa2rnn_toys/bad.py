"""Broken plug-ins, each refused in one ``error:`` line before training (tests/contracts/test_plugin_models.py)."""

from __future__ import annotations

import torch
from torch import nn


class NoArgs(nn.Module):
    """A wrong signature: takes no d_model."""

    def __init__(self) -> None:
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x


class WrongShape(nn.Module):
    """(B, T, d) → (B, T, d + 1)."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Linear(d_model, d_model + 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x)


class Anticausal(nn.Module):
    """y_t = Σ_{s ≥ t} x_s: reads the future."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x.flip(1).cumsum(1).flip(1))


class NotFinite(nn.Module):
    """log of a negative number at initialisation."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x) + torch.log(-torch.ones_like(x))
