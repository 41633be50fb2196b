"""Mamba-style selective diagonal linear RNN (Gu & Dao 2023; negative-eigenvalues Table 1 and §4).

Per channel d and state index n (negative-eigenvalues Table 1, Mamba row, with Mamba's B̄ = Δ·B simplification):

    a_t[d, n] = exp(−Δ_t[d] · exp(w[d, n])) ∈ (0, 1],    h_t[d, n] = a_t[d, n] h_{t−1}[d, n] + Δ_t[d] B_t[n] u_t[d],
    y_t[d] = Σ_n C_t[n] h_t[d, n] + D[d] u_t[d],

with Δ_t = softplus(W_Δ u_t + b_Δ), B_t, C_t linear in u_t, u the (short-convolved) input branch and a SiLU gate
on y, as in Mamba's block. ``eig_range=(-1, 1)`` is the fix of the negative-eigenvalues paper: a_t ↦ 2a_t − 1 ∈
(−1, 1]. The recurrence runs, with a_t, the input Δ_t B_t u_t and the readout Σ_n C_t[n] h_t[d, n], on
:func:`fsa2rnn.nn.ops.selective_scan`: the diagonal scan (whose backward never divides by a_t, so 0 and
negative eigenvalues are ordinary), fused with those maps on the CPU. :meth:`SelectiveDiagonal.transition` returns
the diagonal a(x).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..ops import selective_scan
from ..ops.diag_scan.selective import selective_eigenvalues
from .base import SequenceLayer, State, check_choice, check_positive
from .conv import ShortConv


class SelectiveDiagonal(SequenceLayer):
    """Selective diagonal (Mamba-style) token mixer.

    Parameters: ``state_size`` N per channel, ``expand`` (inner width D = expand · d_model), ``eig_range`` (0, 1) |
    (−1, 1), ``short_conv``/``conv_size`` (on the u branch), ``dt_min``/``dt_max`` (Mamba's Δ initialization
    range), ``learn_h0`` (h_0 a parameter, zero at init), ``impl`` for :func:`selective_scan`.
    State: ``{"h": (B, D, N), "conv": (B, conv_size − 1, D) | None}``.
    """

    def __init__(
        self,
        d_model: int,
        state_size: int = 16,
        *,
        expand: int = 1,
        eig_range: Sequence[float] = (0, 1),
        short_conv: bool = True,
        conv_size: int = 4,
        dt_min: float = 1e-3,
        dt_max: float = 1e-1,
        learn_h0: bool = True,
        impl: str = "auto",
    ) -> None:
        super().__init__()
        check_positive("SelectiveDiagonal", d_model=d_model, state_size=state_size, expand=expand)
        self.eig_range = check_choice("SelectiveDiagonal", "eig_range", eig_range, ((0, 1), (-1, 1)))
        self.state_size, self.inner, self.impl = state_size, expand * d_model, impl
        d = self.inner
        self.in_proj = nn.Linear(d_model, 2 * d, bias=False)
        self.conv = ShortConv(d, conv_size) if short_conv else None
        self.dt_proj = nn.Linear(d, d, bias=True)
        self.bc_proj = nn.Linear(d, 2 * state_size, bias=False)
        # S4D-real initialization of exp(w) = 1..N (Mamba), Δ's bias so that softplus(bias) ∈ [dt_min, dt_max]
        self.w = nn.Parameter(torch.log(torch.arange(1, state_size + 1, dtype=torch.float32)).repeat(d, 1))
        self.D = nn.Parameter(torch.ones(d))
        self.out_proj = nn.Linear(d, d_model, bias=False)
        with torch.no_grad():
            dt = torch.exp(torch.rand(d) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min))
            self.dt_proj.bias.copy_(dt + torch.log(-torch.expm1(-dt)))  # inverse softplus
        h0 = torch.zeros(d, state_size)
        if learn_h0:
            self.h0 = nn.Parameter(h0)
        else:
            self.register_buffer("h0", h0)

    def _branch(self, x: torch.Tensor, cache: torch.Tensor | None):
        u, z = self.in_proj(x).chunk(2, dim=-1)
        if self.conv is not None:
            u, cache = self.conv(u, cache)
        dt = F.softplus(self.dt_proj(u))  # (B, T, D)
        b, c = self.bc_proj(u).chunk(2, dim=-1)  # (B, T, N) each
        return u, z, dt, b, c, cache

    def _eigs(self, dt: torch.Tensor) -> torch.Tensor:
        """a (…, D, N): in (0, 1], or (−1, 1] with ``eig_range=(-1, 1)``."""
        return selective_eigenvalues(dt, torch.exp(self.w), self.eig_range == (-1, 1))

    def forward(self, x: torch.Tensor, state: State | None = None, return_state: bool = False):
        bsz = x.shape[0]
        u, z, dt, b, c, cache = self._branch(x, None if state is None else state["conv"])
        h0 = self.h0.expand(bsz, -1, -1) if state is None else state["h"]
        dtype = torch.promote_types(dt.dtype, self.w.dtype)
        args = (t.to(dtype) for t in (dt, dt * u, torch.exp(self.w), b, c, h0))
        y, h_last = selective_scan(*args, negative=self.eig_range == (-1, 1), impl=self.impl)
        y = self.out_proj((y + self.D * u) * F.silu(z))
        return self._out(y, {"h": h_last, "conv": cache}, return_state)

    def transition(self, x: torch.Tensor, steady: bool = False) -> torch.Tensor:
        """The diagonal a(x), (…, D, N), for tokens x (…, d_model) read with no history, or with ``steady``
        after x x … x (the short convolution's window full of x)."""
        xs, lead = self._tokens(x, self.conv.kernel_size if steady and self.conv is not None else 1)
        _, _, dt, _, _, _ = self._branch(xs, None)
        return self._eigs(dt[:, -1]).reshape(*lead, self.inner, self.state_size)

    def state_vector(self, state: State) -> torch.Tensor:
        return state["h"].reshape(len(state["h"]), -1)
