"""The recurrent step of compiled linear-RNN models in numpy, at float64 or float32: the numpy twin of the torch
module's recurrent form (nn/compiled/lrnn.py ``LinearRNNModel.step``), which builds it from its own weights at its
dtype (``numpy_step``) for the fused η-trajectories of realize/trajectory.py.

The hidden state is flat, (N, D): the layers' vectors side by side, a diagonal layer's complex coordinates as (re, im)
pairs. :meth:`LinearRNNStep.step` reads every layer's row of (x, the decoded states of the layers above: the cascade
wiring, compiler/wiring.py) and computes A(r) h + B(r) — the fused product (``mode="fused"``) or factor by factor
h ← h − β v (vᵀh) (``"factors"``), a diagonal layer λ(r) ⊙ h + b(r) in (re, im) pairs — with the torch module's
arithmetic (the same products, sums and comparisons in the same order). When every layer is a fused GH layer with a
dense row table (the usual cascade) the layers are stacked, padded to the widest one (zero rows and columns, which
add exact zeros at the end of each sum), and a step is one gather of A(r) for all layers and one batched product;
likewise the nearest-code readouts are one batched score.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ...keys import LOW_FIRST, KeyLookup, key_weights
from ...program import half_norms
from ...wiring import layer_keys


@dataclass
class StepLayer:
    """One layer's weights at the step's dtype: its row lookup (keys of (x, upper states) with ``radix``), the
    transitions (``lam``, ``b`` (R, n, 2) for a diagonal layer; ``A`` (R, n, n), ``B`` (R, n), ``beta`` (R, k),
    ``v`` (R, k, n) for a GH layer), ``h0`` (flat), and the readout: ``codes`` (S, flat width) with their layer
    ``states`` (nearest code), or the ``hash`` lookup of a permutation code of 1..``width`` with ``powers``."""

    rows: KeyLookup
    radix: list[int]
    h0: np.ndarray
    diagonal: bool = False
    lam: np.ndarray | None = None
    b: np.ndarray | None = None
    A: np.ndarray | None = None
    B: np.ndarray | None = None
    beta: np.ndarray | None = None
    v: np.ndarray | None = None
    codes: np.ndarray | None = None
    states: np.ndarray | None = None
    width: int = 0
    hash: KeyLookup | None = None
    powers: np.ndarray | None = None

    @property
    def nearest(self) -> bool:
        return self.codes is not None


class LinearRNNStep:
    """``initial(n)``, ``decode(h)`` (the layer states (N, layers), −1 where a hash readout finds no permutation),
    ``step(h, x, decoded)`` and ``read(h, decoded)`` on flat hidden vectors (N, D) at ``dtype``."""

    def __init__(
        self, layers: list[StepLayer], final: KeyLookup, final_radix: list[int], mode: str, dtype: Any
    ) -> None:
        self.dtype = np.dtype(dtype)
        self.mode = mode
        self.layers = layers
        for sp in layers:
            if sp.nearest:
                sp.c_t = np.ascontiguousarray(sp.codes.T)
                sp.half = half_norms(sp.codes).astype(self.dtype)
        self.final = final
        self.final_dense = final.dense
        self.final_weights = np.asarray(key_weights(final_radix, LOW_FIRST), dtype=np.int64)
        sizes = [sp.h0.size for sp in layers]
        edges = np.cumsum([0, *sizes])
        self.bounds = [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]
        self.stacked_step = mode == "fused" and not any(sp.diagonal for sp in layers)
        self.stacked_step &= all(sp.rows.dense is not None for sp in layers)
        self.stacked_decode = all(sp.nearest for sp in layers)
        self._stack()

    def _stack(self) -> None:
        """The padded, stacked tables of the stacked step and readout."""
        n_layers, dim = len(self.layers), self.bounds[-1][1]
        w = max(b - a for a, b in self.bounds)
        self.pidx = np.zeros((n_layers, w), dtype=np.int64)
        self.pmask = np.zeros((n_layers, w), dtype=self.dtype)
        unpad = []
        for i, (a, b) in enumerate(self.bounds):
            self.pidx[i, : b - a] = np.arange(a, b)
            self.pmask[i, : b - a] = 1
            unpad.extend(i * w + np.arange(b - a))
        self.unpad = np.asarray(unpad, dtype=np.int64)
        assert len(self.unpad) == dim
        if self.stacked_step:
            # row r of layer i at row_off + r; key k of layer i at key_off[i] + k (a missing row reads row 0)
            a_cat, b_cat, dense, row_off, key_off = [], [], [], 0, []
            for sp in self.layers:
                r, wi = sp.A.shape[0], sp.A.shape[1]
                a_pad = np.zeros((r, w, w), dtype=self.dtype)
                a_pad[:, :wi, :wi] = sp.A
                b_pad = np.zeros((r, w), dtype=self.dtype)
                b_pad[:, :wi] = sp.B
                a_cat.append(a_pad)
                b_cat.append(b_pad)
                key_off.append(sum(len(d) for d in dense))
                dense.append(np.maximum(sp.rows.dense[:-1], 0) + row_off)
                row_off += r
            self.a_cat, self.b_cat = np.concatenate(a_cat), np.concatenate(b_cat)
            self.dense_cat, self.key_off = np.concatenate(dense), np.asarray(key_off, dtype=np.int64)
            # the key of layer i is x + Σ_{j<i} s_j·w_{j+1} (compiler/wiring.py, low digit first): the weights of
            # the upper states of every layer, one matrix product for all layers
            self.key_mult = np.zeros((max(n_layers - 1, 1), n_layers), dtype=np.int64)
            for i, sp in enumerate(self.layers):
                self.key_mult[:i, i] = key_weights(sp.radix, LOW_FIRST)[1:]
        if self.stacked_decode:
            s_max = max(len(sp.half) for sp in self.layers)
            self.c_all = np.zeros((n_layers, w, s_max), dtype=self.dtype)
            self.half_all = np.full((n_layers, s_max), np.inf, dtype=self.dtype)
            self.states_all = np.zeros((n_layers, s_max), dtype=np.int64)
            for i, sp in enumerate(self.layers):
                wi, si = sp.c_t.shape
                self.c_all[i, :wi, :si] = sp.c_t
                self.half_all[i, :si] = sp.half
                self.states_all[i, :si] = sp.states
            self.layer_range = np.arange(n_layers)

    def _parts(self, h: np.ndarray) -> np.ndarray:
        """h as (N, layers, widest) with zero padding."""
        if len(self.layers) == 1:
            return h[:, None, :]
        p = h[:, self.pidx]
        p *= self.pmask
        return p

    def initial(self, n: int) -> np.ndarray:
        return np.tile(np.concatenate([sp.h0 for sp in self.layers]), (n, 1))

    def decode(self, h: np.ndarray) -> np.ndarray:
        """The decoded state of every layer (N, layers), −1 where a hash readout finds no permutation."""
        if self.stacked_decode:
            score = np.matmul(self._parts(h)[:, :, None, :], self.c_all[None])[:, :, 0, :]
            score -= self.half_all
            return self.states_all[self.layer_range, score.argmax(-1)]
        out = np.empty((len(h), len(self.layers)), dtype=np.int64)
        for i, (sp, (a, b)) in enumerate(zip(self.layers, self.bounds)):
            part = h[:, a:b]
            if sp.nearest:
                score = part @ sp.c_t
                score -= sp.half
                out[:, i] = sp.states[score.argmax(-1)]
            else:
                r = np.rint(part)
                ok = (r.min(-1) >= 1) & (r.max(-1) <= sp.width)
                key = (np.clip(r, 1, sp.width).astype(np.int64) - 1) @ sp.powers
                out[:, i] = sp.hash(np.where(ok, key, -1))
        return out

    def step(self, h: np.ndarray, x: np.ndarray, decoded: Any = None) -> np.ndarray:
        if decoded is None:
            decoded = self.decode(h)
        upper = np.maximum(decoded[:, :-1], 0)  # a failed decode is wrong already; keep going
        if self.stacked_step:
            keys = x[:, None] + self.key_off
            if upper.shape[1]:
                keys = keys + upper @ self.key_mult
            rows = self.dense_cat[keys]
            new = np.matmul(self.a_cat[rows], self._parts(h)[..., None])[..., 0] + self.b_cat[rows]
            return new[:, 0] if len(self.layers) == 1 else new.reshape(len(h), -1)[:, self.unpad]
        out = np.empty_like(h)
        for i, (sp, (a, b)) in enumerate(zip(self.layers, self.bounds)):
            key = layer_keys(x, list(upper.T[:i]), sp.radix, LOW_FIRST)  # in range: states below their radix
            rows = np.maximum(sp.rows(key) if sp.rows.dense is None else sp.rows.dense[key], 0)
            part = h[:, a:b]
            if sp.diagonal:  # (re, im) pairs, nn/ops/lrnn_scan's cmul
                p = part.reshape(len(h), -1, 2)
                lam, bb = sp.lam[rows], sp.b[rows]
                ar, ai, br, bi = lam[..., 0], lam[..., 1], p[..., 0], p[..., 1]
                new = np.stack([ar * br - ai * bi, ar * bi + ai * br], axis=-1) + bb
                out[:, a:b] = new.reshape(len(h), -1)
            elif self.mode == "fused":
                out[:, a:b] = np.matmul(sp.A[rows], part[:, :, None])[:, :, 0] + sp.B[rows]
            else:  # factor by factor, h ← h − β v (vᵀh)
                bt, vt = sp.beta[rows], sp.v[rows]
                new = part
                for j in range(bt.shape[1]):
                    vj = vt[:, j]
                    new = new - bt[:, j : j + 1] * vj * (vj * new).sum(-1, keepdims=True)
                out[:, a:b] = new + sp.B[rows]
        return out

    def read(self, h: np.ndarray, decoded: Any = None) -> np.ndarray:
        states = self.decode(h) if decoded is None else decoded
        key = np.maximum(states, 0) @ self.final_weights
        out = self.final(key) if self.final_dense is None else self.final_dense[key]
        return np.where((states < 0).any(-1), -1, out)


__all__ = ["LinearRNNStep", "StepLayer"]
