"""Executor of compiled "pdssm" models in numpy at float64 (compiler/automaton_to_pdssm.py): the PD-SSM recurrence
h_t = P(x_t) D(x_t) h_{t−1} itself, on vectors h (B, N), P(x) applied through its index array (a scatter-add,
O(B·N) per step), and the one-hot readout state(argmax h) after each symbol — what nn/pdssm_model.py computes.
A step loop: composing the index arrays by doubling costs O(T·N·log T) and measured slower here for N ≥ 100
(S5, M11); the loop costs O(T·B·N) plus the interpreter's overhead per step.
"""

from __future__ import annotations

import numpy as np

from fsa2rnn.compiler.model import CompiledModel


def pd_step(P: np.ndarray, D: np.ndarray, h: np.ndarray) -> np.ndarray:
    """(P D) h for a batch: P, D, h (B, N); row b of the result is Σ_{j : P[b, j] = i} D[b, j] h[b, j] at i."""
    bsz, n = h.shape
    flat = (P + (np.arange(bsz, dtype=np.int64) * n)[:, None]).ravel()
    return np.bincount(flat, weights=(D * h).ravel(), minlength=bsz * n).reshape(bsz, n)


class PDSSMExecutor:
    """``predict_states(ids)``: the automaton state after each symbol of words of one length, (B, T) int64."""

    def __init__(self, model: CompiledModel) -> None:
        self.compiled = model
        layer = model.header["layers"][0]
        t = model.tensors
        self.P = np.asarray(t[layer["P"]], dtype=np.int64)
        self.D = np.asarray(t[layer["D"]], dtype=np.float64)
        self.h0 = np.asarray(t[layer["h0"]], dtype=np.float64)
        self.states = np.asarray(t[model.header["readout"]["states"]], dtype=np.int64)

    def predict_states(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        bsz, length = ids.shape
        out = np.empty((bsz, length), dtype=np.int64)
        h = np.broadcast_to(self.h0, (bsz, len(self.h0)))
        for t in range(length):
            x = ids[:, t]
            h = pd_step(self.P[x], self.D[x], h)
            out[:, t] = self.states[h.argmax(-1)]
        return out
