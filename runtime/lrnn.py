"""Executor of compiled "householder" and "diagonal" models in numpy: the network of nn/lrnn_model.py at float64.

Layer i reads the row r_t of (x_t, s_0(t−1), …, s_{i−1}(t−1)) — the symbol and the upper layers' decoded states
one step earlier (the causal shift of docs/theory.md, "The timing of cascades") —, runs H_t = A(r_t) H_{t−1} +
B(r_t) with the stored fused products A (GH products, or diagonal unit-modulus λ as complex numbers) by the chunked
scan of runtime/affine_scan.py, and decodes H_t by its readout: the nearest code point (argmax ⟨c, h⟩ − ½‖c‖²)
or the hash of a permutation code (round, then Σ (r_i − 1)·n^i). The final table maps the layer states to an
automaton state. −1 marks a row or a state the model's tables do not know: the model left its readout.
"""

from __future__ import annotations

import numpy as np

from fsa2rnn.compiler.lrnn_spec import encode_keys
from fsa2rnn.compiler.model import CompiledModel

from .affine_scan import affine_scan
from .lookup import KeyLookup

#: score entries (positions × code points) of one block of the nearest-code readout: a block stays in cache
READOUT_BLOCK = 1 << 17


class _Layer:
    """One compiled layer: row table, transition tables, h0 and readout."""

    def __init__(self, model: CompiledModel, entry: dict) -> None:
        t, name = model.tensors, entry["name"]
        self.radix = [int(r) for r in entry["radix"]]
        keys = encode_keys(list(np.asarray(t[f"{name}.keys"]).T), self.radix)
        self.rows = KeyLookup(keys, np.arange(keys.size), int(np.prod(self.radix, dtype=object)))
        if entry["kind"] == "diagonal":
            self.a = t[f"{name}.lam_re"] + 1j * t[f"{name}.lam_im"]
            self.b = t[f"{name}.B_re"] + 1j * t[f"{name}.B_im"]
            codes = t[f"{name}.codes_re"] + 1j * t[f"{name}.codes_im"]
            self.h0 = codes[int(entry["h0_index"])]
            self._nearest(np.concatenate([codes.real, codes.imag], axis=1), t[f"{name}.code_states"])
        else:
            self.a, self.b, self.h0 = (np.asarray(t[f"{name}.{k}"], dtype=np.float64) for k in ("A", "B", "h0"))
            if entry["readout"] == "nearest":
                codes = np.asarray(t[f"{name}.codes"], dtype=np.float64)
                self._nearest(codes, np.arange(codes.shape[0]))
            else:
                self.width = int(entry["width"])
                self.codes = None
                self.hash = KeyLookup(t[f"{name}.hkeys"], t[f"{name}.hvals"], self.width**self.width)
                self.powers = self.width ** np.arange(self.width, dtype=np.int64)

    def _nearest(self, codes: np.ndarray, code_states: np.ndarray) -> None:
        self.codes = np.ascontiguousarray(codes.T)  # (n, S): real coordinates (re, im stacked for complex)
        self.half = 0.5 * (codes * codes).sum(-1)
        self.code_states = np.asarray(code_states, dtype=np.int64)

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


class LinearRNNExecutor:
    """``predict_states(ids)``: the automaton state after each symbol of words of one length, (B, T) int64."""

    def __init__(self, model: CompiledModel) -> None:
        self.compiled = model
        h = model.header
        self.n_symbols = len(h["symbols"])
        self.layers = [_Layer(model, e) for e in h["layers"]]
        self.init_states = [int(layer.decode(layer.h0[None])[0]) for layer in self.layers]
        self.final_radix = [int(r) for r in h["readout"]["radix"]]
        self.final = KeyLookup(
            model.tensors["readout.keys"], model.tensors["readout.states"], int(np.prod(self.final_radix, dtype=object))
        )

    def predict_states(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        if ids.shape[1] == 0:
            return np.empty(ids.shape, dtype=np.int64)
        bad = np.zeros(ids.shape, dtype=bool)
        states: list[np.ndarray] = []
        for i, layer in enumerate(self.layers):
            cols = [ids]
            for j in range(i):  # s_j(t − 1), s_j(−1) = layer j's initial state
                prev = np.empty_like(states[j])
                prev[:, 0] = self.init_states[j]
                prev[:, 1:] = states[j][:, :-1]
                cols.append(prev)
            for c in cols[1:]:  # a failed decode upstream: that position is invalid, its row read at state 0
                bad |= c < 0
            rows = layer.rows(encode_keys([np.maximum(c, 0) for c in cols], layer.radix))
            bad |= rows < 0
            hidden = affine_scan(layer.a, layer.b, np.maximum(rows, 0), layer.h0)
            states.append(layer.decode(hidden))
            bad |= states[-1] < 0
        out = self.final(encode_keys([np.maximum(s, 0) for s in states], self.final_radix))
        return np.where(bad, -1, out)
