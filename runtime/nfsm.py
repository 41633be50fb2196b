"""Executor of compiled "nfsm" models in numpy: the network of nn/nfsm_model.py at float64 (length-independent-
state-tracking §6; docs/theory.md, "Neural Finite-State Machines").

Each layer computes the logits θ = E W^T + b of every key once (float64), reads each head's table σ_k(i) =
argmax_j θ_k[i, j] from them, and runs the exact keyed table scan of runtime/table_scan.py; a stacked layer's key
at step t is (x_t, the indices of the heads above at step t − 1) in mixed radix, the symbol most significant. The
readout maps the tuple of all head indices to an automaton state (−1 for a configuration it does not know).
"""

from __future__ import annotations

import numpy as np

from fsa2rnn.compiler.model import CompiledModel

from .lookup import KeyLookup
from .table_scan import table_scan


def key_tables(embedding: np.ndarray, weight: np.ndarray, bias: np.ndarray, heads: list[int]) -> np.ndarray:
    """Argmax tables (K, r, d_max) of every key; entries past a head's d_i are the identity (never reached)."""
    logits = embedding @ weight.T + bias
    n_keys, d_max = logits.shape[0], max(heads)
    bank = np.broadcast_to(np.arange(d_max, dtype=np.int64), (n_keys, len(heads), d_max)).copy()
    start = 0
    for i, d in enumerate(heads):
        bank[:, i, :d] = logits[:, start : start + d * d].reshape(n_keys, d, d).argmax(-1)
        start += d * d
    return bank


class NFSMExecutor:
    """``predict_states(ids)``: the automaton state after each symbol of words of one length, (B, T) int64."""

    def __init__(self, model: CompiledModel) -> None:
        self.compiled = model
        t = model.tensors
        self.layers = []
        for spec in model.header["layers"]:
            heads = [int(d) for d in spec["heads"]]
            emb, w, b = (np.asarray(t[spec[k]], dtype=np.float64) for k in ("embedding", "weight", "bias"))
            bank = key_tables(emb, w, b, heads).reshape(-1, max(heads))  # row key·r + head
            radices = [int(r) for r in spec["key_radices"][1:]]
            weights = [int(np.prod(radices[j + 1 :], dtype=object)) for j in range(len(radices))]
            self.layers.append((spec["upper"], weights, int(np.prod(radices, dtype=object)), bank, heads, spec))
        ro = model.header["readout"]
        self.radices = [int(r) for r in ro["radices"]]
        self.readout = KeyLookup(t[ro["codes"]], t[ro["states"]], int(np.prod(self.radices, dtype=object)))
        self.initial = [int(v) for spec in model.header["layers"] for v in spec["initial"]]

    def predict_states(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        if ids.shape[1] == 0:
            return np.empty(ids.shape, dtype=np.int64)
        bsz, length = ids.shape
        columns: list[np.ndarray] = []  # (B, T) index of each head (all layers, in order) after each step
        for upper, weights, scale, bank, heads, spec in self.layers:
            key = ids
            if upper:
                part = sum(columns[g] * w for g, w in zip(upper, weights))
                shifted = np.empty_like(part)
                shifted[:, 0] = sum(self.initial[g] * w for g, w in zip(upper, weights))
                shifted[:, 1:] = part[:, :-1]
                key = ids * scale + shifted
            r = len(heads)
            head_keys = (key[:, None, :] * r + np.arange(r)[None, :, None]).reshape(bsz * r, length)
            h0 = np.tile(np.asarray(spec["initial"], dtype=np.int64), bsz)
            out = table_scan(bank, head_keys, h0).reshape(bsz, r, length)
            columns.extend(out[:, i] for i in range(r))
        code = columns[0]
        for col, r in zip(columns[1:], self.radices[1:]):
            code = code * r + col
        return self.readout(code)
