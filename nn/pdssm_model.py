"""Torch module for compiled "pdssm" models (compiler/automaton_to_pdssm.py): h_t = P(x_t) D(x_t) h_{t−1} with P(x)
given as index arrays, run by :func:`fsa2rnn.nn.ops.pd_scan` (the chunked scan in the class of PD matrices)
in time chunks that carry the state, then the one-hot readout state(argmax h). The recurrent form
(``initial``/``step``/``read``) is the same recurrence one symbol at a time.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.fsa.errors import UnknownSymbolError

from . import register_builder
from .inputs import symbol_id_tensor
from .ops import pd_scan
from .ops.pd_scan import pd_apply

#: state entries B·C·N of one time chunk
CHUNK_ELEMENTS = 1 << 22
_SCAN_DTYPES = (torch.float32, torch.float64)


class PDSSMModel(nn.Module):
    """Compiled PD-SSM: ``predict_states(symbol_ids, lengths=None)`` and ``predict_accept``; ``.to(dtype)`` sets the
    dtype of D, h_0 and the states (float16 and bfloat16 scan in float32: the values 0 and 1 are exact in all)."""

    def __init__(self, compiled: CompiledModel) -> None:
        super().__init__()
        self.compiled = compiled
        layer = compiled.header["layers"][0]
        t = compiled.tensors
        self.n_symbols = len(compiled.header["symbols"])
        self.register_buffer("P", torch.from_numpy(np.array(t[layer["P"]], dtype=np.int64)))
        self.register_buffer("D", torch.from_numpy(np.array(t[layer["D"]], dtype=np.float64)))
        self.register_buffer("h0", torch.from_numpy(np.array(t[layer["h0"]], dtype=np.float64)))
        self.register_buffer("states", torch.from_numpy(np.array(t[compiled.header["readout"]["states"]], np.int64)))
        acc = compiled.header.get("accepting")
        mask = torch.zeros(len(compiled.header["states"]), dtype=torch.bool)
        if acc is not None:
            mask[list(acc)] = True
        self.register_buffer("accepting_mask", mask)
        self.has_accepting = acc is not None

    @property
    def dtype(self) -> torch.dtype:
        return self.D.dtype

    # ------------------------------------------------------------------ recurrent form
    def initial(self, batch: int) -> torch.Tensor:
        return self.h0.expand(batch, -1).clone()

    def step(self, h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """h (B, N), symbols x (B,) → P(x) D(x) h."""
        return pd_apply(self.P[x], self.D[x].to(h.dtype), h)

    def read(self, h: torch.Tensor) -> torch.Tensor:
        return self.states[h.argmax(-1)]

    # ------------------------------------------------------------------ the scan
    def hidden_chunks(self, ids: torch.Tensor):
        """Yield (start, h (B, C, N)) over time chunks of the words, the state carried between them."""
        bsz, length = ids.shape
        dtype = self.dtype if self.dtype in _SCAN_DTYPES else torch.float32
        n = self.h0.numel()
        chunk = max(1, CHUNK_ELEMENTS // max(1, bsz * n))
        h = self.h0.to(dtype).expand(bsz, -1)
        for s in range(0, length, chunk):
            x = ids[:, s : s + chunk]
            hs = pd_scan(self.P[x], self.D[x].to(dtype), torch.zeros(*x.shape, n, dtype=dtype), h, impl="torch")
            h = hs[:, -1]
            yield s, hs

    @torch.no_grad()
    def predict_states(self, symbol_ids: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Automaton state index (B, T) after each symbol ((T,) for one word); −1 past each word's length.
        ``symbol_ids``: a tensor, numpy array or list; an id outside the alphabet raises UnknownSymbolError."""
        ids, lengths = symbol_id_tensor(symbol_ids, self.n_symbols, lengths)
        if ids.dim() == 1:
            return self.predict_states(ids[None], None if lengths is None else lengths.reshape(1))[0]
        pad = None
        if lengths is not None:
            pad = torch.arange(ids.shape[1])[None, :] >= lengths[:, None]
            ids = ids.masked_fill(pad, 0)
        out = torch.empty(ids.shape, dtype=torch.long)
        for s, hs in self.hidden_chunks(ids):
            out[:, s : s + hs.shape[1]] = self.read(hs)
        return out if pad is None else out.masked_fill(pad, -1)

    def predict_accept(self, symbol_ids: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Whether the state after each symbol is accepting (B, T) bool; False past each word's length."""
        if not self.has_accepting:
            raise UnknownSymbolError("the model's automaton has no accepting states")
        states = self.predict_states(symbol_ids, lengths)
        return torch.where(states >= 0, self.accepting_mask[states.clamp(min=0)], False)


@register_builder("pdssm")
def build_pdssm(compiled: CompiledModel) -> PDSSMModel:
    return PDSSMModel(compiled)
