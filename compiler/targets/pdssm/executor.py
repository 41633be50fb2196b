"""Executor of compiled "pdssm" models in numpy at float64 (automaton_to_pdssm.py here): the PD-SSM recurrence
h_t = P(x_t) D(x_t) h_{t−1} itself on vectors h (B, N), P(x) applied through its index array (a scatter-add,
O(B·N) per step), and the one-hot readout state(argmax h) after each symbol — what the torch module
fsa2rnn.nn.compiled.PDSSMModel computes. A step loop: composing the index arrays by doubling costs O(T·N·log T) and
measured slower here for N ≥ 100 (S5, M11); the loop costs O(T·B·N) plus the interpreter's overhead per step.
"""

from __future__ import annotations

import numpy as np

from ...executor import Executor
from ...model import CompiledModel
from .program import PDSSMProgram


def pd_step(P: np.ndarray, D: np.ndarray, h: np.ndarray) -> np.ndarray:
    """(P D) h for a batch: P, D, h (B, N); row b of the result is Σ_{j : P[b, j] = i} D[b, j] h[b, j] at i."""
    bsz, n = h.shape
    flat = (P + (np.arange(bsz, dtype=np.int64) * n)[:, None]).ravel()
    return np.bincount(flat, weights=(D * h).ravel(), minlength=bsz * n).reshape(bsz, n)


class PDSSMExecutor(Executor):
    """``predict_states(ids, lengths=None)`` and ``predict_accept`` of a PD-SSM model."""

    program: PDSSMProgram

    def __init__(self, model: CompiledModel) -> None:
        super().__init__(model)

    def _states(self, ids: np.ndarray) -> np.ndarray:
        p = self.program
        bsz, length = ids.shape
        out = np.empty((bsz, length), dtype=np.int64)
        h = np.broadcast_to(p.h0, (bsz, p.width))
        for t in range(length):
            x = ids[:, t]
            h = pd_step(p.P[x], p.D[x], h)
            out[:, t] = p.readout[h.argmax(-1)]
        return out
