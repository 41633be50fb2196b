"""DeltaProduct (Siems et al. 2025) and DeltaNet (n_h = 1): a linear RNN whose transitions are GH products.

Negative-eigenvalues §4.2 / Table 1 (fla's form): per head, a state S ∈ R^{dk×dv}; token x_t gives a query q_t,
n_h keys k_{t,j} (L2-normalized), values v_{t,j} and β_{t,j}, and

    S ← (I − β_{t,j} k_{t,j} k_{t,j}ᵀ) S + β_{t,j} k_{t,j} v_{t,j}ᵀ   (j = 1..n_h),     o_t = Sᵀ q_t,

so every column of S moves by A(x_t) = C_{n_h} ⋯ C_1 with C_j = I − β_j k_j k_jᵀ (:meth:`DeltaProduct.transition`).

β parameterization: β = β_max · sigmoid(z), β_max = 1 for ``beta_range=(0, 1)`` and 2 for ``(0, 2)`` (the fix of
the negative-eigenvalues paper: `2 * sigmoid`). The map saturates *exactly* in floating point: sigmoid(z) rounds to
1 for z ≥ 37 in float64 (z ≥ 17 in float32) and to 0 for z ≤ −710 (z ≤ −89), so β = 2 (a reflection, eigenvalue
−1) and β = 0 are reachable with finite weights (:data:`SATURATED_LOGIT`); no clamp cuts the gradient elsewhere.
Eigenvalues of A(x): with β ∈ [0, 1] each factor is symmetric positive semidefinite, so for n_h ≤ 2 the product's
eigenvalues lie in [0, 1]; from n_h = 3 on, products of such factors can have complex eigenvalues (still of modulus
≤ 1). With β ∈ [0, 2], ‖A(x)‖ ≤ 1 (Proposition 1) and eigenvalues lie in the unit disk.

Form (``form``): ``"fla"`` (the default) is the layer as flash-linear-attention and the negative-eigenvalues
authors define it — the output of every head goes through an RMSNorm over its dv values (one learned gain shared
by the heads, ε = 1e−5) before o_proj, every projection starts from Xavier-uniform weights with gain 2^−2.5
(:data:`FLA_INIT_GAIN`), and the β projection has no bias. ``"plain"`` is the bare recurrence: no output norm,
PyTorch's default Linear initialization, a bias on the β projection. ``output_norm`` overrides the form's norm
(``SequenceModel.from_compiled`` turns it off: an RMSNorm over dv = 1 value would return ±1).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..ops import delta_product
from .base import ConfigError, SequenceLayer, State, check_choice, check_positive
from .conv import ShortConv

#: the layer's forms (module docstring)
FORMS = ("fla", "plain")
#: the Xavier-uniform gain of fla's DeltaNet projections (``_initialize_weights``)
FLA_INIT_GAIN = 2**-2.5
#: ε of the per-head output RMSNorm (fla's ``norm_eps``)
OUTPUT_NORM_EPS = 1e-5

#: |z| at which β_max·sigmoid(z) is exactly β_max (z > 0) or exactly 0 (z < 0) in every float dtype
SATURATED_LOGIT = 1000.0


class DeltaProduct(SequenceLayer):
    """DeltaProduct token mixer; ``n_h=1`` is DeltaNet.

    Parameters: ``heads`` H, ``head_dim`` dk, ``value_dim`` dv (default dk), ``n_h`` delta steps per token,
    ``beta_range`` (0, 1) | (0, 2), ``short_conv`` (a causal depthwise convolution of size ``conv_size`` with SiLU on
    q, k, v, as in fla), ``conv_bias`` (a bias in that convolution: False as fla's ``ShortConvolution``; runs written
    before the option had one, nn/train/config.py ``read_run_record``), ``normalize_q`` (L2-normalize queries too,
    fla's default), ``learn_h0`` (S_0 is a parameter, zero at init; else a zero buffer), ``impl`` passed to
    :func:`fsa2rnn.nn.ops.delta_product`, ``form`` "fla" | "plain" and ``output_norm`` (None: the form's) as in the
    module docstring.
    State: ``{"S": (B, H, dk, dv), "conv": (B, conv_size − 1, channels) | None}``.
    """

    #: the form of transition(x) (nn/capabilities.py): what compare's spectra and the eigenvalue checks read
    transition_kind = "matrix"
    transition_steady = True  # transition(x, steady=True): A(x) inside a run of x (the conv window full)

    def __init__(
        self,
        d_model: int,
        heads: int = 2,
        head_dim: int = 16,
        n_h: int = 1,
        *,
        value_dim: int | None = None,
        beta_range: Sequence[float] = (0, 2),
        short_conv: bool = True,
        conv_size: int = 4,
        conv_bias: bool = False,
        normalize_q: bool = True,
        learn_h0: bool = True,
        impl: str = "auto",
        form: str = "fla",
        output_norm: bool | None = None,
    ) -> None:
        super().__init__()
        value_dim = head_dim if value_dim is None else value_dim
        check_positive("DeltaProduct", d_model=d_model, heads=heads, head_dim=head_dim, n_h=n_h, value_dim=value_dim)
        self.beta_range = check_choice("DeltaProduct", "beta_range", beta_range, ((0, 1), (0, 2)))
        self.beta_max = float(self.beta_range[1])
        self.heads, self.head_dim, self.value_dim, self.n_h = heads, head_dim, value_dim, n_h
        self.normalize_q, self.impl = normalize_q, impl
        self.form = check_choice("DeltaProduct", "form", form, FORMS)
        if output_norm is not None and not isinstance(output_norm, bool):
            raise ConfigError(f"DeltaProduct: output_norm must be true, false or null, got {output_norm!r}")
        fla = self.form == "fla"
        self.q_proj = nn.Linear(d_model, heads * head_dim, bias=False)
        self.k_proj = nn.Linear(d_model, n_h * heads * head_dim, bias=False)
        self.v_proj = nn.Linear(d_model, n_h * heads * value_dim, bias=False)
        self.b_proj = nn.Linear(d_model, n_h * heads, bias=not fla)
        self.o_proj = nn.Linear(heads * value_dim, d_model, bias=False)
        use_norm = fla if output_norm is None else output_norm
        self.o_norm = nn.RMSNorm(value_dim, eps=OUTPUT_NORM_EPS) if use_norm else None
        if fla:
            for proj in (self.q_proj, self.k_proj, self.v_proj, self.b_proj, self.o_proj):
                nn.init.xavier_uniform_(proj.weight, gain=FLA_INIT_GAIN)
        channels = (1 + n_h) * heads * head_dim + n_h * heads * value_dim
        self.conv = ShortConv(channels, conv_size, bias=conv_bias) if short_conv else None
        h0 = torch.zeros(heads, head_dim, value_dim)
        if learn_h0:
            self.h0 = nn.Parameter(h0)
        else:
            self.register_buffer("h0", h0)

    # ------------------------------------------------------------------ pieces
    def _qkv(
        self, x: torch.Tensor, cache: torch.Tensor | None
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """x (B, T, d_model) → q (B, T, H, dk), k (B, T, n_h, H, dk) normalized, v, β, conv cache."""
        bsz, length, _ = x.shape
        H, dk, dv, n_h = self.heads, self.head_dim, self.value_dim, self.n_h
        q, k, v = self.q_proj(x), self.k_proj(x), self.v_proj(x)
        if self.conv is not None:
            qkv, cache = self.conv(torch.cat([q, k, v], dim=-1), cache)
            q, k, v = qkv.split([H * dk, n_h * H * dk, n_h * H * dv], dim=-1)
        q = q.reshape(bsz, length, H, dk)
        k = F.normalize(k.reshape(bsz, length, n_h, H, dk), dim=-1)
        if self.normalize_q:
            q = F.normalize(q, dim=-1)
        v = v.reshape(bsz, length, n_h, H, dv)
        beta = self.beta(x).reshape(bsz, length, n_h, H)
        return q, k, v, beta, cache

    def beta(self, x: torch.Tensor) -> torch.Tensor:
        """β = β_max · sigmoid(z(x)), (…, n_h · H)."""
        return self.beta_max * torch.sigmoid(self.b_proj(x))

    # ------------------------------------------------------------------ interface
    def forward(self, x: torch.Tensor, state: State | None = None, return_state: bool = False):
        bsz = x.shape[0]
        q, k, v, beta, cache = self._qkv(x, None if state is None else state["conv"])
        s0 = self.h0.to(x.dtype).expand(bsz, *self.h0.shape) if state is None else state["S"]
        o, s_t = delta_product(q, k, v, beta, s0, impl=self.impl)
        if self.o_norm is not None:  # (B, T, H, dv): each head's output normalized on its own
            o = self.o_norm(o)
        y = self.o_proj(o.reshape(bsz, x.shape[1], self.heads * self.value_dim))
        return self._out(y, {"S": s_t, "conv": cache}, return_state)

    def transition(self, x: torch.Tensor, steady: bool = False) -> torch.Tensor:
        """A(x) = C_{n_h} ⋯ C_1, (…, H, dk, dk), for tokens x (…, d_model) read with no history, or with
        ``steady`` after x x … x (the short convolution's window full of x)."""
        xs, lead = self._tokens(x, self.conv.kernel_size if steady and self.conv is not None else 1)
        _, k, _, beta, _ = self._qkv(xs, None)
        k, beta = k[:, -1], beta[:, -1]  # (N, n_h, H, dk), (N, n_h, H)
        eye = torch.eye(self.head_dim, dtype=k.dtype, device=k.device)
        a = eye.expand(k.shape[0], self.heads, -1, -1)
        for j in range(self.n_h):
            kj = k[:, j]
            a = (eye - beta[:, j, :, None, None] * kj[..., :, None] * kj[..., None, :]) @ a
        return a.reshape(*lead, self.heads, self.head_dim, self.head_dim)

    def state_vector(self, state: State) -> torch.Tensor:
        return state["S"].reshape(len(state["S"]), -1)

    def set_state_vector(self, state: State, vector: torch.Tensor) -> State:
        return {**state, "S": vector.reshape(state["S"].shape).to(state["S"])}


class DeltaNet(DeltaProduct):
    """DeltaNet: DeltaProduct with one delta step per token (``n_h=1``)."""

    def __init__(self, d_model: int, heads: int = 2, head_dim: int = 16, **kwargs) -> None:
        if kwargs.get("n_h", 1) != 1:
            raise ConfigError(f"DeltaNet: n_h must be 1, got {kwargs['n_h']!r} (use DeltaProduct)")
        kwargs.pop("n_h", None)
        super().__init__(d_model, heads, head_dim, 1, **kwargs)
