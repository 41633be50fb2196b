"""The program of compiled shift registers (target "affine"): h_t = A h_{t−1} + b(x_t) with A^k = 0, and its
window table (definite_to_affine.py here)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....fsa.errors import ModelFileError
from ...model import CompiledModel
from ...program import HeaderReader, Program, header_int


@dataclass(frozen=True, eq=False)
class AffineProgram(Program):
    """Target "affine": the shift register h_t = A h_{t−1} + b(x_t) over ``window`` blocks of |Σ| coordinates
    (A (d, d), B (|Σ|, d): row x is b(x), h0 (d,)); block j of h_t is the code of x_{t−j}; ``table`` maps a
    window's digits (0 empty, x + 1 for symbol x; block 0 least significant, radix |Σ| + 1) to a state."""

    window: int
    A: np.ndarray
    B: np.ndarray
    h0: np.ndarray
    table: np.ndarray

    @property
    def codes(self) -> np.ndarray:
        """(|Σ|, |Σ|): block 0 of b(x) for every symbol x (the code a block holds for x)."""
        return self.B[:, : self.n_symbols]

    @classmethod
    def parse(cls, model: CompiledModel) -> AffineProgram:
        r = HeaderReader(model)
        common = cls._common(model)
        ro = model.header["readout"]
        k = header_int(r.entry(ro, "window", "readout"), "readout window")
        s = len(common["symbols"])
        a, b, h0 = r.tensor("A", 2, float), r.tensor("B", 2, float), r.tensor("h0", 1, float)
        table = r.tensor(r.entry(ro, "table", "readout"), 1, int)
        d = k * s
        if k < 1 or a.shape != (d, d) or b.shape != (s, d) or h0.shape != (d,):
            raise ModelFileError(f"model header: the shift register's tensors do not match window {k}, |Σ| = {s}")
        if table.shape != ((s + 1) ** k,):
            raise ModelFileError(f"model header: the window table has {table.size} entries, not (|Σ|+1)^k")
        return cls(**common, window=k, A=a, B=b, h0=h0, table=table)


__all__ = ["AffineProgram"]
