"""The program of compiled NFSM models (target "nfsm"): layers of heads, each layer's key (x_t, the upper heads'
indices at t−1: the cascade wiring, compiler/wiring.py), the logits of every key and their argmax tables, and the
readout of head-index tuples (README.md here).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ....fsa.errors import ModelFileError
from ...keys import check_key_space, key_space
from ...model import CompiledModel
from ...program import HeaderReader, Program, header_int
from .logits import logits_numpy, tables_from_logits


@dataclass(frozen=True, eq=False)
class NFSMLayerProgram:
    """One NFSM layer: ``heads`` (d_i), its key (x_t, indices of global heads ``upper`` at t−1) with digit radices
    ``key_radices`` (high digit first, compiler/keys.py: the symbol most significant), the start ``initial``
    index of each head, and the float64 logits θ = E Wᵀ + b of its ``n_keys`` keys."""

    index: int
    heads: tuple[int, ...]
    upper: tuple[int, ...]
    key_radices: tuple[int, ...]
    n_keys: int
    initial: tuple[int, ...]
    embedding: np.ndarray
    weight: np.ndarray
    bias: np.ndarray

    def logits(self) -> np.ndarray:
        """(n_keys, Σ d_i²) float64 logits of every key."""
        return logits_numpy(self.embedding, self.weight, self.bias)

    def tables(self) -> np.ndarray:
        """Argmax tables (n_keys, r, d_max) of every key at float64."""
        return tables_from_logits(self.logits(), self.heads)


@dataclass(frozen=True, eq=False)
class NFSMProgram(Program):
    """Target "nfsm": ``layers`` top first; the readout maps the mixed-radix code of all head indices (radices
    ``dims``) to a state through ``readout_codes`` (sorted) → ``readout_states``."""

    layers: tuple[NFSMLayerProgram, ...]
    dims: tuple[int, ...]
    readout_codes: np.ndarray
    readout_states: np.ndarray

    @property
    def initial_config(self) -> tuple[int, ...]:
        return tuple(v for layer in self.layers for v in layer.initial)

    @property
    def readout_space(self) -> int:
        return key_space(self.dims)

    @classmethod
    def parse(cls, model: CompiledModel) -> NFSMProgram:
        r = HeaderReader(model)
        common = cls._common(model)
        entries = model.header["layers"]
        if not isinstance(entries, list) or not entries:
            raise ModelFileError("model header: 'layers' is not a non-empty list")
        layers, n_heads = [], 0
        for i, spec in enumerate(entries):
            where = f"layer {i}"
            if r.entry(spec, "kind", where) != "nfsm":
                raise ModelFileError(f"layer {i} has kind {spec.get('kind')!r}, expected 'nfsm'")
            heads = tuple(header_int(d, f"{where} heads") for d in r.entry(spec, "heads", where))
            upper = tuple(header_int(g, f"{where} upper") for g in r.entry(spec, "upper", where))
            radices = tuple(header_int(v, f"{where} key_radices") for v in r.entry(spec, "key_radices", where))
            n_keys = header_int(r.entry(spec, "n_keys", where), f"{where} n_keys")
            initial = tuple(header_int(v, f"{where} initial") for v in r.entry(spec, "initial", where))
            emb, w, b = (r.tensor(r.entry(spec, k, where), dtype=float) for k in ("embedding", "weight", "bias"))
            if (
                not heads
                or min(heads) < 1
                or emb.ndim != 2
                or emb.shape[0] != n_keys
                or w.shape != (sum(d * d for d in heads), emb.shape[1])
                or b.shape != (w.shape[0],)
            ):
                raise ModelFileError(f"layer {i}: embedding/weight/bias shapes do not match its heads and keys")
            if len(initial) != len(heads) or any(not 0 <= v < d for v, d in zip(initial, heads)):
                raise ModelFileError(f"layer {i}: its start indices do not fit its heads")
            if any(not 0 <= g < n_heads for g in upper) or len(radices) != 1 + len(upper):
                raise ModelFileError(f"layer {i}: it reads heads {list(upper)}: only heads of the layers above")
            if radices[0] != len(common["symbols"]) or key_space(radices) != n_keys:
                raise ModelFileError(f"layer {i}: {n_keys} keys do not match its key radices {list(radices)}")
            layers.append(NFSMLayerProgram(i, heads, upper, radices, n_keys, initial, emb, w, b))
            n_heads += len(heads)
        dims = tuple(d for layer in layers for d in layer.heads)
        for layer in layers:
            if layer.key_radices[1:] != tuple(dims[g] for g in layer.upper):
                raise ModelFileError(f"layer {layer.index}: its key radices are not the upper heads' sizes")
        ro = model.header["readout"]
        radices = tuple(header_int(v, "readout radices") for v in r.entry(ro, "radices", "readout"))
        if radices != dims:
            raise ModelFileError(f"model header: readout radices {list(radices)} are not the head sizes")
        check_key_space(dims, "NFSM configurations")
        codes = r.tensor(r.entry(ro, "codes", "readout"), 1, int)
        states = r.tensor(r.entry(ro, "states", "readout"), 1, int)
        if codes.shape != states.shape or np.any(np.diff(codes) <= 0):
            raise ModelFileError("model header: the readout's codes are not sorted or do not match its states")
        return cls(**common, layers=tuple(layers), dims=dims, readout_codes=codes, readout_states=states)


__all__ = ["NFSMLayerProgram", "NFSMProgram"]
