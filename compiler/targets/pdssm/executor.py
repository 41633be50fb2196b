"""Executor of compiled "pdssm" models in numpy at float64 (automaton_to_pdssm.py here): the PD-SSM recurrence
h_t = P(x_t) D(x_t) h_{t−1} and the one-hot readout state(argmax h) after each symbol — what the torch module
fsa2rnn.nn.compiled.PDSSMModel computes.

A column one-hot P maps a vector with one nonzero coordinate to another: P D (c·e_j) = (D[j]·c)·e_{P[j]}. So when
h_0 = c_0·e_q (every compiled model: e_{q0}) and D is finite, h_t = c_t·e_{s_t} at every step, with

    s_t = P(x_t)[s_{t−1}]   (a keyed table scan over the index arrays, compiler/scans/table_scan.py: O(B·T) gathers),
    c_t = D(x_t)[s_{t−1}]·c_{t−1}   (one gather and a running product, left to right as the recurrence),

and argmax h_t is s_t when c_t > 0 (or NaN), the first coordinate other than s_t when c_t < 0, and 0 when c_t = 0:
the weights P, D and h_0 run, with the recurrence's products in its order, at the cost of the NFSM's table scan
(:func:`one_hot_states`). Any other h_0 (several nonzero coordinates) or a D with infinities runs the recurrence on
whole vectors (:func:`pd_step`, a scatter-add, O(B·N) per step).
"""

from __future__ import annotations

import numpy as np

from ...executor import Executor
from ...model import CompiledModel
from ...scans.table_scan import table_scan
from ...wiring import causal_shift
from .program import PDSSMProgram


def pd_step(P: np.ndarray, D: np.ndarray, h: np.ndarray) -> np.ndarray:
    """(P D) h for a batch: P, D, h (B, N); row b of the result is Σ_{j : P[b, j] = i} D[b, j] h[b, j] at i."""
    bsz, n = h.shape
    flat = (P + (np.arange(bsz, dtype=np.int64) * n)[:, None]).ravel()
    return np.bincount(flat, weights=(D * h).ravel(), minlength=bsz * n).reshape(bsz, n)


def one_hot_states(P: np.ndarray, D: np.ndarray, q: int, c0: float, ids: np.ndarray) -> np.ndarray:
    """argmax h_t (B, T) for h_0 = c0·e_q (module docstring): the coordinate s_t and the factor c_t of the one
    nonzero entry, then the position of the maximum of c_t·e_{s_t} (first one on ties, as numpy's argmax)."""
    bsz = ids.shape[0]
    n = P.shape[1]
    s = table_scan(P, ids, np.full(bsz, q, dtype=np.int64))
    factors = np.empty((bsz, ids.shape[1] + 1), dtype=np.float64)
    factors[:, 0] = c0
    factors[:, 1:] = D[ids, causal_shift(s, q)]
    c = np.multiply.accumulate(factors, axis=1)[:, 1:]  # c_t = D(x_t)[s_{t−1}]·c_{t−1}, in this order
    other = np.where(s == 0, min(1, n - 1), 0)  # where a zero coordinate comes first (none when N = 1)
    return np.where((c > 0) | np.isnan(c), s, np.where(c < 0, other, 0))


class PDSSMExecutor(Executor):
    """``predict_states(ids, lengths=None)`` and ``predict_accept`` of a PD-SSM model."""

    program: PDSSMProgram

    def __init__(self, model: CompiledModel) -> None:
        super().__init__(model)

    def _states(self, ids: np.ndarray) -> np.ndarray:
        p = self.program
        nonzero = np.flatnonzero(p.h0)
        if len(nonzero) == 1 and np.all(np.isfinite(p.D)):
            q = int(nonzero[0])
            return p.readout[one_hot_states(p.P, p.D, q, float(p.h0[q]), ids)]
        bsz, length = ids.shape
        out = np.empty((bsz, length), dtype=np.int64)
        h = np.broadcast_to(p.h0, (bsz, p.width))
        for t in range(length):
            x = ids[:, t]
            h = pd_step(p.P[x], p.D[x], h)
            out[:, t] = p.readout[h.argmax(-1)]
        return out
