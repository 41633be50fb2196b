"""PD-SSM (Terzić et al. 2025, arXiv 2509.22284): a state space model whose transition is a column one-hot matrix
times a complex diagonal, A(x) = P(x) D(x), as in the baseline of Brandoit et al. (their code's PDSSM cell).

For an input x_t ∈ R^{d_model} and N states (the paper's eqs. (3)–(5)):

    M_t = Σ_k softmax(W_s x_t + b_s)_k M^{(k)}    (a dictionary of K matrices N × N),
    P_t = column hardmax of M_t                  (column j has its one in row argmax_i M_t[i, j]),
    D_t = diag(σ(MLP_r(x_t)) · exp(2πi σ(MLP_φ(x_t))))   (|D| ∈ (0, 1): BIBO-stable),
    h_t = P_t D_t h_{t−1} + B x_t,   y_t = W_o (C [Re h_t; Im h_t] + c + D_skip x_t) + b_o,

B x_t complex (a linear map to 2N reals), the MLPs Linear–GELU–Linear of width ``mlp_hidden``. The hardmax has
the paper's surrogate gradient (nn/ops/pd_scan: in the backward pass P_t acts as the column softmax of M_t).
Initialization as the authors': M^{(k)} ~ N(0, 1/N), |D| uniform in [r_min, r_max] and the phase's sigmoid
uniform at the output biases, lecun-normal linear weights and zero biases, D_skip Glorot-uniform.
One layer of N states can emulate any N-state automaton (the paper's Prop. 1; ``fsa2rnn compile --target
pdssm`` writes such a layer, :meth:`SequenceModel.from_compiled` loads it here).
:meth:`PDSSM.transition` returns A(x) as a dense complex N × N matrix.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from ..ops import pd_dict_st_scan
from .base import ConfigError, SequenceLayer, State, check_positive, lecun_normal_

_COMPLEX = {torch.float32: torch.complex64, torch.float64: torch.complex128}


class PDSSM(SequenceLayer):
    """PD-SSM token mixer (module docstring).

    Parameters: ``state_size`` N (None: d_model), ``n_dict`` K (8), ``mlp_hidden`` (None: d_model), ``r_min`` and
    ``r_max`` (the initial range of |D|), ``learn_h0`` (h_0 a parameter; else a buffer, zero as the authors' unless
    set, e.g. to e_{q0} by :meth:`SequenceModel.from_compiled`), ``impl`` for the scan. State: ``{"h": (B, N)
    complex}``. The recurrence runs in complex64 (float32 and lower inputs) or complex128 (float64) on
    :func:`pd_dict_st_scan`, which holds one time block of the column logits M_t at a time (B·C·N² ≈ 2²⁴ numbers;
    recomputed in the backward pass).
    """

    #: the form of transition(x) (nn/capabilities.py): what compare's spectra and the eigenvalue checks read
    transition_kind = "matrix"

    def __init__(
        self,
        d_model: int,
        state_size: int | None = None,
        *,
        n_dict: int = 8,
        mlp_hidden: int | None = None,
        r_min: float = 0.9,
        r_max: float = 0.999,
        learn_h0: bool = False,
        impl: str = "auto",
    ) -> None:
        super().__init__()
        n = d_model if state_size is None else state_size
        hidden = d_model if mlp_hidden is None else mlp_hidden
        check_positive("PDSSM", d_model=d_model, state_size=n, n_dict=n_dict, mlp_hidden=hidden)
        if not 0 < r_min <= r_max < 1:
            raise ConfigError(f"PDSSM: need 0 < r_min ≤ r_max < 1, got r_min={r_min!r}, r_max={r_max!r}")
        self.state_size, self.n_dict, self.impl = n, n_dict, impl
        self.selector = nn.Linear(d_model, n_dict)
        self.dictionary = nn.Parameter(torch.randn(n_dict, n, n) / math.sqrt(n))
        self.mag_in, self.mag_out = nn.Linear(d_model, hidden), nn.Linear(hidden, n)
        self.phase_in, self.phase_out = nn.Linear(d_model, hidden), nn.Linear(hidden, n)
        self.B = nn.Linear(d_model, 2 * n)
        self.C = nn.Linear(2 * n, d_model)
        self.D_skip = nn.Parameter(torch.empty(d_model, d_model))
        self.out_proj = nn.Linear(d_model, d_model)
        for m in self.modules():
            if isinstance(m, nn.Linear):
                lecun_normal_(m)
        with torch.no_grad():
            nn.init.xavier_uniform_(self.D_skip)
            r = torch.empty(n).uniform_(r_min, r_max)
            self.mag_out.bias.copy_(torch.log(r / (1 - r)))  # σ(bias) = r
            v = torch.empty(n).uniform_(1e-3, 1 - 1e-3)
            self.phase_out.bias.copy_(torch.log(v / (1 - v)))  # σ(bias) = v, a phase 2πv
        h0 = torch.zeros(n, 2)  # (re, im) pairs
        if learn_h0:
            self.h0 = nn.Parameter(h0)
        else:
            self.register_buffer("h0", h0)

    # ------------------------------------------------------------------ the pieces of A(x) and the drive
    def column_logits(self, x: torch.Tensor) -> torch.Tensor:
        """M(x) (…, N, N): the selector's softmax mixture of the dictionary."""
        return torch.einsum("...k,kij->...ij", torch.softmax(self.selector(x), -1), self.dictionary.to(x.dtype))

    def diagonal(self, x: torch.Tensor) -> torch.Tensor:
        """D(x) (…, N) complex: σ(MLP_r(x)) e^{2πi σ(MLP_φ(x))}."""
        mag = torch.sigmoid(self.mag_out(F.gelu(self.mag_in(x))))
        phase = 2 * math.pi * torch.sigmoid(self.phase_out(F.gelu(self.phase_in(x))))
        real = _complex(x.dtype).to_real()  # torch.polar takes float32/64 only
        return torch.polar(mag.to(real), phase.to(real))

    def forward(self, x: torch.Tensor, state: State | None = None, return_state: bool = False):
        bsz = x.shape[0]
        diag = self.diagonal(x)
        b = self.B(x).to(diag.real.dtype).unflatten(-1, (2, self.state_size))
        drive = torch.view_as_complex(b.transpose(-1, -2).contiguous())
        if state is None:
            h0 = torch.view_as_complex(self.h0.to(diag.real.dtype).contiguous()).expand(bsz, -1)
        else:
            h0 = state["h"]
        weights = torch.softmax(self.selector(x), -1).to(diag.real.dtype)
        dictionary = self.dictionary.to(diag.real.dtype)
        h, _ = pd_dict_st_scan(weights, dictionary, diag, drive, h0, impl=self.impl)
        y = self.C(torch.cat([h.real, h.imag], -1).to(x.dtype)) + x @ self.D_skip.to(x.dtype)
        return self._out(self.out_proj(y), {"h": h[:, -1] if h.shape[1] else h0}, return_state)

    def transition_indices(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(idx (…, N) int64, diag (…, N) complex): A(x) = P(x) D(x) for tokens x (…, d_model), P's column j with
        its one in row idx[j]."""
        return self.column_logits(x).argmax(-2), self.diagonal(x)

    def transition(self, x: torch.Tensor) -> torch.Tensor:
        """A(x) = P(x) D(x), (…, N, N) complex, for tokens x (…, d_model)."""
        idx, diag = self.transition_indices(x)
        a = torch.zeros(*idx.shape, self.state_size, dtype=diag.dtype, device=diag.device)
        return a.scatter_(-2, idx[..., None, :], diag[..., None, :])  # column j: diag[j] in row idx[j]


def _complex(dtype: torch.dtype) -> torch.dtype:
    return _COMPLEX.get(torch.promote_types(dtype, torch.float32), torch.complex64)

