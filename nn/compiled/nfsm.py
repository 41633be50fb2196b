"""Torch module for compiled NFSM models (target "nfsm"): stacked NFSM layers and the head-index readout.

Layer ℓ reads at step t the key (x_t, indices of the heads of the layers above at step t−1) — the one-step causal
shift that makes stacked layers a cascade product (docs/theory.md, "The timing of cascades"); the top layer's key is
x_t. The states are read from the tuple of all head indices through the compiled readout table. Header layout:
compiler/NFSM.md; the parsed layers: compiler/program.py ``NFSMProgram``.

The recurrent form, one step at a time on a batch of head-index tuples, is public for the steppers of
fsa2rnn.realize: ``initial_config`` (the start indices), ``layer_key(i, x, config)`` and ``read(config)``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from fsa2rnn.compiler.keys import mixed_radix_weights
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.program import NFSMProgram, program_of

from ..nfsm import NFSMLayer
from .inputs import accepted, accepting_tensor, causal_shift, checked_ids, finish
from .lrnn import KeyTable


class NFSMModel(nn.Module):
    """Compiled NFSM: ``predict_states(symbol_ids, lengths=None)`` and ``predict_accept``; ``.to(dtype)`` switches
    the dtype at which the logits (hence the tables) are computed."""

    def __init__(self, compiled: CompiledModel, program: NFSMProgram | None = None) -> None:
        super().__init__()
        self.compiled = compiled
        self.program = program_of(compiled) if program is None else program
        p = self.program
        self.n_symbols = p.n_symbols
        layers = []
        for spec in p.layers:
            layer = NFSMLayer(spec.n_keys, spec.heads, embed_dim=spec.embedding.shape[1]).double()
            with torch.no_grad():
                layer.embedding.weight.copy_(torch.from_numpy(spec.embedding.copy()))
                layer.logits.weight.copy_(torch.from_numpy(spec.weight.copy()))
                layer.logits.bias.copy_(torch.from_numpy(spec.bias.copy()))
            layers.append(layer)
        self.layers = nn.ModuleList(layers)
        self.radices = list(p.dims)
        self.code_weights = mixed_radix_weights(p.dims)  #: configuration code = Σ index_g · weight_g
        self.key_weights = [mixed_radix_weights(spec.key_radices) for spec in p.layers]
        self.readout = KeyTable(
            torch.from_numpy(p.readout_codes.copy()), torch.from_numpy(p.readout_states.copy()), p.readout_space
        )
        self.has_accepting = p.accepting is not None
        self.register_buffer("accepting_mask", accepting_tensor(p))
        self.register_buffer("initial_config", torch.tensor(p.initial_config, dtype=torch.long))
        self.double()

    @property
    def dtype(self) -> torch.dtype:
        return self.layers[0].logits.weight.dtype

    # ------------------------------------------------------------------ the recurrent form
    def layer_key(self, i: int, x: torch.Tensor, config: torch.Tensor) -> torch.Tensor:
        """Layer i's key for symbols x (…) after configurations ``config`` (…, H) of the previous step."""
        spec, w = self.program.layers[i], self.key_weights[i]
        key = x * w[0]
        for g, wg in zip(spec.upper, w[1:]):
            key = key + config[..., g] * wg
        return key

    def read(self, config: torch.Tensor) -> torch.Tensor:
        """The automaton state of configurations (…, H), −1 for one the readout does not know."""
        code = config[..., 0] * self.code_weights[0]
        for g, w in enumerate(self.code_weights[1:], start=1):
            code = torch.add(code, config[..., g], alpha=w)
        return self.readout(code)

    # ------------------------------------------------------------------ whole words
    def head_indices(self, symbol_ids: Any, lengths: Any = None, *, impl: str = "auto") -> torch.Tensor:
        """Indices (B, T, H) of every head of every layer after each symbol; −1 past lengths."""
        ids, _, x = checked_ids(symbol_ids, self.n_symbols, lengths)
        out = self._indices(ids, impl=impl)
        pad = x.padding()
        if pad is not None:
            out = out.masked_fill(torch.from_numpy(pad).to(out.device)[..., None], -1)
        return out[0] if x.single else out

    def _indices(self, ids: torch.Tensor, *, impl: str = "auto") -> torch.Tensor:
        per_layer: list[torch.Tensor] = []
        columns: list[torch.Tensor] = []  # (B, T) indices of each global head after each step
        init = self.initial_config.to(ids.device)
        for i, (spec, layer) in enumerate(zip(self.program.layers, self.layers)):
            key = ids * self.key_weights[i][0]
            if spec.upper:
                # the upper heads' part of the key, summed over all steps, then the causal shift by one step
                part = sum(columns[g] * w for g, w in zip(spec.upper, self.key_weights[i][1:]))
                start = sum(int(init[g]) * w for g, w in zip(spec.upper, self.key_weights[i][1:]))
                key = key + causal_shift(part, start)
            heads = layer.scan(key, torch.tensor(spec.initial, device=ids.device), None, impl=impl)
            per_layer.append(heads)
            columns.extend(heads[..., h] for h in range(heads.shape[-1]))
        return per_layer[0] if len(per_layer) == 1 else torch.cat(per_layer, dim=-1)

    @torch.no_grad()
    def predict_states(self, symbol_ids: Any, lengths: Any = None, *, impl: str = "auto") -> torch.Tensor:
        """Automaton state index (B, T) after each symbol ((T,) for one word); −1 past each word's length.
        ``symbol_ids``: a tensor, numpy array or list; bad ids raise SymbolIdError (compiler/inputs.py)."""
        ids, _, x = checked_ids(symbol_ids, self.n_symbols, lengths)
        if ids.numel() == 0:
            return finish(x, torch.full_like(ids, -1))
        return finish(x, self.read(self._indices(ids, impl=impl)))

    @torch.no_grad()
    def predict_accept(self, symbol_ids: Any, lengths: Any = None, **kw: Any) -> torch.Tensor:
        """Whether the state after each symbol is accepting (B, T) bool; False past each word's length;
        UnknownStateError when the automaton has no accepting set."""
        self.program.accepting_mask()
        return accepted(self.predict_states(symbol_ids, lengths, **kw), self.accepting_mask)

    def forward(self, symbol_ids: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """The last layer's projected head outputs (B, T, width)."""
        idx = self.head_indices(symbol_ids, lengths)
        n_last = len(self.layers[-1].heads)
        return self.layers[-1].outputs(idx[..., -n_last:])


def build_nfsm(compiled: CompiledModel) -> NFSMModel:
    return NFSMModel(compiled)
