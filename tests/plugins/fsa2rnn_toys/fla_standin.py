"""A CPU stand-in for flash-linear-attention's layers, with fla's constructor (``hidden_size``, ``num_heads``,
``allow_neg_eigval``) and forward signature (``hidden_states, attention_mask=None, past_key_values=None,
use_cache=False, output_attentions=False`` → ``(output, attentions, past_key_values)``), so that
nn/layers/fla_adapter.py is tested without fla or a GPU. ``layers.DeltaNet`` is the delta rule
S_t = S_{t−1}(I − β_t k_t k_tᵀ) + β_t v_t k_tᵀ, o_t = S_t q_t with β ∈ (0, 1), or (0, 2) with allow_neg_eigval.
"""

from __future__ import annotations

import types

import torch
import torch.nn.functional as F
from torch import nn


class DeltaNet(nn.Module):
    def __init__(self, hidden_size: int = 64, num_heads: int = 1, allow_neg_eigval: bool = False, **kwargs) -> None:
        super().__init__()
        self.allow_neg_eigval = allow_neg_eigval
        self.qkv = nn.Linear(hidden_size, 3 * hidden_size, bias=False)
        self.b = nn.Linear(hidden_size, 1)
        self.o = nn.Linear(hidden_size, hidden_size, bias=False)

    def forward(self, hidden_states, attention_mask=None, past_key_values=None, use_cache=False,
                output_attentions=False, **kwargs):  # fmt: skip
        q, k, v = self.qkv(hidden_states).chunk(3, dim=-1)
        k = F.normalize(k, dim=-1)
        beta = torch.sigmoid(self.b(hidden_states)) * (2.0 if self.allow_neg_eigval else 1.0)
        b, t, d = hidden_states.shape
        s = hidden_states.new_zeros(b, d, d)
        out = []
        for i in range(t):
            ki, vi, bi = k[:, i], v[:, i], beta[:, i, :, None]
            s = s - bi * torch.einsum("bij,bj,bk->bik", s, ki, ki) + bi * torch.einsum("bi,bj->bij", vi, ki)
            out.append(torch.einsum("bij,bj->bi", s, q[:, i]))
        return self.o(torch.stack(out, dim=1)), None, past_key_values


class Mamba2(nn.Module):
    """No eigenvalue switch: ``--eig`` is refused for it."""

    def __init__(self, hidden_size: int = 64, **kwargs) -> None:
        super().__init__()
        self.proj = nn.Linear(hidden_size, hidden_size)

    def forward(self, hidden_states, attention_mask=None, past_key_values=None, use_cache=False, **kwargs):
        return self.proj(hidden_states.cumsum(1)), None, past_key_values


layers = types.SimpleNamespace(DeltaNet=DeltaNet, Mamba2=Mamba2)
