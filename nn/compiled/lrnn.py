"""The stacked linear-RNN model of compiled "householder" and "diagonal" targets (compiler/targets/lrnn/README.md).

Layer i reads row r_t = row of (x_t, s_0(t−1), …, s_{i−1}(t−1)): the symbol and the upper layers' decoded states
from the previous step (the cascade wiring, compiler/wiring.py: the one-step causal shift of docs/theory.md, as the
short causal convolutions of Mamba/DeltaNet provide; s_j(0) is layer j's initial state). The final readout maps
(s_0(t), …, s_{L−1}(t)) to an automaton state.

The recurrent form (nn/compiled/base.py) on flat hidden vectors — the layers' vectors side by side, a diagonal
layer's complex coordinates as (re, im) pairs —: ``initial(n)``, ``decode(h)`` (every layer's state),
``step(h, x, decoded, mode=…)`` (A(r) h + B(r), fused or factor by factor), ``read(h, decoded)``, ``layer_rows(i, x,
upper)``, and ``numpy_step`` (compiler/targets/lrnn/step.py, the same arithmetic in numpy).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ...compiler.keys import LOW_FIRST, KeyLookup, encode, key_space
from ...compiler.model import CompiledModel
from ...compiler.targets.lrnn.program import HashReadout, LinearRNNProgram
from ...compiler.targets.lrnn.step import LinearRNNStep, StepLayer
from ...compiler.wiring import causal_shift, layer_keys
from ...fsa.errors import LimitExceededError
from .base import NUMPY_DTYPES, RUN_SCAN, CodeBlock, CompiledModule, finish
from .keys import KeyTable
from .lrnn_layers import DiagonalLinearRNN, GHLinearRNN


def _and(mask: torch.Tensor | None, *more: torch.Tensor) -> torch.Tensor:
    for m in more:
        mask = m if mask is None else mask & m
    return mask


def _np(t: torch.Tensor, dtype: Any = None) -> np.ndarray:
    a = t.detach().cpu().numpy()
    return np.ascontiguousarray(a if dtype is None else a.astype(dtype))


def _lookup(table: KeyTable) -> KeyLookup:
    return KeyLookup(_np(table.keys), _np(table.values), table.space)


class LinearRNNModel(CompiledModule):
    """A stack of GH-product / diagonal linear-RNN layers with the causal shift between them and a final readout."""

    def __init__(self, compiled: CompiledModel, program: LinearRNNProgram | None = None) -> None:
        super().__init__(compiled, program, expect=LinearRNNProgram)
        p = self.program
        self.n_states = p.n_states
        self.radices = [list(layer.radix) for layer in p.layers]
        self.layers = nn.ModuleList(
            (DiagonalLinearRNN if layer.diagonal else GHLinearRNN).from_program(layer) for layer in p.layers
        )
        self.diagonal = [layer.diagonal for layer in p.layers]
        self.step_modes = ("fused",) if any(self.diagonal) else ("fused", "factors")
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
        self.sizes = [layer.width * (2 if diag else 1) for layer, diag in zip(self.layers, self.diagonal)]

    @property
    def dtype(self) -> torch.dtype:
        return self.layers[0].h0.dtype

    def run_options(self, mode: str = "fused") -> dict[str, Any]:
        """RUN_SCAN for the fused transitions; ``mode="factors"`` (Householder factor by factor, ``verify --mode
        factors``) is the sequential recurrence by definition; the mode itself where the layers have factors."""
        out: dict[str, Any] = {"scan": RUN_SCAN if mode == "fused" else "sequential"}
        if len(self.step_modes) > 1:
            out["mode"] = mode
        return out

    # ------------------------------------------------------------------ the recurrent form
    def layer_rows(self, i: int, x: torch.Tensor, upper: list[torch.Tensor]) -> torch.Tensor:
        """Layer i's row of (x, s_0, …, s_{i−1}) (any shape), −1 where the layer has no such row."""
        return self.row_tables[i](layer_keys(x, upper[:i], self.radices[i], LOW_FIRST))

    def _split(self, h: torch.Tensor) -> list[torch.Tensor]:
        parts, start = [], 0
        for size, diag in zip(self.sizes, self.diagonal):
            part = h[:, start : start + size]
            parts.append(part.reshape(len(h), -1, 2) if diag else part)
            start += size
        return parts

    def initial(self, n: int) -> torch.Tensor:
        """Every layer's H_0 for n words, flat (n, D)."""
        return torch.cat([layer.h0.expand(n, *layer.h0.shape).reshape(n, -1) for layer in self.layers], dim=-1)

    def decode(self, h: torch.Tensor) -> list[torch.Tensor]:
        """Every layer's state of flat hidden vectors (−1 where a hash readout knows none)."""
        return [layer.decode(part) for layer, part in zip(self.layers, self._split(h))]

    def step(
        self, h: torch.Tensor, x: torch.Tensor, decoded: list[torch.Tensor] | None = None, *, mode: str = "fused"
    ) -> torch.Tensor:
        """One step of every layer for symbols x (n,): layer i reads its row of (x, the decoded states of layers
        0..i−1 of h) — a failed decode reads as state 0: wrong already, and the trajectory goes on — and computes
        A(r) H + B(r)."""
        parts = self._split(h)
        decoded = self.decode(h) if decoded is None and len(parts) > 1 else decoded
        upper = [s.clamp(min=0) for s in (decoded or [])[:-1]]
        rows = [self.layer_rows(i, x, upper).clamp(min=0) for i in range(len(self.layers))]
        new = [layer.step(p, r, mode=mode) for layer, p, r in zip(self.layers, parts, rows)]
        return torch.cat([p.reshape(len(h), -1) for p in new], dim=-1)

    def read(self, h: torch.Tensor, decoded: list[torch.Tensor] | None = None) -> torch.Tensor:
        """The automaton state of flat hidden vectors, −1 where a layer failed or the table has none."""
        decoded = self.decode(h) if decoded is None else decoded
        bad = torch.stack([s < 0 for s in decoded]).any(0)
        out = self.final_table(encode([s.clamp(min=0) for s in decoded], self.final_radix, LOW_FIRST))
        return torch.where(bad, torch.full_like(out, -1), out)

    def code_blocks(self, max_codes: int | None = None) -> list[CodeBlock]:
        """One block per layer: its code points (a diagonal layer's in (re, im) pairs) and layer states, Voronoi
        cells; a hash readout's permutations of 1..n and the rounding cubes."""
        blocks = []
        for layer, spec, size in zip(self.layers, self.program.layers, self.sizes):
            ro = layer.readout
            if ro.kind == "nearest":
                if max_codes is not None and len(ro.codes) > max_codes:
                    raise LimitExceededError(f"a layer with {len(ro.codes)} code points (limit {max_codes})")
                codes, labels = ro.codes.double().reshape(len(ro.codes), size), ro.code_states.long()
                blocks.append(CodeBlock(size, codes, labels))
                continue
            hashed: HashReadout = spec.readout
            if max_codes is not None and len(hashed.keys) > max_codes:
                raise LimitExceededError(f"a hash readout with {len(hashed.keys)} code points (limit {max_codes})")
            codes = torch.from_numpy(hashed.code_points()).double()
            blocks.append(CodeBlock(size, codes, torch.from_numpy(hashed.values.copy()), cube=True))
        return blocks

    def numpy_step(self, mode: str = "fused") -> LinearRNNStep | None:
        """The numpy twin of :meth:`step` at the module's dtype (float64, float32; None for the others)."""
        dt = NUMPY_DTYPES.get(self.dtype)
        if dt is None:
            return None
        layers = []
        for layer, diag, table, radix in zip(self.layers, self.diagonal, self.row_tables, self.radices):
            sp = StepLayer(rows=_lookup(table), radix=list(radix), h0=_np(layer.h0, dt).reshape(-1), diagonal=diag)
            if diag:
                sp.lam, sp.b = _np(layer.lam, dt), _np(layer.b, dt)
            else:
                sp.A, sp.B, sp.beta, sp.v = (_np(t, dt) for t in (layer.A_fused, layer.B, layer.beta, layer.v))
            ro = layer.readout
            if ro.kind == "nearest":
                sp.codes, sp.states = _np(ro.codes, dt).reshape(ro.codes.shape[0], -1), _np(ro.code_states)
            else:
                sp.width, sp.hash, sp.powers = ro.width, _lookup(ro.table), _np(ro.powers)
            layers.append(sp)
        return LinearRNNStep(layers, _lookup(self.final_table), self.final_radix, mode, dt)

    # ------------------------------------------------------------------ whole words
    def layer_states(
        self, symbol_ids: torch.LongTensor, *, mode: str = "fused", scan: str = "auto"
    ) -> tuple[list[torch.Tensor], list[torch.Tensor], torch.Tensor | None]:
        """Hidden states and decoded layer states of every layer for checked ids (B, T), and the validity mask
        (B, T) — None when every position is valid (every row found, every upper state decoded)."""
        ids, valid = symbol_ids, None
        hiddens, states = [], []
        for i, layer in enumerate(self.layers):
            # the states of the layers above one step earlier, s_j(−1) = layer j's initial state
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

    def hidden(self, symbol_ids: torch.Tensor, **options: Any) -> torch.Tensor:
        """The flat hidden states (B, T, D) of checked ids (B, T): the layers' vectors side by side."""
        hs, _, _ = self.layer_states(symbol_ids, **options)
        return torch.cat([h.reshape(*symbol_ids.shape, -1) for h in hs], dim=-1)

    @torch.no_grad()
    def predict_states(
        self, symbol_ids: Any, lengths: Any = None, *, mode: str = "fused", scan: str = "auto"
    ) -> torch.LongTensor:
        """The automaton state after each symbol, (B, T) ((T,) for one word); −1 past a word's length or where
        decoding fails.

        ``scan`` (nn/compiled/lrnn_layers.py): ``"auto"`` runs permutation and reset layers by the chunked scan of
        their monomial form, bit-identical to the sequential recurrence, and other layers sequentially;
        ``"parallel"`` chunks every layer (rotation and diagonal layers then round differently from
        ``"sequential"``). ``symbol_ids``: ids or symbol names, as a tensor, numpy array or lists; bad ones raise
        SymbolIdError (fsa/inputs.py)."""
        ids, _, x = self.checked(symbol_ids, lengths)
        if ids.numel() == 0:
            return finish(x, torch.full_like(ids, -1))
        _, states, valid = self.layer_states(ids, mode=mode, scan=scan)
        if any(bool((s < 0).any()) for s in states):
            valid = _and(valid, *(s >= 0 for s in states))
            states = [s.clamp(min=0) for s in states]
        out = self.final_table(encode(states, self.final_radix, LOW_FIRST))
        if valid is not None:
            out = torch.where(valid, out, torch.full_like(out, -1))
        return finish(x, out)


__all__ = ["LinearRNNModel"]
