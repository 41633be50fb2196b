"""Executor of compiled "affine" models in numpy: the shift register h_t = A h_{t−1} + b(x_t) with A^k = 0
(Theorem 4.1 (iii); definite_to_affine.py here), by its closed form h_t = Σ_{j<k} A^j b(x_{t−j}) as the torch
module fsa2rnn.nn.compiled.AffineModel computes it: block j of h_t is the code b(x_{t−j}), decoded to the nearest
of {0, e_1, …, e_s}; the window of digits indexes the readout table."""

from __future__ import annotations

import numpy as np

from ...executor import Executor
from ...model import CompiledModel
from ...xp import Array, take_last, where
from .program import AffineProgram


def window_digits(blocks: Array) -> Array:
    """The digit (0 for the zero block, x + 1 for e_x) of every block (…, s), numpy or torch: the nearest of
    {0, e_1, …, e_s}. The squared distance to e_x is ‖u‖² − 2u_x + 1, to 0 it is ‖u‖²: the best e_x (the first
    largest coordinate) wins if it beats 0."""
    x = blocks.argmax(-1)
    return where(2 * take_last(blocks, x) - 1 > 0, x + 1, 0)


class AffineExecutor(Executor):
    """``predict_states(ids, lengths=None)`` and ``predict_accept`` of a shift-register model."""

    program: AffineProgram

    def __init__(self, model: CompiledModel) -> None:
        super().__init__(model)
        self.window = self.program.window

    def _states(self, ids: np.ndarray) -> np.ndarray:
        p = self.program
        bsz, length = ids.shape
        k, s = p.window, p.n_symbols
        blocks = np.zeros((bsz, length, k, s))
        for j in range(min(k, length)):  # block j: the code b(x_{t−j}) (zero before the word starts)
            blocks[:, j:, j] = p.codes[ids[:, : length - j]]
        return p.table[window_digits(blocks) @ ((s + 1) ** np.arange(k, dtype=np.int64))]
