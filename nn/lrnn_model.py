"""The stacked linear-RNN model of compiled "householder" and "diagonal" targets (compiler/README.md).

Layer i reads row r_t = row of (x_t, s_0(t−1), …, s_{i−1}(t−1)): the symbol and the upper layers' decoded states
from the previous step (the one-step causal shift of docs/theory.md, as the short causal convolutions of Mamba/DeltaNet
provide; s_j(0) is layer j's initial state). The final readout maps (s_0(t), …, s_{L−1}(t)) to an automaton state.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from fsa2rnn.compiler.lrnn_spec import check_digest, encode_keys
from fsa2rnn.compiler.model import CompiledModel

from . import register_builder
from .inputs import symbol_id_tensor
from .lrnn import DiagonalLinearRNN, GHLinearRNN, KeyTable


def _encode(cols: list[torch.Tensor], radix: list[int]) -> torch.Tensor:
    """Mixed-radix key Σ_i cols[i] · Π_{j<i} radix[j] (int64)."""
    key = cols[0]
    mult = int(radix[0])
    for c, r in zip(cols[1:], radix[1:]):
        key = torch.add(key, c, alpha=mult)
        mult *= int(r)
    return key


def _and(mask: torch.Tensor | None, *more: torch.Tensor) -> torch.Tensor:
    for m in more:
        mask = m if mask is None else mask & m
    return mask


class LinearRNNModel(nn.Module):
    """A stack of GH-product / diagonal linear-RNN layers with the causal shift between them and a final readout."""

    def __init__(self, compiled: CompiledModel) -> None:
        super().__init__()
        check_digest(compiled)
        self.compiled = compiled
        h = compiled.header
        self.n_symbols = len(h["symbols"])
        self.n_states = len(h["states"])
        self.radices = [list(map(int, e["radix"])) for e in h["layers"]]
        layers, tables = [], []
        for i, e in enumerate(h["layers"]):
            layers.append((DiagonalLinearRNN if e["kind"] == "diagonal" else GHLinearRNN).from_compiled(compiled, i))
            name = e["name"]
            keys = compiled.tensors[f"{name}.keys"]
            codes = torch.from_numpy(encode_keys(list(keys.T), self.radices[i]))
            tables.append(KeyTable(codes, torch.arange(len(codes)), int(np.prod(self.radices[i], dtype=object))))
        self.layers = nn.ModuleList(layers)
        self.row_tables = nn.ModuleList(tables)
        self.final_radix = list(map(int, h["readout"]["radix"]))
        self.final_table = KeyTable(
            torch.from_numpy(compiled.tensors["readout.keys"].copy()),
            torch.from_numpy(compiled.tensors["readout.states"].copy()),
            int(np.prod(self.final_radix, dtype=object)),
        )
        with torch.no_grad():
            init = [int(layer.decode(layer.h0[None, None])[0, 0]) for layer in self.layers]
        self.register_buffer("init_states", torch.tensor(init, dtype=torch.int64))
        acc = h.get("accepting")
        mask = torch.zeros(self.n_states, dtype=torch.bool)
        if acc is not None:
            mask[torch.tensor(acc, dtype=torch.int64)] = True
        self.has_accepting = acc is not None
        self.register_buffer("accepting", mask)

    @property
    def dtype(self) -> torch.dtype:
        return self.layers[0].h0.dtype

    def layer_states(
        self, symbol_ids: torch.LongTensor, *, mode: str = "fused", scan: str = "auto"
    ) -> tuple[list[torch.Tensor], list[torch.Tensor], torch.Tensor | None]:
        """Hidden states and decoded layer states of every layer, and a validity mask (B, T) — None when every
        position is valid (ids in range, every row found, every upper state decoded)."""
        valid = (symbol_ids >= 0) & (symbol_ids < self.n_symbols)
        if bool(valid.all()):
            ids, valid = symbol_ids, None
        else:
            ids = symbol_ids.clamp(0, self.n_symbols - 1)
        hiddens, states = [], []
        for i, layer in enumerate(self.layers):
            cols = [ids]
            for j in range(i):
                prev = torch.cat([self.init_states[j].expand(ids.shape[0], 1), states[j][:, :-1]], dim=1)
                cols.append(prev)
            if valid is not None or any(bool((c < 0).any()) for c in cols[1:]):  # a failed decode upstream
                valid = _and(valid, *(c >= 0 for c in cols[1:]))
                cols = [cols[0], *(c.clamp(min=0) for c in cols[1:])]
            rows = self.row_tables[i](_encode(cols, self.radices[i]))
            if bool((rows < 0).any()):
                valid = _and(valid, rows >= 0)
                rows = rows.clamp(min=0)
            h = layer(rows, mode=mode, scan=scan)
            hiddens.append(h)
            states.append(layer.decode(h))
        return hiddens, states, valid

    @torch.no_grad()
    def predict_states(
        self,
        symbol_ids: torch.LongTensor,
        lengths: torch.LongTensor | None = None,
        *,
        mode: str = "fused",
        scan: str = "auto",
    ) -> torch.LongTensor:
        """The automaton state after each symbol, (B, T); −1 past a word's length or where decoding fails.

        ``scan`` (nn/lrnn.py): ``"auto"`` runs permutation and reset layers by the chunked scan of their monomial
        form, bit-identical to the sequential recurrence, and other layers sequentially; ``"parallel"`` chunks every
        layer (rotation and diagonal layers then round differently from ``"sequential"``).
        ``symbol_ids``: a tensor, numpy array or list; an id outside the alphabet raises UnknownSymbolError."""
        symbol_ids, lengths = symbol_id_tensor(symbol_ids, self.n_symbols, lengths)
        if symbol_ids.dim() == 1:
            return self.predict_states(
                symbol_ids[None], None if lengths is None else lengths.reshape(1), mode=mode, scan=scan
            )[0]
        _, states, valid = self.layer_states(symbol_ids, mode=mode, scan=scan)
        if any(bool((s < 0).any()) for s in states):
            valid = _and(valid, *(s >= 0 for s in states))
            states = [s.clamp(min=0) for s in states]
        out = self.final_table(_encode(states, self.final_radix))
        if valid is not None:
            out = torch.where(valid, out, torch.full_like(out, -1))
        if lengths is not None:
            pos = torch.arange(symbol_ids.shape[1])[None, :]
            out = torch.where(pos < lengths[:, None], out, torch.full_like(out, -1))
        return out

    @torch.no_grad()
    def predict_accept(
        self, symbol_ids: torch.LongTensor, lengths: torch.LongTensor | None = None, **kw
    ) -> torch.Tensor:
        """Whether each prefix is accepted, (B, T) bool (False past a word's length)."""
        if not self.has_accepting:
            raise ValueError("the automaton has no accepting states")
        states = self.predict_states(symbol_ids, lengths, **kw)
        return (states >= 0) & self.accepting[states.clamp(min=0)]


@register_builder("householder")
def _build_householder(model: CompiledModel) -> LinearRNNModel:
    return LinearRNNModel(model)


@register_builder("diagonal")
def _build_diagonal(model: CompiledModel) -> LinearRNNModel:
    return LinearRNNModel(model)
