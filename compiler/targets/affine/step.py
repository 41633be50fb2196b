"""The recurrent step of compiled shift registers in numpy, at float64 or float32: the numpy twin of the torch
module's recurrent form (nn/compiled/affine.py ``AffineModel.step``), which builds it from its weights at its dtype
(``numpy_step``) for the fused η-trajectories of realize/trajectory.py: h ← A h + b(x), read as the window of the
digits its blocks decode to (:func:`~fsa2rnn.compiler.targets.affine.executor.window_digits`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .executor import window_digits


class AffineStep:
    """``initial(n)``, ``decode(h)`` (None: the state is read from h itself), ``step(h, x)`` and ``read(h)`` on
    hidden vectors (N, k·s) at ``dtype``: ``A`` (d, d), ``B`` (s, d), ``h0`` (d,), the window table."""

    def __init__(
        self, A: np.ndarray, B: np.ndarray, h0: np.ndarray, table: np.ndarray, window: int, dtype: Any
    ) -> None:
        self.dtype = np.dtype(dtype)
        self.a_t, self.b = np.ascontiguousarray(A.T, dtype=self.dtype), np.asarray(B, dtype=self.dtype)
        self.h0 = np.asarray(h0, dtype=self.dtype).reshape(-1)
        self.table, self.window, self.n_symbols = np.asarray(table), int(window), int(B.shape[0])
        self.weights = (self.n_symbols + 1) ** np.arange(self.window, dtype=np.int64)

    def initial(self, n: int) -> np.ndarray:
        return np.tile(self.h0, (n, 1))

    def decode(self, h: np.ndarray) -> Any:
        return None

    def step(self, h: np.ndarray, x: np.ndarray, decoded: Any = None) -> np.ndarray:
        return h @ self.a_t + self.b[x]

    def read(self, h: np.ndarray, decoded: Any = None) -> np.ndarray:
        blocks = h.reshape(len(h), self.window, self.n_symbols).astype(np.float64)
        return self.table[(window_digits(blocks) * self.weights).sum(-1)]


__all__ = ["AffineStep"]
