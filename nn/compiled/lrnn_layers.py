"""Linear RNN layers H_t = A(r_t) H_{t−1} + B(r_t) of compiled models (negative-eigenvalues §3.1): GH products
and diagonal, built from a :class:`~fsa2rnn.compiler.program.LinearLayer`.

Each layer looks its transition up by a row index r_t (computed by the model from the symbol and the upper layers'
decoded states) and decodes its hidden vectors to layer-state indices. Weights are frozen ``nn.Parameter``s (so
``.to(dtype)`` converts them); lookup tables are buffers. The trainable layers are in nn/layers
(``SequenceModel.from_compiled`` converts a compiled model into them).

- :class:`GHLinearRNN`: A(r) = (I − β_k v_k v_kᵀ) ⋯ (I − β_1 v_1 v_1ᵀ). ``mode="fused"`` uses the stored exact
  product (0/±1 entries stay exact in every dtype); ``mode="factors"`` applies the factors one by one at the working
  dtype (v has entries ±1/√2, so rounding enters). ``scan="sequential"`` (the reference), ``"parallel"`` (chunked
  scans: monomial form for permutation/reset layers, else the affine chunked scan, which rounds differently) or
  ``"auto"`` (the monomial chunked scan where it applies — bit-identical to the sequential recurrence — else the
  sequential recurrence).
- :class:`DiagonalLinearRNN`: A(r) = diag(λ_r), λ complex of modulus 1 (or 0 on reset rows), kept as (re, im).

Both have ``step(h, rows)``: one step of the recurrence on a batch of hidden states (the recurrent form the
steppers of fsa2rnn.realize perturb), the same arithmetic as the sequential scan.
"""

from __future__ import annotations

import torch
from torch import nn

from ...compiler.model import CompiledModel
from ...compiler.program import half_norms
from ...compiler.registry import program_of
from ...compiler.targets.lrnn.program import HashReadout, LinearLayer
from ..ops.lrnn_scan import (
    cmul,
    monomial_form,
    monomial_scan,
    naive_recurrent_diagonal,
    naive_recurrent_gh,
    naive_recurrent_lrnn,
    parallel_scan_diagonal,
    parallel_scan_lrnn,
)
from .keys import KeyTable


def _frozen(x: torch.Tensor) -> nn.Parameter:
    return nn.Parameter(x, requires_grad=False)


def _tensor(a) -> torch.Tensor:
    return torch.from_numpy(a.copy())


SCANS = ("sequential", "parallel", "auto")


def _check_scan(scan: str) -> None:
    if scan not in SCANS:
        raise ValueError(f"unknown scan {scan!r} (choose from {', '.join(SCANS)})")


class _Readout(nn.Module):
    """Layer readout: nearest code point, or the hash of a permutation code (see compiler/targets/lrnn/README.md)."""

    #: score entries (positions × code points) computed at once by the nearest-code readout (a block stays in cache)
    BLOCK = 1 << 17

    def __init__(
        self, kind: str, width: int, codes: torch.Tensor | None = None, hkeys=None, hvals=None, code_states=None
    ) -> None:
        super().__init__()
        self.kind, self.width = kind, width
        if kind == "nearest":
            self.register_buffer("codes", codes)  # (S, n) or (S, n, 2) for complex codes
            if code_states is None:
                code_states = torch.arange(codes.shape[0])
            self.register_buffer("code_states", code_states)  # code point → layer state
        else:
            self.table = KeyTable(hkeys, hvals, width**width)
            self.register_buffer("powers", torch.zeros(width, dtype=torch.int64))  # nⁱ: HashReadout.powers

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        if self.kind == "nearest":
            # argmax_s ⟨c_s, h⟩ − ½‖c_s‖² (complex codes: Re⟨c, h⟩ = Σ c_re h_re + c_im h_im), in blocks of positions
            c = self.codes.to(h.dtype).reshape(self.codes.shape[0], -1)
            half, c_t = half_norms(c), c.T.contiguous()
            flat = h.reshape(-1, c.shape[1])
            step = max(256, self.BLOCK // c.shape[0])
            best = [
                torch.addmm(half, flat[i : i + step], c_t, beta=-1).argmax(-1) for i in range(0, flat.shape[0], step)
            ]
            best = torch.cat(best) if best else flat.new_empty(0, dtype=torch.int64)
            return self.code_states[best].view(h.shape[: h.dim() - self.codes.dim() + 1])
        # hash: the code values round to 1..n (exact integers in every dtype), key Σ (r_i − 1)·n^i
        r = torch.round(h)
        lo, hi = torch.aminmax(r, dim=-1)
        ok = (lo >= 1) & (hi <= self.width)
        if self.width**self.width <= 2**53:  # the key is exact in float64: one matrix-vector product
            key = (r.double() @ self.powers.double()).long() - int(self.powers.sum())
        else:
            key = ((r.clamp(1, self.width).long() - 1) * self.powers).sum(-1)
        return self.table(torch.where(ok, key, torch.full_like(key, -1)))


class GHLinearRNN(nn.Module):
    """GH-product linear RNN layer; rows index the per-input tables (R rows, k factors, width n)."""

    def __init__(self, n_rows: int, width: int, n_factors: int, readout: _Readout | None = None) -> None:
        super().__init__()
        self.width = width
        self.beta = _frozen(torch.zeros(n_rows, n_factors, dtype=torch.float64))
        v = torch.zeros(n_rows, n_factors, width, dtype=torch.float64)
        v[..., 0] = 1
        self.v = _frozen(v)
        self.B = _frozen(torch.zeros(n_rows, width, dtype=torch.float64))
        self.h0 = _frozen(torch.zeros(width, dtype=torch.float64))
        self.register_buffer("A_fused", torch.eye(width, dtype=torch.float64).repeat(n_rows, 1, 1))
        self.readout = readout

    @classmethod
    def from_program(cls, spec: LinearLayer) -> GHLinearRNN:
        """The layer of a parsed program's GH layer."""
        beta = _tensor(spec.stored["beta"])
        layer = cls(beta.shape[0], spec.width, beta.shape[1])
        with torch.no_grad():
            layer.beta.copy_(beta)
            layer.v.copy_(_tensor(spec.stored["v"]))
            layer.B.copy_(_tensor(spec.b))
            layer.h0.copy_(_tensor(spec.h0))
            layer.A_fused.copy_(_tensor(spec.a))
        ro = spec.readout
        if isinstance(ro, HashReadout):
            layer.readout = _Readout("hash", layer.width, hkeys=_tensor(ro.keys), hvals=_tensor(ro.values))
            layer.readout.powers.copy_(_tensor(ro.powers()))
        else:
            layer.readout = _Readout("nearest", layer.width, codes=_tensor(ro.codes))
        return layer

    @classmethod
    def from_compiled(cls, model: CompiledModel, index: int) -> GHLinearRNN:
        return cls.from_program(program_of(model).layers[index])

    def transition_matrices(self, mode: str = "fused") -> torch.Tensor:
        """A(r) for every row: the stored exact product, or the product of the factors at the working dtype."""
        if mode == "fused":
            return self.A_fused
        n = self.width
        a = torch.eye(n, dtype=self.v.dtype).expand(self.v.shape[0], n, n)
        for j in range(self.v.shape[1]):
            vj = self.v[:, j]
            c = torch.eye(n, dtype=vj.dtype) - self.beta[:, j, None, None] * vj[:, :, None] * vj[:, None, :]
            a = torch.matmul(c, a)
        return a

    def forward(self, rows: torch.LongTensor, *, mode: str = "fused", scan: str = "sequential") -> torch.Tensor:
        """rows (B, T) → hidden states H (B, T, n)."""
        _check_scan(scan)
        if mode == "fused" and scan != "sequential":
            form = monomial_form(self.A_fused, self.B)
            if form is not None:
                return monomial_scan(form, rows, self.h0)
        if mode == "factors" and scan != "parallel":
            return naive_recurrent_gh(self.beta, self.v, self.B, rows, self.h0)
        a = self.transition_matrices(mode)
        if scan == "parallel":
            return parallel_scan_lrnn(a, self.B, rows, self.h0)
        return naive_recurrent_lrnn(a, self.B, rows, self.h0)

    def step(self, h: torch.Tensor, rows: torch.Tensor, *, mode: str = "fused") -> torch.Tensor:
        """One step A(r) h + B(r) for hidden states h (N, n) and rows (N,): the fused product, or factor by factor
        h ← h − β v (vᵀh) (as nn/ops/lrnn_scan.naive_recurrent_gh)."""
        if mode == "fused":
            return torch.bmm(self.A_fused[rows], h.unsqueeze(-1)).squeeze(-1) + self.B[rows]
        bt, vt = self.beta[rows], self.v[rows]
        for j in range(bt.shape[1]):
            vj = vt[:, j]
            h = h - bt[:, j : j + 1] * vj * (vj * h).sum(-1, keepdim=True)
        return h + self.B[rows]

    def decode(self, h: torch.Tensor) -> torch.Tensor:
        return self.readout(h)


class DiagonalLinearRNN(nn.Module):
    """Diagonal linear RNN layer: h_t = λ(r_t) ⊙ h_{t−1} + b(r_t), complex values as (re, im) pairs."""

    def __init__(self, n_rows: int, width: int, readout: _Readout | None = None) -> None:
        super().__init__()
        self.width = width
        self.lam = _frozen(torch.ones(n_rows, width, 2, dtype=torch.float64))
        self.b = _frozen(torch.zeros(n_rows, width, 2, dtype=torch.float64))
        self.h0 = _frozen(torch.zeros(width, 2, dtype=torch.float64))
        self.readout = readout

    @classmethod
    def from_program(cls, spec: LinearLayer) -> DiagonalLinearRNN:
        """The layer of a parsed program's diagonal layer."""

        def pairs(z):
            return torch.stack([_tensor(z.real), _tensor(z.imag)], -1)

        codes = pairs(spec.readout.codes)
        readout = _Readout("nearest", spec.width, codes, None, None, _tensor(spec.readout.code_states))
        layer = cls(spec.n_rows, spec.width, readout)
        with torch.no_grad():
            layer.lam.copy_(pairs(spec.a))
            layer.b.copy_(pairs(spec.b))
            layer.h0.copy_(pairs(spec.h0))
        return layer

    @classmethod
    def from_compiled(cls, model: CompiledModel, index: int) -> DiagonalLinearRNN:
        return cls.from_program(program_of(model).layers[index])

    def forward(self, rows: torch.LongTensor, *, mode: str = "fused", scan: str = "sequential") -> torch.Tensor:
        """rows (B, T) → hidden states (B, T, n, 2). ``mode`` is accepted for symmetry (diagonal A has no factors);
        ``"auto"`` is the sequential recurrence (complex λ rounds differently in other bracketings)."""
        _check_scan(scan)
        if scan == "parallel":
            return parallel_scan_diagonal(self.lam, self.b, rows, self.h0)
        return naive_recurrent_diagonal(self.lam, self.b, rows, self.h0)

    def decode(self, h: torch.Tensor) -> torch.Tensor:
        return self.readout(h)

    def step(self, h: torch.Tensor, rows: torch.Tensor, *, mode: str = "fused") -> torch.Tensor:
        """One step λ(r) ⊙ h + b(r) for hidden states h (N, n, 2) and rows (N,) (``mode`` as in forward)."""
        return cmul(self.lam[rows], h) + self.b[rows]
