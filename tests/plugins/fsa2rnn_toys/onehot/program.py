"""The program of a one-hot model: M (|Σ|, N, N), h0 (N,), and the state each coordinate reads as."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.program import HeaderReader, Program
from fsa2rnn.fsa.errors import ModelFileError


@dataclass(frozen=True, eq=False)
class OneHotProgram(Program):
    M: np.ndarray
    h0: np.ndarray
    readout: np.ndarray

    @property
    def width(self) -> int:
        return int(self.h0.shape[0])

    @classmethod
    def parse(cls, model: CompiledModel) -> OneHotProgram:
        r = HeaderReader(model)
        common = cls._common(model)
        (layer,) = model.header["layers"]
        m = r.tensor(r.entry(layer, "M", "layer 0"), 3, float)
        h0 = r.tensor(r.entry(layer, "h0", "layer 0"), 1, float)
        readout = r.tensor(r.entry(model.header["readout"], "states", "readout"), 1, int)
        n = h0.shape[0]
        if m.shape != (len(common["symbols"]), n, n) or readout.shape != (n,):
            raise ModelFileError("model header: the one-hot model's tensors do not match")
        return cls(**common, M=m, h0=h0, readout=readout)
