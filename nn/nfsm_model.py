"""Torch module for compiled NFSM models (target "nfsm"): stacked NFSM layers and the head-index readout.

Layer ℓ reads at step t the key (x_t, indices of the heads of the layers above at step t−1) — the one-step causal
shift that makes stacked layers a cascade product (docs/theory.md, "The timing of cascades"); the top layer's key is
x_t. The states are read from the tuple of all head indices through the compiled readout table. Header layout:
compiler/NFSM.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.fsa.errors import ModelFileError, UnknownSymbolError

from . import register_builder
from .inputs import symbol_id_tensor
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
        columns: list[torch.Tensor] = []  # (B, T) indices of each global head after each step
        init = self._initial_config()
        for spec, layer in zip(self.layer_specs, self.layers):
            key = ids
            upper = spec["upper"]
            if upper:
                # key = x_t·Π r + Σ_j c_j(t−1)·w_j, w_j = Π_{i>j} r_i (mixed radix, symbol most significant):
                # the upper heads' part is summed over all steps, then shifted by one (c_j(0) = the start index)
                radices = [int(r) for r in spec["key_radices"][1:]]
                weights = [int(np.prod(radices[j + 1 :], dtype=object)) for j in range(len(radices))]
                part = columns[upper[0]] * weights[0]
                for g, w in zip(upper[1:], weights[1:]):
                    part = torch.add(part, columns[g], alpha=w)
                start = sum(init[g] * w for g, w in zip(upper, weights))
                shifted = torch.cat([part.new_full((bsz, 1), start), part[:, :-1]], dim=1)
                key = torch.add(shifted, ids, alpha=int(np.prod(radices, dtype=object)))
            h0 = torch.tensor(spec["initial"], device=dev)
            heads = layer.scan(key, h0, None, impl=impl)
            per_layer.append(heads)
            columns.extend(heads[..., i] for i in range(heads.shape[-1]))
        out = per_layer[0] if len(per_layer) == 1 else torch.cat(per_layer, dim=-1)
        if pad is not None:
            out = out.masked_fill(pad[..., None], -1)
        return out

    def predict_states(
        self, symbol_ids: torch.Tensor, lengths: torch.Tensor | None = None, *, impl: str = "auto"
    ) -> torch.Tensor:
        """Automaton state index (B, T) after each symbol ((T,) for one word); -1 past each word's length.
        ``symbol_ids``: a tensor, numpy array or list; an id outside the alphabet raises UnknownSymbolError."""
        symbol_ids, lengths = symbol_id_tensor(symbol_ids, self.n_symbols, lengths)
        if symbol_ids.dim() == 1:
            return self.predict_states(symbol_ids[None], None if lengths is None else lengths.reshape(1), impl=impl)[0]
        idx = self.head_indices(symbol_ids, lengths, impl=impl)
        # the configuration's mixed-radix code; indices are −1 only past a word's length
        past = (idx[..., 0] < 0) if lengths is not None else None
        code = idx[..., 0].clamp(min=0) if past is not None else idx[..., 0]
        for i, r in enumerate(self.radices[1:], start=1):
            code = torch.add(idx[..., i].clamp(min=0) if past is not None else idx[..., i], code, alpha=int(r))
        if self.readout_dense is not None:
            states = self.readout_dense.index_select(0, code.reshape(-1)).view(code.shape)
        else:
            codes = self.readout_codes
            pos = torch.searchsorted(codes, code).clamp(max=len(codes) - 1)
            states = torch.where(codes[pos] == code, self.readout_states[pos], -1)
        return states if past is None else states.masked_fill(past, -1)

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
