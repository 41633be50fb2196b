"""The DLR paper's attention block (Gupta et al., diagonal linear RNNs, §3.3): the DLR layer with its DLR
contextualization replaced by causal multi-head softmax attention with rotary position embeddings (Su et al.,
RoFormer, eq. (34)); the output is out_proj(GELU(attention)), as the DLR layer's out_proj(GELU(y)). No feed-forward
layer.

Rotary: in every head, the pair (x_{2m}, x_{2m+1}) of a query or key at position i is rotated by the angle
i · base^{−2m/d_head}, so that ⟨R_i q, R_j k⟩ depends on i − j only (:func:`rotary`).

Attention has no fixed-size recurrent state: the carried state is the prefix of the layer's inputs (positions count
from its start) and each chunk's queries attend over it (``recurrent`` is False; :meth:`transition` raises).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from .base import ConfigError, SequenceLayer, State, check_choice, check_positive

ROTARY_BASE = 10000.0


def rotary(x: torch.Tensor, positions: torch.Tensor, base: float = ROTARY_BASE) -> torch.Tensor:
    """x (…, T, d) with d even, rotated at the positions (T,): pair m of position i by the angle i·base^{−2m/d}."""
    d = x.shape[-1]
    freq = base ** (-torch.arange(0, d, 2, dtype=torch.float64, device=x.device) / d)
    angle = positions.to(device=x.device, dtype=torch.float64)[:, None] * freq  # (T, d/2)
    cos, sin = angle.cos().to(x.dtype), angle.sin().to(x.dtype)
    even, odd = x[..., 0::2], x[..., 1::2]
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


class Attention(SequenceLayer):
    """``heads`` causal softmax-attention heads of width d_model / heads, rotary positions (or none).

    State: ``{"x": (B, T_read, d_model)}``, the inputs read so far.
    """

    recurrent = False

    def __init__(self, d_model: int, heads: int = 4, *, positional: str = "rotary") -> None:
        super().__init__()
        check_positive("Attention", d_model=d_model, heads=heads)
        self.positional = check_choice("Attention", "positional", positional, ("rotary", "none"))
        if d_model % heads or (positional == "rotary" and (d_model // heads) % 2):
            raise ConfigError(f"Attention: d_model {d_model} must split into {heads} heads of an even width")
        self.heads = heads
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, x: torch.Tensor, state: State | None = None, return_state: bool = False):
        full = x if state is None else torch.cat([state["x"], x], dim=1)
        bsz, length, d = full.shape
        new = x.shape[1]
        q, k, v = self.qkv(full).view(bsz, length, 3, self.heads, d // self.heads).unbind(2)
        q = q[:, length - new :]
        if self.positional == "rotary":
            pos = torch.arange(length, device=x.device)
            q = rotary(q.transpose(1, 2), pos[length - new :]).transpose(1, 2)
            k = rotary(k.transpose(1, 2), pos).transpose(1, 2)
        # query i (absolute position length − new + i) sees keys j ≤ its position
        allowed = torch.ones(new, length, dtype=torch.bool, device=x.device).tril(length - new)
        y = F.scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=allowed)
        y = self.out_proj(F.gelu(y.transpose(1, 2).reshape(bsz, new, d)))
        return self._out(y, {"x": full}, return_state)
