"""The stacked linear-RNN model of compiled "householder" and "diagonal" targets (compiler/README.md).

Layer i reads row r_t = row of (x_t, s_0(t−1), …, s_{i−1}(t−1)): the symbol and the upper layers' decoded states
from the previous step (the one-step causal shift of docs/theory.md, as the short causal convolutions of Mamba/DeltaNet
provide; s_j(0) is layer j's initial state). The final readout maps (s_0(t), …, s_{L−1}(t)) to an automaton state.

The recurrent form, one step at a time on a batch, is public for the steppers of fsa2rnn.realize:
``initial(n)`` (every layer's H_0), ``layer_rows(i, x, upper)``, ``step(hidden, x, decoded)`` and
``read(decoded)``; ``decode(hidden)`` gives every layer's state.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from fsa2rnn.compiler.keys import key_space
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.program import LinearRNNProgram, program_of

from .inputs import accepted, accepting_tensor, causal_shift, checked_ids, finish
from .lrnn import DiagonalLinearRNN, GHLinearRNN, KeyTable


def encode_rows(cols: list[torch.Tensor], radix: list[int]) -> torch.Tensor:
    """Mixed-radix key Σ_i cols[i] · Π_{j<i} radix[j] (int64): compiler/keys.py's ``encode_keys`` in torch."""
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

    def __init__(self, compiled: CompiledModel, program: LinearRNNProgram | None = None) -> None:
        super().__init__()
        self.compiled = compiled
        self.program = program_of(compiled) if program is None else program
        p = self.program
        self.n_symbols, self.n_states = p.n_symbols, p.n_states
        self.radices = [list(layer.radix) for layer in p.layers]
        self.layers = nn.ModuleList(
            (DiagonalLinearRNN if layer.diagonal else GHLinearRNN).from_program(layer) for layer in p.layers
        )
        self.diagonal = [layer.diagonal for layer in p.layers]
        self.row_tables = nn.ModuleList(
            KeyTable(torch.from_numpy(layer.row_keys.copy()), torch.arange(layer.n_rows), key_space(layer.radix))
            for layer in p.layers
        )
        self.final_radix = list(p.final_radix)
        self.final_table = KeyTable(
            torch.from_numpy(p.final_keys.copy()), torch.from_numpy(p.final_states.copy()), p.final_space
        )
        with torch.no_grad():
            init = [int(layer.decode(layer.h0[None, None])[0, 0]) for layer in self.layers]
        self.register_buffer("init_states", torch.tensor(init, dtype=torch.int64))
        self.has_accepting = p.accepting is not None
        self.register_buffer("accepting", accepting_tensor(p))

    @property
    def dtype(self) -> torch.dtype:
        return self.layers[0].h0.dtype

    # ------------------------------------------------------------------ the recurrent form
    def layer_rows(self, i: int, x: torch.Tensor, upper: list[torch.Tensor]) -> torch.Tensor:
        """Layer i's row of (x, s_0, …, s_{i−1}) (any shape), −1 where the layer has no such row."""
        return self.row_tables[i](encode_rows([x, *upper[:i]], self.radices[i]))

    def initial(self, n: int) -> list[torch.Tensor]:
        """Every layer's H_0 for n words: (n, width) or (n, width, 2) for diagonal layers."""
        return [layer.h0.expand(n, *layer.h0.shape).clone() for layer in self.layers]

    def decode(self, hidden: list[torch.Tensor]) -> list[torch.Tensor]:
        """Every layer's state of hidden vectors (−1 where a hash readout knows none)."""
        return [layer.decode(h) for layer, h in zip(self.layers, hidden)]

    def step(
        self,
        hidden: list[torch.Tensor],
        x: torch.Tensor,
        decoded: list[torch.Tensor] | None = None,
        *,
        mode: str = "fused",
    ) -> list[torch.Tensor]:
        """One step of every layer for symbols x (n,): layer i reads its row of (x, the decoded states of layers
        0..i−1 of ``hidden``) — a failed decode reads as state 0 — and computes A(r) H + B(r)."""
        decoded = self.decode(hidden) if decoded is None and len(hidden) > 1 else decoded
        upper = [s.clamp(min=0) for s in (decoded or [])[:-1]]
        rows = [self.layer_rows(i, x, upper).clamp(min=0) for i in range(len(self.layers))]
        return [layer.step(h, r, mode=mode) for layer, h, r in zip(self.layers, hidden, rows)]

    def read(self, decoded: list[torch.Tensor]) -> torch.Tensor:
        """The automaton state of every tuple of layer states, −1 where one failed or the table has none."""
        bad = torch.stack([s < 0 for s in decoded]).any(0)
        out = self.final_table(encode_rows([s.clamp(min=0) for s in decoded], self.final_radix))
        return torch.where(bad, torch.full_like(out, -1), out)

    # ------------------------------------------------------------------ whole words
    def layer_states(
        self, symbol_ids: torch.LongTensor, *, mode: str = "fused", scan: str = "auto"
    ) -> tuple[list[torch.Tensor], list[torch.Tensor], torch.Tensor | None]:
        """Hidden states and decoded layer states of every layer for checked ids (B, T), and the validity mask
        (B, T) — None when every position is valid (every row found, every upper state decoded)."""
        ids, valid = symbol_ids, None
        hiddens, states = [], []
        for i, layer in enumerate(self.layers):
            # the causal shift: s_j(t − 1), s_j(−1) = layer j's initial state
            cols = [causal_shift(states[j], self.init_states[j]) for j in range(i)]
            if any(bool((c < 0).any()) for c in cols):  # a failed decode upstream: invalid, read at state 0
                valid = _and(valid, *(c >= 0 for c in cols))
                cols = [c.clamp(min=0) for c in cols]
            rows = self.layer_rows(i, ids, cols)
            if bool((rows < 0).any()):
                valid = _and(valid, rows >= 0)
                rows = rows.clamp(min=0)
            h = layer(rows, mode=mode, scan=scan)
            hiddens.append(h)
            states.append(layer.decode(h))
        return hiddens, states, valid

    @torch.no_grad()
    def predict_states(
        self, symbol_ids: Any, lengths: Any = None, *, mode: str = "fused", scan: str = "auto"
    ) -> torch.LongTensor:
        """The automaton state after each symbol, (B, T) ((T,) for one word); −1 past a word's length or where
        decoding fails.

        ``scan`` (nn/compiled/lrnn.py): ``"auto"`` runs permutation and reset layers by the chunked scan of their
        monomial form, bit-identical to the sequential recurrence, and other layers sequentially; ``"parallel"``
        chunks every layer (rotation and diagonal layers then round differently from ``"sequential"``).
        ``symbol_ids``: a tensor, numpy array or list; bad ids raise SymbolIdError (compiler/inputs.py)."""
        ids, _, x = checked_ids(symbol_ids, self.n_symbols, lengths)
        if ids.numel() == 0:
            return finish(x, torch.full_like(ids, -1))
        _, states, valid = self.layer_states(ids, mode=mode, scan=scan)
        if any(bool((s < 0).any()) for s in states):
            valid = _and(valid, *(s >= 0 for s in states))
            states = [s.clamp(min=0) for s in states]
        out = self.final_table(encode_rows(states, self.final_radix))
        if valid is not None:
            out = torch.where(valid, out, torch.full_like(out, -1))
        return finish(x, out)

    @torch.no_grad()
    def predict_accept(self, symbol_ids: Any, lengths: Any = None, **kw: Any) -> torch.Tensor:
        """Whether each prefix is accepted, (B, T) bool (False past a word's length); UnknownStateError when the
        automaton has no accepting set."""
        self.program.accepting_mask()
        return accepted(self.predict_states(symbol_ids, lengths, **kw), self.accepting)


def build_linear_rnn(model: CompiledModel) -> LinearRNNModel:
    return LinearRNNModel(model)
