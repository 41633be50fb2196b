"""DLR: the diagonal linear RNN as a convolution (Gupta, Mehta & Berant, "Simplifying and understanding state space
models with diagonal linear RNNs", eqs. (1)–(4) and §2.1).

Per channel h (of d_model) with N complex eigenvalues λ and weights w:  x_k = Λ x_{k−1} + 1·u_k,  y_k = Re⟨w, x_k⟩,
i.e. y = κ ∗ u with K_k = Σ_i w_i λ_i^k and κ = Re K ("re") or Re K · Im K ("prod", DLR-prod). λ is parameterized
as exp(−a² + iθ) (|λ| ≤ 1); θ starts at 2πn/N, so that with a = 0 (``decay_init="zero"``) and L = N the kernel is
K = DFT·w; the paper's default a starts at (e^r/2)^{1/2}, r ~ U(log 0.0005, log 0.5) (``decay_init="local"``), and w
at N(0, N^{−2}) per real and imaginary part. ``decay_init="unit"`` is the authors' initialisation for the atomic
tasks (ag1988/dlr README: ``dt_min = dt_max = 1e-5``, their ``Lambda_init="omega"``): −a² = −Δ/2 with Δ = 1e-5, so
|λ| = e^{−5·10⁻⁶} ≈ 1 and no lag of the training length is damped at the start. ``bidirectional=True`` sums a
second, anti-causal DLR. The layer's output is out_proj(GELU(y)); the convolution runs on
:func:`fsa2rnn.nn.ops.dlr_kernel_conv` (FFT of size 2L).

Carried state (causal layers): the same map in its modal (recurrent) form, x_t = μ ⊙ x_{t−1} + u_t over
:func:`fsa2rnn.nn.ops.diag_scan` and y_t = part(Σ_m W_m x_t,m). For "re", μ = λ and W = w, part = Re; for "prod",
Re K · Im K = Im(K²)/2 is the kernel of the DLR with the N² eigenvalues μ = λ_i λ_j and weights W = w_i w_j / 2,
read with Im (DLR §A.2) — N² states per channel, so carried state costs N times more for "prod".

DSS_exp (``param="dss_exp"``; Gupta, Gu & Berant, "Diagonal state spaces are as effective as structured state
spaces", Prop. 1(a); the DLR paper's §2.2): the zero-order-hold discretization of the continuous diagonal state
space x' = Λx + 1·u, y = Re⟨w, x⟩ with step Δ, i.e. the DLR with eigenvalues exp(λΔ) and weights w (e^{λΔ} − 1)/λ.
Re λ = −exp(a) < 0, Im λ = θ, Δ = exp(log Δ) per channel. Initialization (DSS's): λ = −1/2 + iω, ±iω the
eigenvalues of the skew-symmetric part of the HiPPO-LegS matrix's normal part (the N with ω > 0), log Δ ~
U(log dt_min, log dt_max) (DSS's defaults 0.001, 0.1), w ~ N(0, 1) per real and imaginary part. ``lambda_init="lin"``
is the DLR paper's DSS_exp on the atomic tasks (ag1988/dlr README: ``Lambda_init='lin'``, ``dt_min=1e-4``,
``dt_max=1e-2``): λ_n = −1/2 + iπn. The layers ``dlr-prod`` (:class:`DLRProd`) and
``dss-exp`` (:class:`DSSExp`) are this class with ``kernel="prod"`` and ``param="dss_exp"``.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..ops import diag_scan, dlr_kernel_conv
from .base import ConfigError, SequenceLayer, State, check_choice, check_positive

#: Δ of ``decay_init="unit"``: the authors' ``dt_min = dt_max`` for the atomic tasks (ag1988/dlr README)
UNIT_DT = 1e-5


class DLR(SequenceLayer):
    """DLR token mixer over the d_model channels; ``state_size`` N eigenvalues per channel.

    Initialisation (module docstring): ``decay_init`` "local" (the paper's default) | "zero" | "unit" (the authors'
    atomic tasks) for ``param="dlr"``; ``lambda_init`` "hippo" | "lin" and Δ's range ``dt_min``..``dt_max`` for
    ``param="dss_exp"``.

    State (causal only): ``{"x": (B, d_model, M) complex}``, M = N ("re") or N² ("prod").
    """

    #: the form of transition(x) (nn/capabilities.py): what compare's spectra and the eigenvalue checks read
    transition_kind = "diagonal"

    def __init__(
        self,
        d_model: int,
        state_size: int = 64,
        *,
        kernel: str = "re",
        bidirectional: bool = False,
        decay_init: str = "local",
        param: str = "dlr",
        lambda_init: str = "hippo",
        dt_min: float = 1e-3,
        dt_max: float = 1e-1,
        impl: str = "auto",
    ) -> None:
        super().__init__()
        check_positive("DLR", d_model=d_model, state_size=state_size)
        self.kernel = check_choice("DLR", "kernel", kernel, ("re", "prod"))
        self.bidirectional = bool(bidirectional)
        check_choice("DLR", "decay_init", decay_init, ("local", "zero", "unit"))
        self.param = check_choice("DLR", "param", param, ("dlr", "dss_exp"))
        check_choice("DLR", "lambda_init", lambda_init, ("hippo", "lin"))
        if not 0 < dt_min <= dt_max:
            raise ConfigError(f"DLR: need 0 < dt_min ≤ dt_max, got dt_min={dt_min!r}, dt_max={dt_max!r}")
        self.state_size, self.impl = state_size, impl
        shape = ((2,) if self.bidirectional else ()) + (d_model, state_size)
        if param == "dss_exp":
            if lambda_init == "lin":
                omega = math.pi * torch.arange(state_size, dtype=torch.float32)
            else:
                omega = hippo_skew_frequencies(state_size)
            self.theta = nn.Parameter(omega.expand(shape).clone())
            self.a = nn.Parameter(torch.full(shape, math.log(0.5)))
            log_dt = torch.empty(shape[:-1]).uniform_(math.log(dt_min), math.log(dt_max))
            self.log_dt = nn.Parameter(log_dt)
            scale = 1.0
        else:
            n = torch.arange(state_size, dtype=torch.float32)
            self.theta = nn.Parameter((2 * math.pi * n / state_size).expand(shape).clone())
            if decay_init == "zero":
                a = torch.zeros(shape)
            elif decay_init == "unit":  # the authors' atomic-task init: Re log λ = −Δ/2, Δ = 1e-5
                a = torch.full(shape, math.sqrt(UNIT_DT / 2))
            else:
                r = torch.empty(shape).uniform_(math.log(5e-4), math.log(0.5))
                a = torch.sqrt(torch.exp(r) / 2)
            self.a = nn.Parameter(a)
            scale = 1.0 / state_size
        self.w_re = nn.Parameter(torch.randn(shape) * scale)
        self.w_im = nn.Parameter(torch.randn(shape) * scale)
        self.out_proj = nn.Linear(d_model, d_model)

    @property
    def recurrent(self) -> bool:  # type: ignore[override]
        return not self.bidirectional

    def params(self, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """(log λ, w) as complex tensors of the precision of the real dtype ``dtype``."""
        cdt = torch.complex128 if dtype == torch.float64 else torch.complex64
        rdt = torch.float64 if cdt == torch.complex128 else torch.float32
        w = torch.complex(self.w_re.to(rdt), self.w_im.to(rdt)).to(cdt)
        if self.param == "dss_exp":  # ZOH: log λ̄ = λΔ, w̄ = w (e^{λΔ} − 1)/λ (DSS Prop. 1(a))
            lam = torch.complex(-torch.exp(self.a.to(rdt)), self.theta.to(rdt)).to(cdt)
            log_lambda = lam * torch.exp(self.log_dt.to(rdt))[..., None]
            return log_lambda, w * torch.expm1(log_lambda) / lam
        log_lambda = torch.complex(-(self.a.to(rdt) ** 2), self.theta.to(rdt))
        return log_lambda.to(cdt), w

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

    def set_state_vector(self, state: State, vector: torch.Tensor) -> State:
        x = state["x"]
        pairs = vector.to(torch.view_as_real(x).dtype).reshape(*x.shape, 2).contiguous()
        return {**state, "x": torch.view_as_complex(pairs)}


def hippo_skew_frequencies(n: int) -> torch.Tensor:
    """The N frequencies ω > 0 of DSS's initialization λ = −1/2 + iω: ±iω are the eigenvalues of the skew-symmetric
    part of the normal part of HiPPO-LegS of size 2N, S_nk = −sign(n − k)·√((2n+1)(2k+1))/2."""
    idx = torch.arange(2 * n, dtype=torch.float64)
    root = torch.sqrt(2 * idx + 1)
    skew = -torch.sign(idx[:, None] - idx[None, :]) * root[:, None] * root[None, :] / 2
    omega = torch.linalg.eigvalsh(1j * skew.to(torch.complex128))  # iS is Hermitian: eigenvalues ∓ω
    return omega[omega > 0].sort().values.to(torch.float32)[:n]


class DLRProd(DLR):
    """DLR-prod (DLR §2.1): the DLR with kernel Re K · Im K (``kernel="prod"``)."""

    def __init__(self, d_model: int, state_size: int = 64, **kwargs) -> None:
        super().__init__(d_model, state_size, kernel="prod", **kwargs)


class DSSExp(DLR):
    """DSS_exp (DSS Prop. 1(a); DLR §2.2): the ZOH-discretized diagonal state space (``param="dss_exp"``)."""

    def __init__(self, d_model: int, state_size: int = 64, **kwargs) -> None:
        super().__init__(d_model, state_size, param="dss_exp", **kwargs)
