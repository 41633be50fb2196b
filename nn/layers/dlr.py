"""DLR: the diagonal linear RNN as a convolution (Gupta, Mehta & Berant, "Simplifying and understanding state space
models with diagonal linear RNNs", eqs. (1)–(4) and §2.1).

Per channel h (of d_model) with N complex eigenvalues λ and weights w:  x_k = Λ x_{k−1} + 1·u_k,  y_k = Re⟨w, x_k⟩,
i.e. y = κ ∗ u with K_k = Σ_i w_i λ_i^k and κ = Re K ("re") or Re K · Im K ("prod", DLR-prod). λ is parameterized
as exp(−a² + iθ) (|λ| ≤ 1); θ starts at 2πn/N, so that with a = 0 (``decay_init="zero"``) and L = N the kernel is
K = DFT·w; the paper's default a starts at (e^r/2)^{1/2}, r ~ U(log 0.0005, log 0.5) (``decay_init="local"``), and w
at N(0, N^{−2}) per real and imaginary part. ``bidirectional=True`` sums a second, anti-causal DLR. The layer's
output is out_proj(GELU(y)); the convolution runs on :func:`fsa2rnn.nn.ops.dlr_kernel_conv` (FFT of size 2L).

Carried state (causal layers): the same map in its modal (recurrent) form, x_t = μ ⊙ x_{t−1} + u_t over
:func:`fsa2rnn.nn.ops.diag_scan` and y_t = part(Σ_m W_m x_t,m). For "re", μ = λ and W = w, part = Re; for "prod",
Re K · Im K = Im(K²)/2 is the kernel of the DLR with the N² eigenvalues μ = λ_i λ_j and weights W = w_i w_j / 2,
read with Im (DLR §A.2) — N² states per channel, so carried state costs N times more for "prod".
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..ops import diag_scan, dlr_kernel_conv
from .base import ConfigError, SequenceLayer, State, check_choice, check_positive


class DLR(SequenceLayer):
    """DLR token mixer over the d_model channels; ``state_size`` N eigenvalues per channel.

    State (causal only): ``{"x": (B, d_model, M) complex}``, M = N ("re") or N² ("prod").
    """

    def __init__(
        self,
        d_model: int,
        state_size: int = 64,
        *,
        kernel: str = "re",
        bidirectional: bool = False,
        decay_init: str = "local",
        impl: str = "auto",
    ) -> None:
        super().__init__()
        check_positive("DLR", d_model=d_model, state_size=state_size)
        self.kernel = check_choice("DLR", "kernel", kernel, ("re", "prod"))
        self.bidirectional = bool(bidirectional)
        check_choice("DLR", "decay_init", decay_init, ("local", "zero"))
        self.state_size, self.impl = state_size, impl
        shape = ((2,) if self.bidirectional else ()) + (d_model, state_size)
        n = torch.arange(state_size, dtype=torch.float32)
        self.theta = nn.Parameter((2 * math.pi * n / state_size).expand(shape).clone())
        if decay_init == "zero":
            a = torch.zeros(shape)
        else:
            r = torch.empty(shape).uniform_(math.log(5e-4), math.log(0.5))
            a = torch.sqrt(torch.exp(r) / 2)
        self.a = nn.Parameter(a)
        self.w_re = nn.Parameter(torch.randn(shape) / state_size)
        self.w_im = nn.Parameter(torch.randn(shape) / state_size)
        self.out_proj = nn.Linear(d_model, d_model)

    @property
    def recurrent(self) -> bool:  # type: ignore[override]
        return not self.bidirectional

    def params(self, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """(log λ, w) as complex tensors of the precision of the real dtype ``dtype``."""
        cdt = torch.complex128 if dtype == torch.float64 else torch.complex64
        rdt = torch.float64 if cdt == torch.complex128 else torch.float32
        log_lambda = torch.complex(-(self.a.to(rdt) ** 2), self.theta.to(rdt))
        return log_lambda.to(cdt), torch.complex(self.w_re.to(rdt), self.w_im.to(rdt)).to(cdt)

    def modal(self, dtype: torch.dtype = torch.float32) -> tuple[torch.Tensor, torch.Tensor, str]:
        """The causal DLR as a diagonal recurrence: eigenvalues μ (H, M), weights W (H, M), part "re" | "im"."""
        if self.bidirectional:
            raise ConfigError("DLR: a bidirectional DLR reads the future; it has no recurrent (modal) form")
        log_lambda, w = self.params(dtype)
        lam = torch.exp(log_lambda)
        if self.kernel == "re":
            return lam, w, "re"
        h = lam.shape[0]
        mu = (lam[:, :, None] * lam[:, None, :]).reshape(h, -1)
        return mu, (w[:, :, None] * w[:, None, :]).reshape(h, -1) / 2, "im"

    def forward(self, x: torch.Tensor, state: State | None = None, return_state: bool = False):
        if state is None and not return_state:
            log_lambda, w = self.params(x.dtype)
            y = dlr_kernel_conv(log_lambda, w, x, kernel=self.kernel, bidirectional=self.bidirectional)
            return self.out_proj(F.gelu(y))
        y, xs = self._recurrent(x, None if state is None else state["x"])
        return self._out(self.out_proj(F.gelu(y)), {"x": xs}, return_state)

    def _recurrent(self, u: torch.Tensor, x0: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        mu, w, part = self.modal(u.dtype)
        bsz, length, h = u.shape
        m = mu.shape[1]
        a = mu.expand(bsz, length, h, m).reshape(bsz, length, h * m)
        b = u.to(mu.dtype)[..., None].expand(bsz, length, h, m).reshape(bsz, length, h * m)
        x0 = None if x0 is None else x0.reshape(bsz, h * m)
        xs = diag_scan(a, b, x0, impl=self.impl).reshape(bsz, length, h, m)
        z = (xs * w).sum(-1)
        y = (z.real if part == "re" else z.imag).to(u.dtype)
        last = xs[:, -1] if length else (mu.new_zeros(bsz, h, m) if x0 is None else x0.reshape(bsz, h, m))
        return y, last

    def transition(self, x: torch.Tensor) -> torch.Tensor:
        """The diagonal λ (…, [2,] d_model, N), complex; input-independent (a DLR is time-invariant)."""
        log_lambda, _ = self.params(x.dtype)
        lam = torch.exp(log_lambda)
        return lam.expand(*x.shape[:-1], *lam.shape)

    def state_vector(self, state: State) -> torch.Tensor:
        return torch.view_as_real(state["x"]).reshape(len(state["x"]), -1)
