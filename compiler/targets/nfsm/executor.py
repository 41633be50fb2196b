"""Executor of compiled "nfsm" models in numpy: the network of the torch module fsa2rnn.nn.compiled.NFSMModel at
float64 (length-independent-state-tracking §6; docs/theory.md, "Neural Finite-State Machines").

Each layer reads its argmax tables σ_k(i) = argmax_j θ_k[i, j] of every key from the program (logits computed once
at float64) and runs the exact keyed table scan of compiler/scans/table_scan.py; a stacked layer's key at step t is
(x_t, the indices of the heads above at step t − 1) in mixed radix, the symbol most significant (compiler/wiring.py).
The readout maps the tuple of all head indices to an automaton state (−1 for a configuration it does not know).
"""

from __future__ import annotations

import numpy as np

from ...executor import Executor
from ...keys import HIGH_FIRST, KeyLookup, encode
from ...model import CompiledModel
from ...scans.table_scan import table_scan
from ...wiring import layer_keys
from .program import NFSMProgram


class NFSMExecutor(Executor):
    """``predict_states(ids, lengths=None)`` and ``predict_accept`` of an NFSM model (compiler/executor.py)."""

    program: NFSMProgram

    def __init__(self, model: CompiledModel) -> None:
        super().__init__(model)
        self.banks = [layer.tables().reshape(-1, max(layer.heads)) for layer in self.program.layers]  # key·r + head
        self.readout = KeyLookup(self.program.readout_codes, self.program.readout_states, self.program.readout_space)
        self.initial = list(self.program.initial_config)

    def _states(self, ids: np.ndarray) -> np.ndarray:
        bsz, length = ids.shape
        columns: list[np.ndarray] = []  # (B, T) index of each head (all layers, in order) after each step
        for layer, bank in zip(self.program.layers, self.banks):
            upper = [columns[g] for g in layer.upper]
            start = [self.initial[g] for g in layer.upper]
            key = layer_keys(ids, upper, layer.key_radices, HIGH_FIRST, start=start)
            r = len(layer.heads)
            head_keys = (key[:, None, :] * r + np.arange(r)[None, :, None]).reshape(bsz * r, length)
            h0 = np.tile(np.asarray(layer.initial, dtype=np.int64), bsz)
            out = table_scan(bank, head_keys, h0).reshape(bsz, r, length)
            columns.extend(out[:, i] for i in range(r))
        return self.readout(encode(columns, self.program.dims, HIGH_FIRST))
