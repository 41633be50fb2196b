"""Running a one-hot model without torch: the numpy executor (float64), the exact interpreter (the index of the
coordinate that is 1) and the numpy recurrent step the η-trajectories of fsa2rnn use."""

from __future__ import annotations

from typing import Any

import numpy as np

from fsa2rnn.compiler.executor import Executor
from fsa2rnn.fsa.inputs import check_symbol_ids

from .program import OneHotProgram


class OneHotExecutor(Executor):
    program: OneHotProgram

    def _states(self, ids: np.ndarray) -> np.ndarray:
        p = self.program
        h = np.broadcast_to(p.h0, (len(ids), p.width))
        out = np.empty(ids.shape, dtype=np.int64)
        for t in range(ids.shape[1]):
            h = np.einsum("bij,bj->bi", p.M[ids[:, t]], h)
            out[:, t] = p.readout[h.argmax(-1)]
        return out


class ExactOneHot:
    """The one-hot coordinate as an integer: i ← the row of M(x)'s one in column i."""

    def __init__(self, program: OneHotProgram) -> None:
        self.program = program
        self.image = program.M.argmax(axis=1).astype(np.int64)  # (|Σ|, N)
        self.start = int(np.argmax(program.h0))

    def predict_states(self, symbol_ids: Any, lengths: Any = None) -> np.ndarray:
        p = self.program
        x = check_symbol_ids(symbol_ids, p.n_symbols, lengths, symbols=p.symbols)
        i = np.full(len(x.ids), self.start, dtype=np.int64)
        out = np.empty(x.ids.shape, dtype=np.int64)
        for t in range(x.ids.shape[1]):
            i = self.image[x.ids[:, t], i]
            out[:, t] = p.readout[i]
        return x.finish(out)


class OneHotStep:
    """The numpy twin of the torch module's step at its dtype: h ← M(x) h, read as the state of the largest entry."""

    def __init__(self, m: np.ndarray, h0: np.ndarray, readout: np.ndarray, dtype: Any) -> None:
        self.dtype = np.dtype(dtype)
        self.m, self.h0, self.readout = m.astype(self.dtype), h0.astype(self.dtype), readout

    def initial(self, n: int) -> np.ndarray:
        return np.tile(self.h0, (n, 1))

    def decode(self, h: np.ndarray) -> Any:
        return None

    def step(self, h: np.ndarray, x: np.ndarray, decoded: Any = None) -> np.ndarray:
        return np.matmul(self.m[x], h[:, :, None])[:, :, 0]

    def read(self, h: np.ndarray, decoded: Any = None) -> np.ndarray:
        return self.readout[h.argmax(-1)]
