"""The parsed program of a compiled model: typed, validated, read-only views of a :class:`CompiledModel`'s header
and tensors, one per target. This module is the only code that reads a model's header dicts; every executor (numpy
in fsa2rnn.runtime, torch in fsa2rnn.nn.compiled, the exact interpreters of compiler/exact/, the steppers of
fsa2rnn.realize) builds from :func:`program_of`.

- :class:`LinearRNNProgram` (targets "householder", "diagonal"): layers H_t = A(r_t) H_{t−1} + B(r_t) whose row
  r_t is keyed by (x_t, s_0(t−1), …, s_{i−1}(t−1)) — the cascade wiring — each with a nearest-code or hash readout,
  and the final table from layer states to automaton states (compiler/README.md).
- :class:`NFSMProgram` (target "nfsm"): layers of heads, each layer's key (x_t, the upper heads' indices at t−1),
  the logits of every key and their argmax tables, the readout of head-index tuples (compiler/NFSM.md).
- :class:`AffineProgram` (target "affine"): the shift register h_t = A h_{t−1} + b(x_t), A^k = 0, and its window
  table (compiler/definite_to_affine.py).
- :class:`PDSSMProgram` (target "pdssm"): one PD-SSM layer h_t = P(x_t) D(x_t) h_{t−1}, P(x) as index arrays, and
  the one-hot readout of each coordinate (compiler/automaton_to_pdssm.py).

A new target adds one program class with a ``parse`` classmethod and one entry in :data:`PROGRAMS`
(docs/architecture.md, "Adding a target"). A malformed model raises ModelFileError naming what is wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from fsa2rnn.fsa.errors import FsaError, ModelFileError, UnknownStateError

from .keys import check_key_space, encode_keys, key_space
from .model import CompiledModel
from .nfsm_logits import logits_numpy, tables_from_logits


def _frozen(a: Any, dtype: Any = None) -> np.ndarray:
    out = np.array(a, dtype=dtype)  # a copy: the program never shares memory with the model's tensors
    out.setflags(write=False)
    return out


def _int(v: Any, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ModelFileError(f"model header: {what} is {v!r}, not an integer")
    return int(v)


class _Reader:
    """Header entries and tensors of one model, each missing or malformed one a ModelFileError naming it."""

    def __init__(self, model: CompiledModel) -> None:
        self.header, self.tensors = model.header, model.tensors

    def tensor(self, name: Any, ndim: int | None = None, dtype: Any = None) -> np.ndarray:
        if not isinstance(name, str) or name not in self.tensors:
            raise ModelFileError(f"model file lacks tensor {name!r} named in its header")
        arr = np.asarray(self.tensors[name])
        if ndim is not None and arr.ndim != ndim:
            raise ModelFileError(f"tensor {name!r} has {arr.ndim} dimensions, expected {ndim}")
        if dtype is int and arr.dtype.kind not in "iu":
            raise ModelFileError(f"tensor {name!r} has dtype {arr.dtype}, expected integers")
        return _frozen(arr, np.int64 if dtype is int else np.float64 if dtype is float else None)

    @staticmethod
    def entry(d: Any, key: str, where: str) -> Any:
        if not isinstance(d, dict) or key not in d:
            raise ModelFileError(f"model header: {where} lacks {key!r}")
        return d[key]


@dataclass(frozen=True, eq=False)
class Program:
    """What every target shares: the alphabet, the states, the initial state and the accepting mask."""

    target: str
    symbols: tuple[str, ...]
    states: tuple[str, ...]
    initial: int
    accepting: np.ndarray | None  #: (n_states,) bool, None when the automaton has no accepting set

    @property
    def n_symbols(self) -> int:
        return len(self.symbols)

    @property
    def n_states(self) -> int:
        return len(self.states)

    def accepting_mask(self) -> np.ndarray:
        """The accepting mask; UnknownStateError when the model's automaton has none (as ``Automaton``)."""
        if self.accepting is None:
            raise UnknownStateError("the model's automaton has no accepting set")
        return self.accepting

    @staticmethod
    def _common(model: CompiledModel) -> dict[str, Any]:
        h = model.header
        n = len(h["states"])
        acc = h.get("accepting")
        mask = None
        if acc is not None:
            mask = np.zeros(n, dtype=bool)
            idx = np.asarray(acc, dtype=np.int64)
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                raise ModelFileError("model header: an accepting state index is out of range")
            mask[idx] = True
            mask.setflags(write=False)
        return {
            "target": str(h["target"]),
            "symbols": tuple(h["symbols"]),
            "states": tuple(h["states"]),
            "initial": int(h["initial"]),
            "accepting": mask,
        }


# ---------------------------------------------------------------------------------------------------- linear RNN
@dataclass(frozen=True, eq=False)
class NearestReadout:
    """state = code_states[argmax_s Re⟨c_s, h⟩ − ½‖c_s‖²] over code points ``codes`` (S, n), complex for complex
    diagonal layers."""

    codes: np.ndarray
    code_states: np.ndarray


@dataclass(frozen=True, eq=False)
class HashReadout:
    """h is a permutation code of 1..n: key Σ_i (round(h_i) − 1)·nⁱ, looked up in ``keys`` → ``values``."""

    width: int
    keys: np.ndarray
    values: np.ndarray

    @property
    def space(self) -> int:
        return self.width**self.width

    def powers(self) -> np.ndarray:
        """nⁱ for i < n: a code h's key is Σ_i (round(h_i) − 1)·nⁱ."""
        return self.width ** np.arange(self.width, dtype=np.int64)

    def code_points(self) -> np.ndarray:
        """(K, n) the permutation codes (entries 1..n) of the known keys, in key order (``values`` their states)."""
        return (self.keys[:, None] // self.powers()[None, :]) % self.width + 1


@dataclass(frozen=True, eq=False)
class LinearLayer:
    """One layer of a linear-RNN program: rows keyed by (x, upper states) (``row_keys``, :func:`encode_keys` of
    ``radix``), the fused transitions ``a`` (R, n, n) real or (R, n) complex diagonal, ``b`` (R, n), ``h0`` (n,),
    and the readout to ``n_states`` layer states. ``exact`` names the exact description the compiler stored:
    "rational" or "angle" (GH layers, ``factors`` β, v, kinds) or "exponent" (diagonal layers); ``stored`` keeps
    the layer's tensors under their short names for the exact interpreter."""

    index: int
    kind: str  #: "gh" or "diagonal"
    width: int
    radix: tuple[int, ...]
    row_keys: np.ndarray
    a: np.ndarray
    b: np.ndarray
    h0: np.ndarray
    readout: NearestReadout | HashReadout
    n_states: int
    exact: str
    stored: Mapping[str, np.ndarray]
    attrs: Mapping[str, int]  #: angle_den, h0_angle (angle layers); h0_index (diagonal layers)

    @property
    def n_rows(self) -> int:
        return len(self.row_keys)

    @property
    def diagonal(self) -> bool:
        return self.kind == "diagonal"


_GH_TENSORS = ("keys", "fkind", "fargs", "beta", "v", "A", "B", "h0")
_DIAG_TENSORS = ("keys", "moduli", "exponents", "reset", "reset_code", "code_exponents", "lam_re", "lam_im")
_DIAG_TENSORS += ("B_re", "B_im", "codes_re", "codes_im", "code_states")


def _linear_layer(r: _Reader, i: int, entry: Any, n_symbols: int) -> LinearLayer:
    where = f"layer {i}"
    kind = r.entry(entry, "kind", where)
    name = r.entry(entry, "name", where)
    width = _int(r.entry(entry, "width", where), f"{where} width")
    radix = tuple(_int(v, f"{where} radix") for v in r.entry(entry, "radix", where))
    if not radix or radix[0] != n_symbols or len(radix) != i + 1 or min(radix) < 1:
        raise ModelFileError(f"model header: {where} radix {list(radix)} is not [|Σ|, S_0, …, S_{i - 1}]")
    check_key_space(radix, f"{where} input")
    if kind not in ("gh", "diagonal"):
        raise ModelFileError(f"model header: {where} has kind {kind!r}, expected 'gh' or 'diagonal'")
    names = _GH_TENSORS if kind == "gh" else _DIAG_TENSORS
    stored = {k: r.tensor(f"{name}.{k}") for k in names}
    keys = stored["keys"]
    if keys.ndim != 2 or keys.shape[1] != len(radix) or keys.dtype.kind not in "iu":
        raise ModelFileError(f"tensor {name + '.keys'!r} is not an integer (rows, {len(radix)}) table")
    n_rows = keys.shape[0]
    attrs: dict[str, int] = {}
    if kind == "gh":
        a, b, h0 = (np.asarray(stored[k], dtype=np.float64) for k in ("A", "B", "h0"))
        exact = str(entry.get("exact", "rational"))
        if exact == "angle":
            attrs = {k: _int(r.entry(entry, k, where), f"{where} {k}") for k in ("angle_den", "h0_angle")}
            stored["code_angles"] = r.tensor(f"{name}.code_angles")
        shape_ok = a.shape == (n_rows, width, width) and b.shape == (n_rows, width) and h0.shape == (width,)
        ro_kind = r.entry(entry, "readout", where)
        n_states = _int(r.entry(entry, "n_states", where), f"{where} n_states")
        if ro_kind == "nearest":
            codes = r.tensor(f"{name}.codes", 2, float)
            stored["codes"] = codes
            readout: NearestReadout | HashReadout = NearestReadout(codes, _frozen(np.arange(len(codes))))
            shape_ok &= codes.shape[1] == width
        elif ro_kind == "hash":
            hk, hv = r.tensor(f"{name}.hkeys", 1, int), r.tensor(f"{name}.hvals", 1, int)
            stored.update(hkeys=hk, hvals=hv)
            shape_ok &= hk.shape == hv.shape
            readout = HashReadout(width, hk, hv)
        else:
            raise ModelFileError(f"model header: {where} has readout {ro_kind!r}, expected 'nearest' or 'hash'")
    else:
        exact = "exponent"
        s = stored
        a = s["lam_re"] + 1j * s["lam_im"]
        b = s["B_re"] + 1j * s["B_im"]
        codes = s["codes_re"] + 1j * s["codes_im"]
        attrs = {"h0_index": _int(r.entry(entry, "h0_index", where), f"{where} h0_index")}
        n_states = _int(r.entry(entry, "n_states", where), f"{where} n_states")
        shape_ok = a.shape == (n_rows, width) and b.shape == (n_rows, width) and codes.ndim == 2
        shape_ok &= codes.shape[1] == width and 0 <= attrs["h0_index"] < len(codes)
        if not shape_ok:
            raise ModelFileError(f"model header: {where}: its tensors' shapes do not match width {width}")
        h0 = codes[attrs["h0_index"]]
        readout = NearestReadout(_frozen(codes), _frozen(s["code_states"], np.int64))
    if not shape_ok:
        raise ModelFileError(f"model header: {where}: its tensors' shapes do not match width {width}")
    row_keys = encode_keys(list(np.asarray(keys, dtype=np.int64).T), radix)
    return LinearLayer(
        index=i,
        kind=kind,
        width=width,
        radix=radix,
        row_keys=_frozen(row_keys),
        a=_frozen(a),
        b=_frozen(b),
        h0=_frozen(h0),
        readout=readout,
        n_states=n_states,
        exact=exact,
        stored=MappingProxyType(stored),
        attrs=MappingProxyType(attrs),
    )


@dataclass(frozen=True, eq=False)
class LinearRNNProgram(Program):
    """Targets "householder" and "diagonal": ``layers`` top first and the final readout (``final_keys``,
    :func:`encode_keys` of the layer states with ``final_radix``) → ``final_states``."""

    layers: tuple[LinearLayer, ...]
    final_radix: tuple[int, ...]
    final_keys: np.ndarray
    final_states: np.ndarray

    @classmethod
    def parse(cls, model: CompiledModel) -> LinearRNNProgram:
        r = _Reader(model)
        common = cls._common(model)
        entries = model.header["layers"]
        if not isinstance(entries, list) or not entries:
            raise ModelFileError("model header: 'layers' is not a non-empty list")
        layers = tuple(_linear_layer(r, i, e, len(common["symbols"])) for i, e in enumerate(entries))
        ro = model.header["readout"]
        radix = tuple(_int(v, "readout radix") for v in r.entry(ro, "radix", "readout"))
        if radix != tuple(layer.n_states for layer in layers):
            raise ModelFileError(f"model header: readout radix {list(radix)} is not the layers' state counts")
        check_key_space(radix, "final readout")
        keys = r.tensor(r.entry(ro, "keys", "readout"), 1, int)
        states = r.tensor(r.entry(ro, "states", "readout"), 1, int)
        if keys.shape != states.shape or (states.size and (states.min() < 0 or states.max() >= len(common["states"]))):
            raise ModelFileError("model header: the final readout's keys and states do not match")
        return cls(**common, layers=layers, final_radix=radix, final_keys=keys, final_states=states)

    @property
    def final_space(self) -> int:
        return key_space(self.final_radix)


# ---------------------------------------------------------------------------------------------------- NFSM
@dataclass(frozen=True, eq=False)
class NFSMLayerProgram:
    """One NFSM layer: ``heads`` (d_i), its key (x_t, indices of global heads ``upper`` at t−1) with digit radices
    ``key_radices`` (:func:`~fsa2rnn.compiler.keys.mixed_radix`, symbol most significant), the start ``initial``
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
        r = _Reader(model)
        common = cls._common(model)
        entries = model.header["layers"]
        if not isinstance(entries, list) or not entries:
            raise ModelFileError("model header: 'layers' is not a non-empty list")
        layers, n_heads = [], 0
        for i, spec in enumerate(entries):
            where = f"layer {i}"
            if r.entry(spec, "kind", where) != "nfsm":
                raise ModelFileError(f"layer {i} has kind {spec.get('kind')!r}, expected 'nfsm'")
            heads = tuple(_int(d, f"{where} heads") for d in r.entry(spec, "heads", where))
            upper = tuple(_int(g, f"{where} upper") for g in r.entry(spec, "upper", where))
            radices = tuple(_int(v, f"{where} key_radices") for v in r.entry(spec, "key_radices", where))
            n_keys = _int(r.entry(spec, "n_keys", where), f"{where} n_keys")
            initial = tuple(_int(v, f"{where} initial") for v in r.entry(spec, "initial", where))
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
        radices = tuple(_int(v, "readout radices") for v in r.entry(ro, "radices", "readout"))
        if radices != dims:
            raise ModelFileError(f"model header: readout radices {list(radices)} are not the head sizes")
        check_key_space(dims, "NFSM configurations")
        codes = r.tensor(r.entry(ro, "codes", "readout"), 1, int)
        states = r.tensor(r.entry(ro, "states", "readout"), 1, int)
        if codes.shape != states.shape or np.any(np.diff(codes) <= 0):
            raise ModelFileError("model header: the readout's codes are not sorted or do not match its states")
        return cls(**common, layers=tuple(layers), dims=dims, readout_codes=codes, readout_states=states)


# ---------------------------------------------------------------------------------------------------- affine
@dataclass(frozen=True, eq=False)
class AffineProgram(Program):
    """Target "affine": the shift register h_t = A h_{t−1} + b(x_t) over ``window`` blocks of |Σ| coordinates
    (A (d, d), B (|Σ|, d): row x is b(x), h0 (d,)); block j of h_t is the code of x_{t−j}; ``table`` maps a
    window's digits (0 empty, x + 1 for symbol x; block 0 least significant, radix |Σ| + 1) to a state."""

    window: int
    A: np.ndarray
    B: np.ndarray
    h0: np.ndarray
    table: np.ndarray

    @property
    def codes(self) -> np.ndarray:
        """(|Σ|, |Σ|): block 0 of b(x) for every symbol x (the code a block holds for x)."""
        return self.B[:, : self.n_symbols]

    @classmethod
    def parse(cls, model: CompiledModel) -> AffineProgram:
        r = _Reader(model)
        common = cls._common(model)
        ro = model.header["readout"]
        k = _int(r.entry(ro, "window", "readout"), "readout window")
        s = len(common["symbols"])
        a, b, h0 = r.tensor("A", 2, float), r.tensor("B", 2, float), r.tensor("h0", 1, float)
        table = r.tensor(r.entry(ro, "table", "readout"), 1, int)
        d = k * s
        if k < 1 or a.shape != (d, d) or b.shape != (s, d) or h0.shape != (d,):
            raise ModelFileError(f"model header: the shift register's tensors do not match window {k}, |Σ| = {s}")
        if table.shape != ((s + 1) ** k,):
            raise ModelFileError(f"model header: the window table has {table.size} entries, not (|Σ|+1)^k")
        return cls(**common, window=k, A=a, B=b, h0=h0, table=table)


# ---------------------------------------------------------------------------------------------------- PD-SSM
@dataclass(frozen=True, eq=False)
class PDSSMProgram(Program):
    """Target "pdssm": h_t = P(x_t) D(x_t) h_{t−1} from ``h0`` (N,), ``P`` (|Σ|, N) int (column j of P(x) has its one
    in row P[x, j]), ``D`` (|Σ|, N) the diagonals; ``readout`` (N,) the state each coordinate reads as (argmax h)."""

    P: np.ndarray
    D: np.ndarray
    h0: np.ndarray
    readout: np.ndarray

    @property
    def width(self) -> int:
        return int(self.P.shape[1])

    @classmethod
    def parse(cls, model: CompiledModel) -> PDSSMProgram:
        r = _Reader(model)
        common = cls._common(model)
        layers = model.header["layers"]
        if not isinstance(layers, list) or len(layers) != 1:
            raise ModelFileError("model header: a pdssm model has exactly one layer")
        entry = layers[0]
        P = r.tensor(r.entry(entry, "P", "layer 0"), 2, int)
        D = r.tensor(r.entry(entry, "D", "layer 0"), 2, float)
        h0 = r.tensor(r.entry(entry, "h0", "layer 0"), 1, float)
        readout = r.tensor(r.entry(model.header["readout"], "states", "readout"), 1, int)
        s, n = len(common["symbols"]), P.shape[1]
        if P.shape != (s, n) or D.shape != (s, n) or h0.shape != (n,) or readout.shape != (n,):
            raise ModelFileError(f"model header: the PD-SSM's tensors do not match |Σ| = {s} and N = {n}")
        if P.size and (P.min() < 0 or P.max() >= n):
            raise ModelFileError(f"model header: P's row indices must lie in [0, {n})")
        if readout.size and (readout.min() < 0 or readout.max() >= len(common["states"])):
            raise ModelFileError("model header: the readout names a state out of range")
        return cls(**common, P=P, D=D, h0=h0, readout=readout)


#: target → its program's parser (one row per target)
PROGRAMS: dict[str, Callable[[CompiledModel], Program]] = {
    "householder": LinearRNNProgram.parse,
    "diagonal": LinearRNNProgram.parse,
    "nfsm": NFSMProgram.parse,
    "affine": AffineProgram.parse,
    "pdssm": PDSSMProgram.parse,
}


def program_of(model: CompiledModel, *, integrity: bool = True) -> Program:
    """The parsed, validated program of a compiled model; its integrity hash is checked when it carries one
    (``integrity=False``: not — the exact check judges edited weights by what they compute)."""
    if integrity:
        model.check_integrity()
    target = model.header.get("target")
    if target not in PROGRAMS:
        raise ModelFileError(f"unknown model target {target!r}")
    try:
        return PROGRAMS[target](model)
    except FsaError:
        raise
    except (KeyError, TypeError, ValueError, IndexError) as exc:
        raise ModelFileError(f"model header of target {target!r} is malformed: {exc!r}") from None


__all__ = [
    "PROGRAMS",
    "AffineProgram",
    "HashReadout",
    "LinearLayer",
    "LinearRNNProgram",
    "NFSMLayerProgram",
    "NFSMProgram",
    "NearestReadout",
    "PDSSMProgram",
    "Program",
    "program_of",
]
