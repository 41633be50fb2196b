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

:class:`MambaMinus` is Brandoit et al.'s Mamba⁻ baseline as a configuration of this layer (its block: no convolution
inside, SiLU on u, a low-rank Δ, eigenvalues in (−1, 1], h_0 = 0, lecun-normal linear weights).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..ops import selective_scan
from ..ops.diag_scan.selective import selective_eigenvalues
from .base import ConfigError, SequenceLayer, State, check_choice, check_positive, lecun_normal_
from .conv import ShortConv


class SelectiveDiagonal(SequenceLayer):
    """Selective diagonal (Mamba-style) token mixer.

    Parameters: ``state_size`` N per channel, ``expand`` (inner width D = expand · d_model), ``eig_range`` (0, 1) |
    (−1, 1), ``short_conv``/``conv_size`` (on the u branch), ``conv_bias`` (True: the Mamba block's ``nn.Conv1d``
    has a bias, mamba_ssm's default ``conv_bias=True``), ``input_silu`` (SiLU on u when there is no short
    convolution, as the Mamba block; the convolution ends in its own SiLU), ``dt_rank`` (None: Δ = softplus(W_Δ u +
    b_Δ) with a full D × D matrix; r: Mamba's low-rank W_Δ = W_up W_down through r channels), ``dt_min``/``dt_max``
    (Mamba's Δ initialization range), ``learn_h0`` (h_0 a parameter, zero at init), ``init`` ("torch": the
    linear layers' default; "lecun": weights N(0, 1/fan_in) truncated at 2σ and zero biases, flax's default),
    ``impl`` for :func:`selective_scan`.
    State: ``{"h": (B, D, N), "conv": (B, conv_size − 1, D) | None}``.
    """

    #: the form of transition(x) (nn/capabilities.py): what compare's spectra and the eigenvalue checks read
    transition_kind = "diagonal"
    transition_steady = True  # transition(x, steady=True): A(x) inside a run of x (the conv window full)

    def __init__(
        self,
        d_model: int,
        state_size: int = 16,
        *,
        expand: int = 1,
        eig_range: Sequence[float] = (0, 1),
        short_conv: bool = True,
        conv_size: int = 4,
        conv_bias: bool = True,
        input_silu: bool = False,
        dt_rank: int | None = None,
        dt_min: float = 1e-3,
        dt_max: float = 1e-1,
        learn_h0: bool = True,
        init: str = "torch",
        impl: str = "auto",
    ) -> None:
        super().__init__()
        name = type(self).__name__
        check_positive(name, d_model=d_model, state_size=state_size, expand=expand)
        if dt_rank is not None:
            check_positive(name, dt_rank=dt_rank)
        if not 0 < dt_min <= dt_max:
            raise ConfigError(f"{name}: need 0 < dt_min ≤ dt_max, got dt_min={dt_min!r}, dt_max={dt_max!r}")
        self.eig_range = check_choice(name, "eig_range", eig_range, ((0, 1), (-1, 1)))
        check_choice(name, "init", init, ("torch", "lecun"))
        self.state_size, self.inner, self.impl = state_size, expand * d_model, impl
        self.input_silu = bool(input_silu)
        d = self.inner
        self.in_proj = nn.Linear(d_model, 2 * d, bias=False)
        self.conv = ShortConv(d, conv_size, bias=conv_bias) if short_conv else None
        if dt_rank is None:
            self.dt_proj: nn.Module = nn.Linear(d, d, bias=True)
            dt_bias = self.dt_proj.bias
        else:  # Mamba's x_proj (its Δ part) then dt_proj, whose bias is Δ's
            self.dt_proj = nn.Sequential(nn.Linear(d, dt_rank, bias=False), nn.Linear(dt_rank, d, bias=True))
            dt_bias = self.dt_proj[1].bias
        self.bc_proj = nn.Linear(d, 2 * state_size, bias=False)
        # S4D-real initialization of exp(w) = 1..N (Mamba), Δ's bias so that softplus(bias) ∈ [dt_min, dt_max]
        self.w = nn.Parameter(torch.log(torch.arange(1, state_size + 1, dtype=torch.float32)).repeat(d, 1))
        self.D = nn.Parameter(torch.ones(d))
        self.out_proj = nn.Linear(d, d_model, bias=False)
        if init == "lecun":
            for m in self.modules():
                if isinstance(m, nn.Linear):
                    lecun_normal_(m)
        with torch.no_grad():
            dt = torch.exp(torch.rand(d) * (math.log(dt_max) - math.log(dt_min)) + math.log(dt_min))
            dt_bias.copy_(dt + torch.log(-torch.expm1(-dt)))  # inverse softplus
        h0 = torch.zeros(d, state_size)
        if learn_h0:
            self.h0 = nn.Parameter(h0)
        else:
            self.register_buffer("h0", h0)

    def _branch(self, x: torch.Tensor, cache: torch.Tensor | None):
        u, z = self.in_proj(x).chunk(2, dim=-1)
        if self.conv is not None:
            u, cache = self.conv(u, cache)
        elif self.input_silu:
            u = F.silu(u)
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

    def set_state_vector(self, state: State, vector: torch.Tensor) -> State:
        return {**state, "h": vector.reshape(state["h"].shape).to(state["h"])}


class MambaMinus(SelectiveDiagonal):
    """Mamba⁻, the Mamba baseline of Brandoit et al. (their code's Mamba cell): the Mamba block with no convolution
    inside (``short_conv=False``, SiLU on u), eigenvalues a = 2 exp(−Δ exp(w)) − 1 ∈ (−1, 1] (the
    negative-eigenvalues fix), Δ through a rank-⌈d_model/16⌉ projection with Mamba's initialization (S4D-real
    exp(w) = 1..N, softplus(b_Δ) log-uniform in [dt_min, dt_max], D = 1), h_0 = 0 and lecun-normal linear weights.
    Every keyword of :class:`SelectiveDiagonal` may still be given; these are only the defaults."""

    def __init__(self, d_model: int, state_size: int = 16, **kwargs) -> None:
        defaults = dict(
            eig_range=(-1, 1),
            short_conv=False,
            input_silu=True,
            dt_rank=max(1, math.ceil(d_model / 16)) if isinstance(d_model, int) else None,
            learn_h0=False,
            init="lecun",
        )
        super().__init__(d_model, state_size, **{**defaults, **kwargs})
