"""The Neural Finite-State Machine layer (length-independent-state-tracking §6; docs/theory.md, "Neural Finite-State
Machines").

A layer has r heads; head i has d_i attractor indices with attractor vectors a_k (rows of ``attractors_i``, one-hot
by default). The layer's input at step t is a *key* (the symbol, or for stacked layers the symbol with the indices
of the layers above at step t−1). The key's embedding goes through one linear map to the logits θ ∈ R^{Σ d_i²};
head i's block, read as θ_i[k, j], gives the table σ(k) = argmax_j θ_i[k, j]. The hidden state is one index per
head, h_t = σ_{t}(h_{t−1}), and the output is the concatenation of a_{h_t} over heads, projected to ``out_dim``.

The tables depend on the key alone, so the layer computes the table of each key once (``key_tables``) and runs
an exact keyed table scan (nn/ops/table_scan). For training, :meth:`NFSMLayer.relaxed_forward` goes
through the argmax with a straight-through Gumbel-softmax (Jang et al. 2017): forward the hard one-hot table of
argmax(θ + g), backward the gradient of softmax((θ + g)/τ).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from .ops.st_table_scan import gumbel_noise  # half types draw in float32 (u rounded to 1 would give g = ∞)
from .ops.table_scan import keyed_table_scan


class NFSMLayer(nn.Module):
    """r heads of d_i attractor indices over ``n_keys`` keys; logits = Linear(Embedding(key))."""

    def __init__(
        self, n_keys: int, heads: Sequence[int], embed_dim: int | None = None, out_dim: int | None = None
    ) -> None:
        super().__init__()
        self.heads = [int(d) for d in heads]
        self.n_keys = int(n_keys)
        embed_dim = self.n_keys if embed_dim is None else int(embed_dim)
        self.embedding = nn.Embedding(self.n_keys, embed_dim)
        self.logits = nn.Linear(embed_dim, sum(d * d for d in self.heads))
        for i, d in enumerate(self.heads):
            self.register_buffer(f"attractors_{i}", torch.eye(d))
        width = sum(self.heads)
        self.out_proj = nn.Linear(width, width if out_dim is None else int(out_dim), bias=False)
        with torch.no_grad():
            if out_dim is None:
                self.out_proj.weight.copy_(torch.eye(width))

    @property
    def d_max(self) -> int:
        return max(self.heads)

    def attractors(self, i: int) -> torch.Tensor:
        return getattr(self, f"attractors_{i}")

    # ------------------------------------------------------------------ logits and tables
    def key_logits(self, keys: torch.Tensor | None = None, dtype: torch.dtype | None = None) -> torch.Tensor:
        """Logits (…, Σ d_i²) of the given keys (default: every key): embedding → linear map, computed at the
        layer's dtype, or at ``dtype`` from copies of the weights cast to it (the layer itself is left unchanged)."""
        if keys is None:
            keys = torch.arange(self.n_keys, device=self.embedding.weight.device)
        if dtype is None:
            return self.logits(self.embedding(keys))
        emb = self.embedding.weight.to(dtype)
        return torch.nn.functional.linear(
            torch.nn.functional.embedding(keys, emb), self.logits.weight.to(dtype), self.logits.bias.to(dtype)
        )

    def head_logits(self, logits: torch.Tensor) -> list[torch.Tensor]:
        """Split (…, Σ d_i²) logits into per-head (…, d_i, d_i) blocks θ_i[k, j]."""
        out, start = [], 0
        for d in self.heads:
            out.append(logits[..., start : start + d * d].unflatten(-1, (d, d)))
            start += d * d
        return out

    def key_tables(self, dtype: torch.dtype | None = None) -> torch.Tensor:
        """Argmax tables (K, r, d_max) of every key (logits at the layer's dtype, or at ``dtype``); entries past a
        head's d_i are the identity (never reached)."""
        blocks = self.head_logits(self.key_logits(dtype=dtype))
        bank = torch.arange(self.d_max, device=blocks[0].device).repeat(self.n_keys, len(self.heads), 1)
        for i, (d, block) in enumerate(zip(self.heads, blocks)):
            bank[:, i, :d] = block.argmax(dim=-1)
        return bank

    # ------------------------------------------------------------------ exact forward
    def scan(
        self, keys: torch.Tensor, h0: torch.Tensor, lengths: torch.Tensor | None = None, *, impl: str = "auto"
    ) -> torch.Tensor:
        """Head indices (B, T, r) after each step from start indices h0 (r,) or (B, r); -1 past lengths."""
        bsz, length = keys.shape
        r = len(self.heads)
        bank = self.key_tables().reshape(self.n_keys * r, self.d_max)
        h0 = h0.to(keys.device).long()
        h0 = h0.expand(bsz, r) if h0.dim() == 1 else h0
        head_keys = (keys.long()[:, None, :] * r + torch.arange(r, device=keys.device)[None, :, None]).reshape(
            bsz * r, length
        )
        lens = None if lengths is None else lengths.repeat_interleave(r)
        out = keyed_table_scan(bank, head_keys, h0.reshape(-1), lens, impl=impl)
        return out.view(bsz, r, length).transpose(1, 2)

    def outputs(self, indices: torch.Tensor) -> torch.Tensor:
        """Concatenated attractor vectors a_{h_t} of every head, projected: (B, T, out_dim)."""
        parts = [self.attractors(i)[indices[..., i].clamp(min=0)] for i in range(len(self.heads))]
        return self.out_proj(torch.cat(parts, dim=-1).to(self.out_proj.weight.dtype))

    # ------------------------------------------------------------------ training
    def relaxed_forward(
        self,
        keys: torch.Tensor,
        h0: torch.Tensor,
        *,
        tau: float = 1.0,
        noise: bool = True,
        generator: torch.Generator | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """Differentiable forward with straight-through Gumbel-softmax tables.

        Returns (outputs (B, T, out_dim), indices (B, T, r)). The forward values are those of the hard tables of
        argmax(θ + g) (with ``noise=False``: argmax θ, the exact layer); gradients flow through
        softmax((θ + g)/τ) into the linear map and the embedding. Sequential in T (a reference for training).
        """
        bsz, length = keys.shape
        blocks = self.head_logits(self.key_logits(keys))  # per head (B, T, d, d)
        h0 = h0.to(keys.device).long()
        h0 = h0.expand(bsz, len(self.heads)) if h0.dim() == 1 else h0
        outs, idx = [], []
        for i, (d, theta) in enumerate(zip(self.heads, blocks)):
            tables = straight_through_tables(theta, tau=tau, noise=noise, generator=generator)
            v = torch.nn.functional.one_hot(h0[:, i], d).to(tables.dtype)
            states = []
            for t in range(length):
                v = torch.einsum("bk,bkj->bj", v, tables[:, t])  # a_{h_t} = S_{x_t} a_{h_{t-1}}
                states.append(v)
            vs = torch.stack(states, dim=1)  # (B, T, d)
            outs.append(vs @ self.attractors(i).to(vs.dtype))
            idx.append(vs.argmax(dim=-1))
        out = self.out_proj(torch.cat(outs, dim=-1).to(self.out_proj.weight.dtype))
        return out, torch.stack(idx, dim=-1)


def straight_through_tables(
    theta: torch.Tensor, *, tau: float = 1.0, noise: bool = True, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Row-stochastic (…, d, d) tables: forward one-hot rows of argmax(θ + g), backward softmax((θ + g)/τ).

    g is standard Gumbel noise (zero with ``noise=False``); rows k give the distribution of σ(k).
    """
    if noise:
        theta = theta + gumbel_noise(theta.shape, generator=generator, dtype=theta.dtype, device=theta.device)
    soft = torch.softmax(theta / tau, dim=-1)
    hard = torch.nn.functional.one_hot(theta.argmax(dim=-1), theta.shape[-1]).to(soft.dtype)
    return hard - soft.detach() + soft
