"""Executor of compiled "affine" models in numpy: the shift register h_t = A h_{t−1} + b(x_t) with A^k = 0
(Theorem 4.1 (iii); compiler/definite_to_affine.py), by its closed form h_t = Σ_{j<k} A^j b(x_{t−j}) as
nn/affine_model.py computes it: block j of h_t is the code b(x_{t−j}), decoded to the nearest of {0, e_1, …, e_s};
the window of digits indexes the readout table."""

from __future__ import annotations

import numpy as np

from fsa2rnn.compiler.model import CompiledModel


class AffineExecutor:
    """``predict_states(ids)``: the automaton state after each symbol of words of one length, (B, T) int64."""

    def __init__(self, model: CompiledModel) -> None:
        self.compiled = model
        self.window = int(model.header["readout"]["window"])
        self.n_symbols = len(model.header["symbols"])
        self.codes = np.asarray(model.tensors["B"], dtype=np.float64)[:, : self.n_symbols]
        self.table = np.asarray(model.tensors["readout.table"], dtype=np.int64)

    def predict_states(self, ids: np.ndarray) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        if ids.shape[1] == 0:
            return np.empty(ids.shape, dtype=np.int64)
        bsz, length = ids.shape
        k, s = self.window, self.n_symbols
        blocks = np.zeros((bsz, length, k, s))
        for j in range(min(k, length)):  # block j: the code b(x_{t−j}) (zero before the word starts)
            blocks[:, j:, j] = self.codes[ids[:, : length - j]]
        # squared distance to e_x is ‖u‖² − 2u_x + 1, to 0 it is ‖u‖²: the best e_x if it beats 0
        x = blocks.argmax(-1)
        digit = np.where(2 * np.take_along_axis(blocks, x[..., None], -1)[..., 0] - 1 > 0, x + 1, 0)
        return self.table[digit @ ((s + 1) ** np.arange(k, dtype=np.int64))]
