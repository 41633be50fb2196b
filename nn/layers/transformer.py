"""The causal Transformer baseline (Vaswani et al. 2017): torch.nn.TransformerEncoder under a causal mask, with
sinusoidal positions (or none), and the layers' interface.

Attention has no fixed-size recurrent state: the carried state is the prefix of the layer's inputs, and each chunk
re-attends over it (quadratic in the length read so far; ``recurrent`` is False). There is no transition A(x):
:meth:`transition` raises.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from .base import SequenceLayer, State, check_choice, check_positive


class Transformer(SequenceLayer):
    """``depth`` pre-norm encoder layers of ``heads`` attention heads, feed-forward width ``ff_mult``·d_model.

    State: ``{"x": (B, T_read, d_model)}``, the inputs read so far.
    """

    recurrent = False

    def __init__(
        self,
        d_model: int,
        heads: int = 4,
        *,
        depth: int = 1,
        ff_mult: int = 4,
        dropout: float = 0.0,
        positional: str = "sinusoidal",
    ) -> None:
        super().__init__()
        check_positive("Transformer", d_model=d_model, heads=heads, depth=depth, ff_mult=ff_mult)
        self.positional = check_choice("Transformer", "positional", positional, ("sinusoidal", "none"))
        self.d_model = d_model
        layer = nn.TransformerEncoderLayer(
            d_model, heads, ff_mult * d_model, dropout, batch_first=True, norm_first=True
        )
        self.encoder = nn.TransformerEncoder(layer, depth, enable_nested_tensor=False)

    def _positions(self, length: int, like: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(length, device=like.device, dtype=torch.float64)[:, None]
        freq = torch.exp(-math.log(10000.0) * torch.arange(0, self.d_model, 2, dtype=torch.float64) / self.d_model)
        pe = torch.zeros(length, self.d_model, dtype=torch.float64, device=like.device)
        pe[:, 0::2] = torch.sin(pos * freq)
        pe[:, 1::2] = torch.cos(pos * freq)[:, : self.d_model // 2]
        return pe.to(like.dtype)

    def forward(self, x: torch.Tensor, state: State | None = None, return_state: bool = False):
        full = x if state is None else torch.cat([state["x"], x], dim=1)
        length = full.shape[1]
        inp = full + self._positions(length, full) if self.positional == "sinusoidal" else full
        mask = nn.Transformer.generate_square_subsequent_mask(length, device=x.device, dtype=x.dtype)
        y = self.encoder(inp, mask=mask, is_causal=True)[:, length - x.shape[1] :]
        return self._out(y, {"x": full}, return_state)
