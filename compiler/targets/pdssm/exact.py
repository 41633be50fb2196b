"""The exact interpreter of compiled PD-SSMs (target "pdssm"): the code point e_i carried as its coordinate i in
integer arithmetic — symbol x sends e_i to D(x)[i] e_{P(x)[i]}, again a code point exactly when D(x)[i] = 1 — read out
as the state of the coordinate (automaton_to_pdssm.py here; its ``check_pdssm`` checks the weights)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ....fsa.errors import ModelFileError
from ....fsa.inputs import check_symbol_ids
from .program import PDSSMProgram


class ExactPDSSM:
    def __init__(self, program: PDSSMProgram) -> None:
        self.program = program
        h0 = program.h0
        if not (np.isin(h0, (0.0, 1.0)).all() and int((h0 == 1).sum()) == 1):
            raise ModelFileError("the PD-SSM's h0 is not a one-hot code point: no exact interpretation")
        self.start = int(np.flatnonzero(h0 == 1)[0])

    def predict_states(self, symbol_ids: Any, lengths: Any = None) -> np.ndarray:
        p = self.program
        x = check_symbol_ids(symbol_ids, p.n_symbols, lengths, symbols=p.symbols)
        bsz, length = x.ids.shape
        out = np.empty((bsz, length), dtype=np.int64)
        i = np.full(bsz, self.start, dtype=np.int64)
        pad = x.padding()
        for t in range(length):
            sym = x.ids[:, t]
            live = np.ones(bsz, dtype=bool) if pad is None else ~pad[:, t]
            if not (p.D[sym[live], i[live]] == 1).all():
                raise ModelFileError(f"step {t + 1}: a diagonal entry ≠ 1 takes the state off the one-hot code points")
            i = p.P[sym, i]
            out[:, t] = p.readout[i]
        return x.finish(out)
