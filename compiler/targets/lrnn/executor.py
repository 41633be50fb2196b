"""Executor of compiled "householder" and "diagonal" models in numpy: the network of the torch module
fsa2rnn.nn.compiled.LinearRNNModel at float64.

Layer i reads the row r_t of (x_t, s_0(t−1), …, s_{i−1}(t−1)) — the symbol and the upper layers' decoded states
one step earlier (the causal shift of docs/theory.md, "The timing of cascades") —, runs H_t = A(r_t) H_{t−1} +
B(r_t) with the stored fused products A (GH products, or diagonal unit-modulus λ as complex numbers) by the chunked
scan of compiler/scans/affine_scan.py, and decodes H_t by its readout: the nearest code point (argmax ⟨c, h⟩ − ½‖c‖²)
or the hash of a permutation code (round, then Σ (r_i − 1)·n^i). The final table maps the layer states to an
automaton state. −1 marks a row or a state the model's tables do not know: the model left its readout.
"""

from __future__ import annotations

import numpy as np

from ...executor import Executor
from ...keys import LOW_FIRST, KeyLookup, encode, key_space
from ...model import CompiledModel
from ...program import half_norms
from ...scans.affine_scan import affine_scan
from ...wiring import causal_shift, layer_keys
from .program import HashReadout, LinearLayer, LinearRNNProgram

#: score entries (positions × code points) of one block of the nearest-code readout: a block stays in cache
READOUT_BLOCK = 1 << 17


class _Layer:
    """One layer's row lookup, tables, h0 and readout, ready to run."""

    def __init__(self, layer: LinearLayer) -> None:
        self.radix = list(layer.radix)
        self.rows = KeyLookup(layer.row_keys, np.arange(layer.n_rows), key_space(layer.radix))
        self.a, self.b, self.h0 = layer.a, layer.b, layer.h0
        ro = layer.readout
        if isinstance(ro, HashReadout):
            self.codes = None
            self.width = ro.width
            self.hash = KeyLookup(ro.keys, ro.values, ro.space)
            self.powers = ro.powers()
        else:
            codes = ro.codes
            if np.iscomplexobj(codes):
                codes = np.concatenate([codes.real, codes.imag], axis=1)
            self.codes = np.ascontiguousarray(codes.T)  # (n, S): real coordinates (re, im stacked for complex)
            self.half = half_norms(codes)
            self.code_states = ro.code_states

    def decode(self, h: np.ndarray) -> np.ndarray:
        """Layer states of hidden vectors (…, n), −1 where the hash readout knows no state."""
        if self.codes is not None:
            flat = h.reshape(-1, h.shape[-1])
            if np.iscomplexobj(flat):
                flat = np.concatenate([flat.real, flat.imag], axis=1)
            best = np.empty(flat.shape[0], dtype=np.int64)
            step = max(256, READOUT_BLOCK // self.codes.shape[1])
            for i in range(0, flat.shape[0], step):
                # einsum, not BLAS: tiny inner dimensions, and no BLAS threads contending for the cores
                score = np.einsum("pi,is->ps", flat[i : i + step], self.codes)
                score -= self.half
                best[i : i + step] = score.argmax(-1)
            return self.code_states[best].reshape(h.shape[:-1])
        r = np.rint(h)
        ok = (r.min(-1) >= 1) & (r.max(-1) <= self.width)
        key = np.einsum("...i,i->...", np.clip(r, 1, self.width).astype(np.int64) - 1, self.powers)
        return self.hash(np.where(ok, key, -1))


class LinearRNNExecutor(Executor):
    """``predict_states(ids, lengths=None)`` and ``predict_accept`` of a linear-RNN model (compiler/executor.py)."""

    program: LinearRNNProgram

    def __init__(self, model: CompiledModel) -> None:
        super().__init__(model)
        self.layers = [_Layer(layer) for layer in self.program.layers]
        self.init_states = [int(layer.decode(layer.h0[None])[0]) for layer in self.layers]
        self.final_radix = list(self.program.final_radix)
        self.final = KeyLookup(self.program.final_keys, self.program.final_states, self.program.final_space)

    def _states(self, ids: np.ndarray) -> np.ndarray:
        bad = np.zeros(ids.shape, dtype=bool)  # the validity mask: a failed row or decode anywhere upstream
        states: list[np.ndarray] = []
        for layer in self.layers:
            upper = [causal_shift(s, s0) for s, s0 in zip(states, self.init_states)]  # the states one step earlier
            for c in upper:  # a failed decode upstream: that position is invalid, its row read at state 0
                bad |= c < 0
            rows = layer.rows(layer_keys(ids, [np.maximum(c, 0) for c in upper], layer.radix, LOW_FIRST))
            bad |= rows < 0
            hidden = affine_scan(layer.a, layer.b, np.maximum(rows, 0), layer.h0)
            states.append(layer.decode(hidden))
            bad |= states[-1] < 0
        out = self.final(encode([np.maximum(s, 0) for s in states], self.final_radix, LOW_FIRST))
        return np.where(bad, -1, out)
