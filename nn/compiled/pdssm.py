"""Torch module for compiled "pdssm" models (compiler/automaton_to_pdssm.py): h_t = P(x_t) D(x_t) h_{t−1} with P(x)
given as index arrays, run by :func:`fsa2rnn.nn.ops.pd_scan` (the chunked scan in the class of PD matrices) in time
blocks that carry the state, then the one-hot readout state(argmax h). The recurrent form for the steppers:
``initial(n)``, ``step(h, x)``, ``decode(h)``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.program import PDSSMProgram, program_of

from ..ops import pd_scan
from ..ops.pd_scan import pd_apply
from .inputs import accepted, accepting_tensor, checked_ids, finish

#: state entries B·C·N of one time block
CHUNK_ELEMENTS = 1 << 22
_SCAN_DTYPES = (torch.float32, torch.float64)


class PDSSMModel(nn.Module):
    """Compiled PD-SSM: ``predict_states`` and ``predict_accept``; ``.to(dtype)`` sets the dtype of D and h_0
    (float16 and bfloat16 scan in float32: the values 0 and 1 are exact in all)."""

    def __init__(self, compiled: CompiledModel, program: PDSSMProgram | None = None) -> None:
        super().__init__()
        self.compiled = compiled
        self.program = program_of(compiled) if program is None else program
        p = self.program
        self.n_symbols = p.n_symbols
        self.register_buffer("P", torch.from_numpy(p.P.copy()))
        self.register_buffer("D", torch.from_numpy(p.D.copy()))
        self.register_buffer("h0", torch.from_numpy(p.h0.copy()))
        self.register_buffer("readout", torch.from_numpy(p.readout.copy()))
        self.register_buffer("accepting_mask", accepting_tensor(p))
        self.has_accepting = p.accepting is not None

    @property
    def dtype(self) -> torch.dtype:
        return self.D.dtype

    # ------------------------------------------------------------------ recurrent form
    def initial(self, n: int) -> torch.Tensor:
        return self.h0.expand(n, -1).clone()

    def step(self, h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """One step P(x) D(x) h for hidden states h (n, N) and symbols x (n,)."""
        return pd_apply(self.P[x], self.D[x].to(h.dtype), h)

    def decode(self, h: torch.Tensor) -> torch.Tensor:
        """The state each hidden vector (…, N) reads as: that of its largest coordinate."""
        return self.readout[h.argmax(-1)]

    # ------------------------------------------------------------------ the scan
    def hidden_blocks(self, ids: torch.Tensor):
        """Yield (start, h (B, C, N)) over time blocks of checked ids (B, T), the state carried between them."""
        bsz, length = ids.shape
        dtype = self.dtype if self.dtype in _SCAN_DTYPES else torch.float32
        n = self.h0.numel()
        block = max(1, CHUNK_ELEMENTS // max(1, bsz * n))
        h = self.h0.to(dtype).expand(bsz, -1)
        for s in range(0, length, block):
            x = ids[:, s : s + block]
            hs = pd_scan(self.P[x], self.D[x].to(dtype), torch.zeros(*x.shape, n, dtype=dtype), h, impl="torch")
            h = hs[:, -1]
            yield s, hs

    @torch.no_grad()
    def predict_states(self, symbol_ids: Any, lengths: Any = None) -> torch.Tensor:
        """Automaton state index (B, T) after each symbol ((T,) for one word); −1 past each word's length.
        Bad ids raise SymbolIdError (compiler/inputs.py)."""
        ids, _, x = checked_ids(symbol_ids, self.n_symbols, lengths)
        if ids.numel() == 0:
            return finish(x, torch.full_like(ids, -1))
        out = torch.empty(ids.shape, dtype=torch.long)
        for s, hs in self.hidden_blocks(ids):
            out[:, s : s + hs.shape[1]] = self.decode(hs)
        return finish(x, out)

    @torch.no_grad()
    def predict_accept(self, symbol_ids: Any, lengths: Any = None) -> torch.Tensor:
        """Whether each prefix is accepted, (B, T) bool; UnknownStateError when the automaton has no accepting set."""
        self.program.accepting_mask()
        return accepted(self.predict_states(symbol_ids, lengths), self.accepting_mask)


def build_pdssm(model: CompiledModel) -> PDSSMModel:
    return PDSSMModel(model)
