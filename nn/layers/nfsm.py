"""The trainable Neural Finite-State Machine layer (length-independent-state-tracking §5–6; docs/theory.md, "Neural
Finite-State Machines").

Head i has d_i attractor indices. A token x gives logits θ_i(x) = (W x + b)_i ∈ R^{d_i×d_i}, θ[k, j] the score of
moving from index k to j; the head's index moves by the table σ_x(k) = argmax_j θ_x[k, j], h_t = σ_{x_t}(h_{t−1}), and
the layer outputs out_proj(concat_i a_{h_t}) with one-hot attractors a_k = e_k.

- Training (``self.training``): the straight-through Gumbel-softmax scan :func:`fsa2rnn.nn.ops.st_table_scan` —
  forward the hard tables of argmax(θ + g), backward softmax((θ + g)/τ) on the realized rows (τ = 0.5, the paper's).
  Noise g comes from torch's global generator (seed it), scaled by ``gumbel`` (1: the paper's Gumbel-softmax
  estimator; 0 or False: no noise, the deterministic straight-through estimator). Data-parallel training sets
  ``batch_rows = (global batch, start, stop)``: the noise is then drawn for the whole global batch and rows
  start..stop−1 are used, so that with the generator seeded alike on every rank it does not depend on the rank.
- Inference: the exact table scan of argmax θ (nn/ops/table_scan), no noise.

Exploration (Brandoit et al.'s anchored and free arms): with ``track = True`` the layer keeps, after each forward,
``aux = {"states", "indices", "excess"}``: the straight-through one-hot states (B, T, H, d_max) and indices
(B, T, H) of the scan, and in training the exploration excess (B, T) = mean over heads of
relu(std_j(θ[h_{t−1}, j] / τ) / (π/√6) − 1)², the spread of each realized row beyond the Gumbel noise's.

The start index is learnable: ``start_logits`` (H, d_max); h_0 = argmax of its row; with ``fixed_start`` every head
starts on index 0 (the authors' NFSM; the anchored arm's codes put the initial state there). In training the start
is the step 0 of the scan with the constant table k ↦ argmax_j start_logits[j] (every row of θ_0 is the start row), so
the start receives the straight-through gradient like any step. Heads of different sizes are padded to d_max with
logits that no argmax or softmax picks (:data:`PAD_LOGIT`).

Convolution (``conv`` = K > 0; Brandoit et al.'s code, ``CONV_KERNEL = 2`` on TSO_N): the logits read
u_t = silu(Σ_{i<K} w_i ⊙ x_{t−K+1+i} + b), a causal depthwise convolution of K taps before the tables (their
``RecurrentLayer``: cell(conv(norm(x)))), its kernel drawn U(±√(3/K)) and its bias 0 as theirs; the state then also
carries the last K − 1 inputs (``"conv"``). ``conv_identity`` starts it at the identity tap (w_{K−1} = 1, the others
0, no bias) without the SiLU, so that a compiled NFSM computes exactly what it computes without the convolution
(``SequenceModel.from_compiled(…, nfsm_conv=K)``, ``--init-from``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from ..ops import st_table_scan
from ..ops.st_table_scan import gumbel_noise
from ..ops.table_scan import table_scan
from .base import ConfigError, SequenceLayer, State, is_finite_number

#: logit of the padding entries of heads smaller than d_max (finite, so no softmax row turns NaN)
PAD_LOGIT = -1e4


#: logits (positions × H · d_max²) the exact forward computes at once: the transient θ stays within 64 MiB (float32)
LOGIT_BLOCK = 1 << 24
#: the standard deviation of a standard Gumbel variable, π/√6
GUMBEL_STD = math.pi / math.sqrt(6.0)


class NFSM(SequenceLayer):
    """NFSM token mixer: ``heads`` = [d_1, …, d_r] attractor indices per head, temperature ``tau``, Gumbel noise
    scale ``gumbel``.

    State: ``{"indices": (B, H) int64}``, the current index of every head.
    """

    def __init__(
        self,
        d_model: int,
        heads: Sequence[int] = (8,),
        *,
        tau: float = 0.5,
        gumbel: float | bool = 1.0,
        identity_bias: float = 0.0,
        readout_std: float | None = None,
        fixed_start: bool = False,
        conv: int = 0,
        conv_identity: bool = False,
        impl: str = "auto",
    ) -> None:
        super().__init__()
        if not isinstance(conv, int) or isinstance(conv, bool) or conv < 0:
            raise ConfigError(f"NFSM: conv (the convolution's taps, 0 for none) must be an integer ≥ 0, got {conv!r}")
        if not isinstance(conv_identity, bool):
            raise ConfigError(f"NFSM: conv_identity must be true or false, got {conv_identity!r}")
        if not isinstance(fixed_start, bool):
            raise ConfigError(f"NFSM: fixed_start must be true or false, got {fixed_start!r}")
        self.fixed_start, self.track, self.aux = fixed_start, False, {}
        heads = [heads] if isinstance(heads, int) else list(heads)
        if not heads or any(not isinstance(d, int) or isinstance(d, bool) or d < 1 for d in heads):
            raise ConfigError(f"NFSM: heads must be a non-empty list of positive integers, got {heads!r}")
        if not isinstance(tau, (int, float)) or not tau > 0:
            raise ConfigError(f"NFSM: tau must be a number > 0, got {tau!r}")
        if not isinstance(gumbel, (int, float)) or not gumbel >= 0:
            raise ConfigError(f"NFSM: gumbel (the noise scale) must be a number ≥ 0, got {gumbel!r}")
        self.heads, self.tau, self.gumbel, self.impl = heads, float(tau), float(gumbel), impl
        self.batch_rows: tuple[int, int, int] | None = None  # (global batch, start, stop); see the module docstring
        self.d_max = max(heads)
        self.logits = nn.Linear(d_model, sum(d * d for d in heads))
        self.start_logits = nn.Parameter(torch.zeros(len(heads), self.d_max))
        self.out_proj = nn.Linear(sum(heads), d_model, bias=False)
        valid = torch.zeros(len(heads), self.d_max, dtype=torch.bool)
        for i, d in enumerate(heads):
            valid[i, :d] = True
        self.register_buffer("valid", valid, persistent=False)  # (H, d_max): index j < d_i
        self._init_tables(identity_bias, readout_std)
        self.conv = TapConv(d_model, conv, identity=conv_identity) if conv else None

    def _init_tables(self, identity_bias: float, readout_std: float | None) -> None:
        """Initialization options of the training recipes (docs/guide/training.md): ``identity_bias`` b adds b to the
        bias of every θ[k, k], so that every table starts near the identity (the right table of an identity
        symbol, and a row that moves only when the loss asks); ``readout_std`` s draws ``out_proj`` from
        N(0, s²) instead of the Linear default, so that an index no word has reached yet is read out as clearly
        as a used one and the straight-through choice of a row can pick it (the default's small columns make
        training merge states). Drawn last, after the default initialization."""
        if not is_finite_number(identity_bias):
            raise ConfigError(f"NFSM: identity_bias must be a finite number, got {identity_bias!r}")
        if readout_std is not None and not (is_finite_number(readout_std) and readout_std > 0):
            raise ConfigError(f"NFSM: readout_std must be a number > 0 or None, got {readout_std!r}")
        with torch.no_grad():
            start = 0
            for d in self.heads:
                if identity_bias:
                    self.logits.bias[start : start + d * d].view(d, d).add_(identity_bias * torch.eye(d))
                start += d * d
            if readout_std is not None:
                self.out_proj.weight.normal_(0.0, float(readout_std))

    # ------------------------------------------------------------------ logits and tables
    def head_logits(self, x: torch.Tensor) -> torch.Tensor:
        """θ (…, H, d_max, d_max), padded: entries outside a head's d_i × d_i block are PAD_LOGIT."""
        flat = self.logits(x)
        out = flat.new_full((*flat.shape[:-1], len(self.heads), self.d_max, self.d_max), PAD_LOGIT)
        start = 0
        for i, d in enumerate(self.heads):
            out[..., i, :d, :d] = flat[..., start : start + d * d].unflatten(-1, (d, d))
            start += d * d
        return out

    def start_indices(self) -> torch.Tensor:
        """h_0 (H,) = argmax over each head's valid entries of ``start_logits`` (0 with ``fixed_start``)."""
        if self.fixed_start:
            return torch.zeros(len(self.heads), dtype=torch.long, device=self.start_logits.device)
        return self.start_logits.masked_fill(~self.valid, float("-inf")).argmax(-1)

    def transition(self, x: torch.Tensor, steady: bool = False) -> torch.Tensor:
        """Tables σ_x (…, H, d_max) int64 of inputs x read as single tokens (entries past d_i are the identity, never
        reached); with a convolution, x after nothing (its window zeros) or, ``steady``, after x x … x."""
        if self.conv is not None:
            x = self.conv.single(x, steady)
        return self._tables(x)

    def _tables(self, x: torch.Tensor) -> torch.Tensor:
        """Tables σ (…, H, d_max) of the logits' inputs x (after the convolution). The logits θ are computed for
        LOGIT_BLOCK entries at a time: only the tables of all positions are kept (64 indices per head are 4096
        logits a position)."""
        flat = x.reshape(-1, x.shape[-1])
        step = max(1, LOGIT_BLOCK // (len(self.heads) * self.d_max**2))
        blocks = [self.head_logits(flat[i : i + step]).argmax(-1) for i in range(0, max(1, flat.shape[0]), step)]
        tables = torch.cat(blocks).view(*x.shape[:-1], len(self.heads), self.d_max)
        ident = torch.arange(self.d_max, device=tables.device)
        return torch.where(self.valid, tables, ident)

    def outputs(self, states: torch.Tensor) -> torch.Tensor:
        """One-hot states (…, H, d_max) → out_proj(concat_i a_{h_t}) (…, d_model)."""
        parts = [states[..., i, :d] for i, d in enumerate(self.heads)]
        return self.out_proj(torch.cat(parts, dim=-1).to(self.out_proj.weight.dtype))

    # ------------------------------------------------------------------ forward
    def forward(self, x: torch.Tensor, state: State | None = None, return_state: bool = False):
        bsz, length, _ = x.shape
        h0 = None if state is None else state["indices"]
        after: State = {}
        if self.conv is not None:
            x, after["conv"] = self.conv(x, None if state is None else state.get("conv"))
        if self.training:
            states, idx = self._relaxed(x, h0)
        else:
            idx = self._scan(x, h0)
            states = F.one_hot(idx.clamp(min=0), self.d_max).to(x.dtype)
            if self.track:
                self.aux = {"states": states, "indices": idx}
        last = idx[:, -1] if length else (self.start_indices().expand(bsz, -1) if h0 is None else h0)
        return self._out(self.outputs(states), {"indices": last, **after}, return_state)

    def indices(self, x: torch.Tensor, h0: torch.Tensor | None = None) -> torch.Tensor:
        """The exact scan: head indices h_t (B, T, H) of the tables argmax θ(x_t), from ``h0`` (B, H) or the start
        (words from their start: a convolution's window starts at zeros)."""
        if self.conv is not None:
            x, _ = self.conv(x)
        return self._scan(x, h0)

    def _scan(self, x: torch.Tensor, h0: torch.Tensor | None = None) -> torch.Tensor:
        """The exact scan of the logits' inputs x (after the convolution)."""
        bsz, length, _ = x.shape
        r = len(self.heads)
        tables = self._tables(x)  # (B, T, H, d)
        if h0 is None:
            h0 = self.start_indices().expand(bsz, r)
        flat = tables.transpose(1, 2).reshape(bsz * r, length, self.d_max)
        idx = table_scan(flat, h0.reshape(-1))
        return idx.view(bsz, r, length).transpose(1, 2)

    def _relaxed(self, x: torch.Tensor, h0: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
        theta = self.head_logits(x)  # (B, T, H, d, d)
        bsz, r = x.shape[0], len(self.heads)
        if h0 is None and self.fixed_start:
            h0 = torch.zeros(bsz, r, dtype=torch.long, device=x.device)
        if h0 is None:  # step 0: the constant table onto the start row's argmax
            start = self.start_logits.masked_fill(~self.valid, PAD_LOGIT).to(theta.dtype)
            theta = torch.cat([start[None, None, :, None, :].expand(bsz, 1, r, self.d_max, self.d_max), theta], dim=1)
            h0 = torch.zeros(bsz, r, dtype=torch.long, device=x.device)
        noise = None
        if self.gumbel:
            total, lo, hi = self.batch_rows or (bsz, 0, bsz)
            if hi - lo != bsz:
                raise ConfigError(f"NFSM: batch_rows {self.batch_rows} do not match the batch of {bsz} words")
            noise = gumbel_noise((total, *theta.shape[1:]), dtype=theta.dtype, device=theta.device)[lo:hi]
            if self.gumbel != 1.0:
                noise = noise * self.gumbel
        states, idx = st_table_scan(theta, h0, tau=self.tau, gumbel=noise, impl=self.impl)
        first = h0  # the index before the first symbol
        if theta.shape[1] > x.shape[1]:
            first = idx[:, 0]
            states, idx, theta = states[:, 1:], idx[:, 1:], theta[:, 1:]
        if self.track:
            prev = torch.cat([first[:, None], idx[:, :-1]], dim=1)
            self.aux = {"states": states, "indices": idx, "excess": self._excess(theta, prev)}
        return states, idx

    def _excess(self, theta: torch.Tensor, prev: torch.Tensor) -> torch.Tensor:
        """Exploration excess (B, T) of the realized rows θ[h_{t−1}] (see the module docstring)."""
        rows = theta.gather(3, prev[..., None, None].expand(*prev.shape, 1, self.d_max)).squeeze(3) / self.tau
        valid = self.valid.to(rows.dtype)  # (H, d)
        count = valid.sum(-1)
        mean = (rows * valid).sum(-1) / count
        var = (((rows - mean[..., None]) * valid) ** 2).sum(-1) / count
        ratio = torch.sqrt(var + 1e-12) / GUMBEL_STD
        return (F.relu(ratio - 1.0) ** 2).mean(-1)

    def state_vector(self, state: State) -> torch.Tensor:
        return torch.nn.functional.one_hot(state["indices"], self.d_max).reshape(len(state["indices"]), -1)

    def set_state_vector(self, state: State, vector: torch.Tensor) -> State:
        """Every head at its nearest attractor: the largest of its valid entries (the one-hot closest in L2)."""
        idx = state["indices"]
        rows = vector.reshape(*idx.shape, self.d_max).to(torch.float64)
        return {**state, "indices": rows.masked_fill(~self.valid.to(rows.device), float("-inf")).argmax(-1)}


class TapConv(nn.Module):
    """The causal depthwise convolution of K taps before an NFSM's logits (module docstring): (B, T, C) → (B, T, C),
    ``forward(x, cache) -> (y, cache)`` with the last K − 1 inputs as the cache, so that words read in chunks give
    the outputs of whole words."""

    def __init__(self, channels: int, taps: int, *, identity: bool = False) -> None:
        super().__init__()
        self.taps, self.identity = int(taps), bool(identity)
        self.weight = nn.Parameter(torch.empty(self.taps, channels))  # weight[i] multiplies x_{t−K+1+i}
        self.bias = nn.Parameter(torch.zeros(channels))
        with torch.no_grad():
            if identity:
                self.weight.zero_()
                self.weight[-1] = 1.0
            else:  # Brandoit et al.'s ShortConv: variance scaling 1, fan-in K, uniform
                bound = math.sqrt(3.0 / self.taps)
                self.weight.uniform_(-bound, bound)

    def _act(self, y: torch.Tensor) -> torch.Tensor:
        return y if self.identity else F.silu(y)

    def forward(self, x: torch.Tensor, cache: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        bsz, length, c = x.shape
        k = self.taps
        if cache is None:
            cache = x.new_zeros(bsz, k - 1, c)
        full = torch.cat([cache.to(x.dtype), x], dim=1)
        w = self.weight.to(x.dtype)
        y = self.bias.to(x.dtype) + sum(full[:, i : i + length] * w[i] for i in range(k))
        return self._act(y), full[:, full.shape[1] - (k - 1) :]

    def single(self, x: torch.Tensor, steady: bool = False) -> torch.Tensor:
        """x (…, C) read as one token: after zeros, or (``steady``) after x x … x (the whole window x)."""
        w = self.weight.to(x.dtype)
        return self._act(self.bias.to(x.dtype) + x * (w.sum(0) if steady else w[-1]))
