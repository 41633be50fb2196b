"""The exact interpreter of compiled shift registers (target "affine"): the window of the last k symbols, read as
integer digits (0 before the word starts, x + 1 for symbol x) — what the exact code of h_t = Σ_{j<k} A^j b(x_{t−j})
holds — looked up in the window table (definite_to_affine.py here; its ``check_affine`` checks the weights)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....fsa.inputs import check_symbol_ids
from .program import AffineProgram


class ExactAffine:
    def __init__(self, program: AffineProgram) -> None:
        self.program = program

    def predict_states(self, symbol_ids: Any, lengths: Any = None) -> np.ndarray:
        p = self.program
        x = check_symbol_ids(symbol_ids, p.n_symbols, lengths, symbols=p.symbols)
        bsz, length = x.ids.shape
        k, s = p.window, p.n_symbols
        code = np.zeros((bsz, length), dtype=np.int64)
        for j in range(min(k, length)):  # digit j: symbol x_{t−j} + 1, 0 before the word starts
            code[:, j:] += (x.ids[:, : length - j] + 1) * (s + 1) ** j
        return x.finish(p.table[code])  # an empty word indexes nothing
