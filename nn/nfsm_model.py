"""Torch module for compiled NFSM models (target "nfsm"): stacked NFSM layers and the head-index readout.

Layer ℓ reads at step t the key (x_t, indices of the heads of the layers above at step t−1) — the one-step causal
shift that makes stacked layers a cascade product (THEORY.md, "Timing"); the top layer's key is x_t. The states are
read from the tuple of all head indices through the compiled readout table. Header layout: compiler/NFSM.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.fsa.errors import ModelFileError, UnknownSymbolError

from . import register_builder
from .nfsm import NFSMLayer

#: Configuration spaces up to this size get a dense readout table.
DENSE_READOUT_LIMIT = 2**22


class NFSMModel(nn.Module):
    """Compiled NFSM: ``predict_states(symbol_ids, lengths=None)`` and ``predict_accept``; ``.to(dtype)`` switches
    the dtype at which the logits (hence the tables) are computed."""

    def __init__(self, compiled: CompiledModel) -> None:
        super().__init__()
        self.compiled = compiled
        h = compiled.header
        self.n_symbols = len(h["symbols"])
        self.layer_specs: list[dict[str, Any]] = []
        layers = []
        for i, spec in enumerate(h["layers"]):
            if spec.get("kind") != "nfsm":
                raise ModelFileError(f"layer {i} has kind {spec.get('kind')!r}, expected 'nfsm'")
            emb, w, b = (_tensor(compiled, spec[k]) for k in ("embedding", "weight", "bias"))
            heads = [int(d) for d in spec["heads"]]
            n_keys = int(spec["n_keys"])
            if (
                emb.shape[0] != n_keys
                or w.shape != (sum(d * d for d in heads), emb.shape[1])
                or b.shape != (w.shape[0],)
            ):
                raise ModelFileError(f"layer {i}: embedding/weight/bias shapes do not match its heads and keys")
            layer = NFSMLayer(n_keys, heads, embed_dim=emb.shape[1]).double()
            with torch.no_grad():
                layer.embedding.weight.copy_(torch.from_numpy(emb))
                layer.logits.weight.copy_(torch.from_numpy(w))
                layer.logits.bias.copy_(torch.from_numpy(b))
            layers.append(layer)
            self.layer_specs.append(spec)
        self.layers = nn.ModuleList(layers)
        ro = h["readout"]
        self.radices = [int(r) for r in ro["radices"]]
        self.register_buffer("readout_codes", torch.from_numpy(_tensor(compiled, ro["codes"]).astype(np.int64)))
        self.register_buffer("readout_states", torch.from_numpy(_tensor(compiled, ro["states"]).astype(np.int64)))
        size = int(np.prod(self.radices, dtype=object))
        dense = None
        if size <= DENSE_READOUT_LIMIT:  # a direct lookup table instead of a binary search
            dense = torch.full((size,), -1, dtype=torch.long)
            dense[self.readout_codes] = self.readout_states
        self.register_buffer("readout_dense", dense)
        acc = h.get("accepting")
        mask = torch.zeros(len(h["states"]), dtype=torch.bool)
        if acc is not None:
            mask[list(acc)] = True
        self.register_buffer("accepting_mask", mask)
        self.has_accepting = acc is not None
        self.double()

    @property
    def dtype(self) -> torch.dtype:
        return self.layers[0].logits.weight.dtype

    def head_indices(
        self, symbol_ids: torch.Tensor, lengths: torch.Tensor | None = None, *, impl: str = "auto"
    ) -> torch.Tensor:
        """Indices (B, T, H) of every head of every layer after each symbol; -1 past lengths."""
        ids = torch.as_tensor(symbol_ids).long()
        ids = ids[None, :] if ids.dim() == 1 else ids
        bsz, length = ids.shape
        dev = ids.device
        pad = None
        if lengths is not None:
            lengths = torch.as_tensor(lengths, device=dev).long()
            pad = torch.arange(length, device=dev)[None, :] >= lengths[:, None]
            ids = ids.masked_fill(pad, 0)  # padding (any value): states before a position never depend on it
        self._check_ids(ids)
        per_layer: list[torch.Tensor] = []
        for spec, layer in zip(self.layer_specs, self.layers):
            key = ids
            upper = spec["upper"]
            if upper:
                done = torch.cat(per_layer, dim=-1)  # (B, T, H_above) indices after each step
                init = torch.tensor(self._initial_config(), device=dev)
                prev = torch.cat([init[upper].expand(bsz, 1, len(upper)), done[:, :-1, :][..., upper]], dim=1)
                for j, r in enumerate(spec["key_radices"][1:]):
                    key = key * int(r) + prev[..., j].clamp(min=0)
            h0 = torch.tensor(spec["initial"], device=dev)
            per_layer.append(layer.scan(key, h0, None, impl=impl))
        out = torch.cat(per_layer, dim=-1)
        if pad is not None:
            out = out.masked_fill(pad[..., None], -1)
        return out

    def predict_states(
        self, symbol_ids: torch.Tensor, lengths: torch.Tensor | None = None, *, impl: str = "auto"
    ) -> torch.Tensor:
        """Automaton state index (B, T) after each symbol; -1 past each word's length."""
        idx = self.head_indices(symbol_ids, lengths, impl=impl)
        code = torch.zeros(idx.shape[:-1], dtype=torch.long, device=idx.device)
        for i, r in enumerate(self.radices):
            code = code * r + idx[..., i].clamp(min=0)
        if self.readout_dense is not None:
            states = self.readout_dense[code]
        else:
            codes = self.readout_codes
            pos = torch.searchsorted(codes, code).clamp(max=len(codes) - 1)
            states = torch.where(codes[pos] == code, self.readout_states[pos], -1)
        return states.masked_fill((idx < 0).any(dim=-1), -1)

    def predict_accept(self, symbol_ids: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """Whether the state after each symbol is accepting (B, T) bool; False past each word's length."""
        if not self.has_accepting:
            raise UnknownSymbolError("the model's automaton has no accepting states")
        states = self.predict_states(symbol_ids, lengths)
        return torch.where(states >= 0, self.accepting_mask.to(states.device)[states.clamp(min=0)], False)

    def forward(self, symbol_ids: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """The last layer's projected head outputs (B, T, width)."""
        idx = self.head_indices(symbol_ids, lengths)
        n_last = len(self.layers[-1].heads)
        return self.layers[-1].outputs(idx[..., -n_last:])

    def _initial_config(self) -> list[int]:
        return [int(v) for spec in self.layer_specs for v in spec["initial"]]

    def _check_ids(self, ids: torch.Tensor) -> None:
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.n_symbols):
            bad = int(ids.max()) if int(ids.max()) >= self.n_symbols else int(ids.min())
            raise UnknownSymbolError(f"symbol id {bad} out of range (0..{self.n_symbols - 1})")


def _tensor(compiled: CompiledModel, name: str) -> np.ndarray:
    if name not in compiled.tensors:
        raise ModelFileError(f"model file lacks tensor {name!r} named in its header")
    return np.asarray(compiled.tensors[name])


@register_builder("nfsm")
def build_nfsm(compiled: CompiledModel) -> NFSMModel:
    return NFSMModel(compiled)
