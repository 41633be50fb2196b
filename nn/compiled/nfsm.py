"""Torch module for compiled NFSM models (target "nfsm"): stacked NFSM layers and the head-index readout.

Layer ℓ reads at step t the key (x_t, indices of the heads of the layers above at step t−1) — the cascade wiring of
compiler/wiring.py, the one-step causal shift that makes stacked layers a cascade product (docs/theory.md, "The
timing of cascades"); the top layer's key is x_t. The states are read from the tuple of all head indices through the
compiled readout table. Header layout: compiler/targets/nfsm/README.md; the parsed layers: ``NFSMProgram``.

The recurrent form (nn/compiled/base.py) on flat vectors, one block per head holding its attractor vector a_{h_t}:
``initial(n)``, ``decode(h)`` (restore: the nearest attractor of every head), ``step(h, x, decoded)`` (the tables
at the module's dtype on the restored indices, back to attractor vectors), ``read(h, decoded)``; on head indices
``layer_key(i, x, config)``, ``read_config(config)`` and ``vectors(config)``; ``numpy_step`` is
compiler/targets/nfsm/step.py with the same tables.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from ...compiler.keys import HIGH_FIRST, KeyLookup, encode
from ...compiler.model import CompiledModel
from ...compiler.program import half_norms
from ...compiler.targets.nfsm.program import NFSMProgram
from ...compiler.targets.nfsm.step import NFSMStep
from ...compiler.wiring import layer_keys
from ...fsa.errors import ModelFileError
from ..nfsm import NFSMLayer
from .base import NUMPY_DTYPES, CodeBlock, CompiledModule, finish, load_model
from .keys import KeyTable


class _Tables:
    """The recurrent form's tables at one dtype: per layer the flat bank ``bank[((key·r + head)·d_max + k)]`` of its
    argmax tables, the attractors of every head (global order), and per layer (its heads' indices within the layer,
    their global indices)."""

    def __init__(self, net: NFSMModel) -> None:
        self.dtype = net.dtype
        with torch.no_grad():
            banks = [layer.key_tables() for layer in net.layers]  # (K, r, d_max) at the dtype
        self.d_max = max(int(b.shape[-1]) for b in banks)
        self.flat_banks = [torch.nn.functional.pad(b, (0, self.d_max - b.shape[-1])).reshape(-1) for b in banks]
        self.attractors: list[torch.Tensor] = []
        self.layer_index: list[tuple[torch.Tensor, torch.Tensor]] = []
        for layer in net.layers:
            glob = list(range(len(self.attractors), len(self.attractors) + len(layer.heads)))
            self.attractors.extend(layer.attractors(hi) for hi in range(len(layer.heads)))
            self.layer_index.append((torch.arange(len(layer.heads)), torch.tensor(glob)))
        widths = {len(a) for a in self.attractors}
        # heads of one size (the usual case): every head restored and looked up in one batched operation
        self.stacked = torch.stack(self.attractors) if len(widths) == 1 else None
        self.head_range = torch.arange(len(self.attractors))
        self.onehot = self.stacked is not None and bool(
            (self.stacked == torch.eye(self.stacked.shape[-1], dtype=self.stacked.dtype)).all()
        )
        self.bounds, start = [], 0
        for a in self.attractors:
            self.bounds.append((start, start + len(a)))
            start += len(a)


class NFSMModel(CompiledModule):
    """Compiled NFSM: ``predict_states(symbol_ids, lengths=None)`` and ``predict_accept``; ``.to(dtype)`` switches
    the dtype at which the logits (hence the tables) are computed."""

    def __init__(self, compiled: CompiledModel, program: NFSMProgram | None = None) -> None:
        super().__init__(compiled, program, expect=NFSMProgram)
        p = self.program
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
        self.readout = KeyTable(
            torch.from_numpy(p.readout_codes.copy()), torch.from_numpy(p.readout_states.copy()), p.readout_space
        )
        self.register_buffer("initial_config", torch.tensor(p.initial_config, dtype=torch.long))
        self._tables: _Tables | None = None
        self.double()

    @property
    def dtype(self) -> torch.dtype:
        return self.layers[0].logits.weight.dtype

    def _apply(self, fn: Any, *args: Any, **kwargs: Any) -> NFSMModel:
        self._tables = None  # .to(dtype) and friends: the tables are recomputed at the new dtype
        return super()._apply(fn, *args, **kwargs)

    @classmethod
    def coerce(cls, model: Any) -> NFSMModel:
        """An NFSMModel from a module, a CompiledModel or a model file path; ModelFileError for any other model."""
        module = model if isinstance(model, nn.Module) else load_model(model)
        if not isinstance(module, cls):
            target = getattr(getattr(module, "compiled", None), "target", type(module).__name__)
            raise ModelFileError(f"not an NFSM model (target {target!r})")
        return module

    # ------------------------------------------------------------------ head indices
    def layer_key(self, i: int, x: torch.Tensor, config: torch.Tensor) -> torch.Tensor:
        """Layer i's key for symbols x (…) after configurations ``config`` (…, H) of the previous step."""
        spec = self.program.layers[i]
        return layer_keys(x, [config[..., g] for g in spec.upper], spec.key_radices, HIGH_FIRST)

    def read_config(self, config: torch.Tensor) -> torch.Tensor:
        """The automaton state of configurations (…, H), −1 for one the readout does not know."""
        return self.readout(encode(config, self.radices, HIGH_FIRST))

    def tables(self) -> _Tables:
        """The recurrent form's tables at the module's current dtype (computed once per dtype)."""
        if self._tables is None or self._tables.dtype != self.dtype:
            self._tables = _Tables(self)
        return self._tables

    def vectors(self, config: torch.Tensor) -> torch.Tensor:
        """The attractor vectors (N, D) of head indices (N, H)."""
        tb = self.tables()
        if tb.stacked is not None:
            return tb.stacked[tb.head_range, config].reshape(config.shape[0], -1)
        return torch.cat([a[config[:, g]] for g, a in enumerate(tb.attractors)], dim=-1)

    # ------------------------------------------------------------------ the recurrent form
    def initial(self, n: int) -> torch.Tensor:
        return self.vectors(self.initial_config.expand(n, -1))

    def decode(self, h: torch.Tensor) -> torch.Tensor:
        """The index of the nearest attractor of every head, (N, H): argmax_k ⟨u, a_k⟩ − ½‖a_k‖²."""
        tb = self.tables()
        if tb.onehot:  # a_k = e_k: the nearest attractor is the largest coordinate (first on ties, as below)
            return h.reshape(h.shape[0], len(tb.attractors), -1).argmax(-1)
        cols = []
        for a, (lo, hi) in zip(tb.attractors, tb.bounds):
            cols.append((h[:, lo:hi] @ a.T - half_norms(a)).argmax(-1))
        return torch.stack(cols, dim=-1)

    def step(self, h: torch.Tensor, x: torch.Tensor, decoded: torch.Tensor | None = None) -> torch.Tensor:
        """Restore every head to its nearest attractor, apply the tables of the keys at the module's dtype, and
        return the new attractor vectors."""
        tb = self.tables()
        idx = self.decode(h) if decoded is None else decoded
        single = len(tb.layer_index) == 1
        new = torch.empty_like(idx)
        for i, (bank, (local, glob)) in enumerate(zip(tb.flat_banks, tb.layer_index)):
            key = self.layer_key(i, x, idx)  # the symbol, then the upper heads' indices of the previous step
            own = idx if single else idx[:, glob]
            flat = (key[:, None] * len(local) + local) * tb.d_max + own
            got = bank.index_select(0, flat.view(-1)).view(own.shape)
            if single:
                return self.vectors(got)
            new[:, glob] = got
        return self.vectors(new)

    def read(self, h: torch.Tensor, decoded: torch.Tensor | None = None) -> torch.Tensor:
        return self.read_config(self.decode(h) if decoded is None else decoded)

    def code_blocks(self, max_codes: int | None = None) -> list[CodeBlock]:
        """One block per head: its attractors, labelled by their indices (one-hot attractors: ``one_hot``)."""
        tb = self.tables()
        return [CodeBlock(len(a), a.double(), torch.arange(len(a)), one_hot=tb.onehot) for a in tb.attractors]

    def numpy_step(self, mode: str = "fused") -> NFSMStep | None:
        """The numpy twin of :meth:`step` with this module's tables and attractors at its dtype (float64, float32)."""
        dt = NUMPY_DTYPES.get(self.dtype)
        if dt is None:
            return None
        tb, p = self.tables(), self.program
        own = [glob.tolist() for _, glob in tb.layer_index]
        layers = [(list(s.key_radices), list(s.upper), g) for s, g in zip(p.layers, own)]
        readout = KeyLookup(p.readout_codes, p.readout_states, p.readout_space)
        return NFSMStep(
            [a.detach().cpu().numpy().astype(dt) for a in tb.attractors],
            [b.cpu().numpy() for b in tb.flat_banks],
            layers,
            np.asarray(p.initial_config),
            list(p.dims),
            readout,
            tb.d_max,
            dt,
        )

    # ------------------------------------------------------------------ whole words
    def head_indices(self, symbol_ids: Any, lengths: Any = None, *, impl: str = "auto") -> torch.Tensor:
        """Indices (B, T, H) of every head of every layer after each symbol; −1 past lengths."""
        ids, _, x = self.checked(symbol_ids, lengths)
        out = self._indices(ids, impl=impl)
        pad = x.padding()
        if pad is not None:
            out = out.masked_fill(torch.from_numpy(pad).to(out.device)[..., None], -1)
        return out[0] if x.single else out

    def _indices(self, ids: torch.Tensor, *, impl: str = "auto") -> torch.Tensor:
        per_layer: list[torch.Tensor] = []
        columns: list[torch.Tensor] = []  # (B, T) indices of each global head after each step
        init = self.initial_config.tolist()
        for spec, layer in zip(self.program.layers, self.layers):
            upper = [columns[g] for g in spec.upper]
            key = layer_keys(ids, upper, spec.key_radices, HIGH_FIRST, start=[init[g] for g in spec.upper])
            heads = layer.scan(key, torch.tensor(spec.initial, device=ids.device), None, impl=impl)
            per_layer.append(heads)
            columns.extend(heads[..., h] for h in range(heads.shape[-1]))
        return per_layer[0] if len(per_layer) == 1 else torch.cat(per_layer, dim=-1)

    @torch.no_grad()
    def predict_states(self, symbol_ids: Any, lengths: Any = None, *, impl: str = "auto") -> torch.Tensor:
        """Automaton state index (B, T) after each symbol ((T,) for one word); −1 past each word's length.
        ``symbol_ids``: ids or symbol names, as a tensor, numpy array or lists; bad ones raise SymbolIdError
        (fsa/inputs.py)."""
        ids, _, x = self.checked(symbol_ids, lengths)
        if ids.numel() == 0:
            return finish(x, torch.full_like(ids, -1))
        return finish(x, self.read_config(self._indices(ids, impl=impl)))

    def forward(self, symbol_ids: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        """The last layer's projected head outputs (B, T, width)."""
        idx = self.head_indices(symbol_ids, lengths)
        n_last = len(self.layers[-1].heads)
        return self.layers[-1].outputs(idx[..., -n_last:])


__all__ = ["NFSMModel"]
