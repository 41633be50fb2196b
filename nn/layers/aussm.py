"""AUSSM, the adaptive unitary state space model (Karuvally et al. 2025, arXiv 2507.05238, eq. 8), in the Mamba-style
block Brandoit et al. use as a baseline (their code's AUSSM cell).

Per channel d and state index n, with u the SiLU of the input branch (no convolution inside the block):

    θ_t[d, n] = (W_θ u_t + b_θ)[d, n],     a_t[d, n] = exp(i θ_t[d, n])   (unit modulus: the unitary evolution),
    h_t[d, n] = a_t[d, n] h_{t−1}[d, n] + Δ_t[d] u_t[d] B[n],       Δ_t = softplus(W_up W_down u_t + b_Δ),
    y_t[d] = Re Σ_n C[n] h_t[d, n] + D[d] u_t[d],

then the SiLU gate and the output projection of the Mamba block. B, C ∈ C^N are learned but input-independent;
Δ is low rank (⌈D/16⌉); b_θ is drawn uniform in (−π, π) (the authors' initialization) and the linear weights are
lecun-normal. The recurrence runs on :func:`fsa2rnn.nn.ops.diag_scan` (complex diagonal; its ``naive`` path is
the step-by-step reference). :meth:`AUSSM.transition` returns the diagonal a(x) = exp(i θ(x)).
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..ops import diag_scan
from .base import SequenceLayer, State, check_positive, lecun_normal_

_COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}


class AUSSM(SequenceLayer):
    """Adaptive unitary SSM token mixer (module docstring).

    Parameters: ``state_size`` N per channel, ``expand`` (inner width D = expand · d_model), ``dt_rank`` (None:
    ⌈D/16⌉), ``impl`` for :func:`diag_scan`. State: ``{"h": (B, D·N) complex}``, zero at the start.
    The recurrence runs in complex64 (float32 and lower inputs) or complex128 (float64).
    """

    #: the form of transition(x) (nn/capabilities.py): what compare's spectra and the eigenvalue checks read
    transition_kind = "diagonal"

    def __init__(
        self, d_model: int, state_size: int = 16, *, expand: int = 1, dt_rank: int | None = None, impl: str = "auto"
    ) -> None:
        super().__init__()
        check_positive("AUSSM", d_model=d_model, state_size=state_size, expand=expand)
        d = self.inner = expand * d_model
        rank = max(1, math.ceil(d / 16)) if dt_rank is None else dt_rank
        check_positive("AUSSM", dt_rank=rank)
        self.state_size, self.impl = state_size, impl
        self.in_proj = nn.Linear(d_model, 2 * d, bias=False)
        self.dt_proj = nn.Sequential(nn.Linear(d, rank, bias=False), nn.Linear(rank, d, bias=True))
        self.theta_proj = nn.Linear(d, d * state_size, bias=True)
        self.out_proj = nn.Linear(d, d_model, bias=False)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                lecun_normal_(m)
        with torch.no_grad():
            self.theta_proj.bias.uniform_(-math.pi, math.pi)
        # B and C: standard complex normals (real and imaginary parts N(0, 1/2)), stored as real pairs
        self.B = nn.Parameter(torch.randn(state_size, 2) * math.sqrt(0.5))
        self.C = nn.Parameter(torch.randn(state_size, 2) * math.sqrt(0.5))
        self.D = nn.Parameter(torch.ones(d))

    def _branch(self, x: torch.Tensor):
        u, z = self.in_proj(x).chunk(2, dim=-1)
        u = F.silu(u)
        dt = F.softplus(self.dt_proj(u))  # (B, T, D)
        theta = self.theta_proj(u).unflatten(-1, (self.inner, self.state_size))  # (B, T, D, N)
        return u, z, dt, theta

    def forward(self, x: torch.Tensor, state: State | None = None, return_state: bool = False):
        bsz, length, _ = x.shape
        u, z, dt, theta = self._branch(x)
        theta = theta.to(_COMPLEX.get(torch.promote_types(theta.dtype, torch.float32), torch.complex64).to_real())
        a = torch.polar(torch.ones_like(theta), theta)
        bvec = torch.view_as_complex(self.B.to(a.real.dtype).contiguous())
        cvec = torch.view_as_complex(self.C.to(a.real.dtype).contiguous())
        drive = (dt * u).to(a.real.dtype)[..., None] * bvec  # (B, T, D, N) complex
        h0 = None if state is None else state["h"]
        h = diag_scan(a.flatten(2), drive.flatten(2), h0, impl=self.impl)  # (B, T, D·N)
        y = (h.unflatten(-1, (self.inner, self.state_size)) * cvec).real.sum(-1).to(u.dtype)
        y = self.out_proj((y + self.D * u) * F.silu(z))
        last = h[:, -1] if length else (h0 if h0 is not None else h.new_zeros(bsz, self.inner * self.state_size))
        return self._out(y, {"h": last}, return_state)

    def transition(self, x: torch.Tensor) -> torch.Tensor:
        """The diagonal a(x) = exp(i θ(x)), (…, D, N) complex, for tokens x (…, d_model)."""
        xs, lead = self._tokens(x)
        theta = self._branch(xs)[3][:, -1]
        theta = theta.to(torch.promote_types(theta.dtype, torch.float32))
        return torch.polar(torch.ones_like(theta), theta).reshape(*lead, self.inner, self.state_size)
