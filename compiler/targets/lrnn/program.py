"""The program of compiled linear-RNN models (targets "householder" and "diagonal"): layers H_t = A(r_t) H_{t−1} +
B(r_t) whose row r_t is keyed by (x_t, s_0(t−1), …, s_{i−1}(t−1)) — the cascade wiring (compiler/wiring.py) — each
with a nearest-code or hash readout, and the final table from layer states to automaton states (README.md here).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import numpy as np

from ....fsa.errors import ModelFileError
from ...keys import LOW_FIRST, check_key_space, encode, key_space
from ...model import CompiledModel
from ...program import HeaderReader, Program, frozen, header_int


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
    """One layer of a linear-RNN program: rows keyed by (x, upper states) (``row_keys``, the low-first code of
    ``radix``, compiler/keys.py), the fused transitions ``a`` (R, n, n) real or (R, n) complex diagonal, ``b``
    (R, n), ``h0`` (n,), and the readout to ``n_states`` layer states. ``exact`` names the exact description the
    compiler stored: "rational" or "angle" (GH layers, ``factors`` β, v, kinds) or "exponent" (diagonal layers);
    ``stored`` keeps the layer's tensors under their short names for the exact interpreter."""

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


def _linear_layer(r: HeaderReader, i: int, entry: Any, n_symbols: int) -> LinearLayer:
    where = f"layer {i}"
    kind = r.entry(entry, "kind", where)
    name = r.entry(entry, "name", where)
    width = header_int(r.entry(entry, "width", where), f"{where} width")
    radix = tuple(header_int(v, f"{where} radix") for v in r.entry(entry, "radix", where))
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
            attrs = {k: header_int(r.entry(entry, k, where), f"{where} {k}") for k in ("angle_den", "h0_angle")}
            stored["code_angles"] = r.tensor(f"{name}.code_angles")
        shape_ok = a.shape == (n_rows, width, width) and b.shape == (n_rows, width) and h0.shape == (width,)
        ro_kind = r.entry(entry, "readout", where)
        n_states = header_int(r.entry(entry, "n_states", where), f"{where} n_states")
        if ro_kind == "nearest":
            codes = r.tensor(f"{name}.codes", 2, float)
            stored["codes"] = codes
            readout: NearestReadout | HashReadout = NearestReadout(codes, frozen(np.arange(len(codes))))
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
        attrs = {"h0_index": header_int(r.entry(entry, "h0_index", where), f"{where} h0_index")}
        n_states = header_int(r.entry(entry, "n_states", where), f"{where} n_states")
        shape_ok = a.shape == (n_rows, width) and b.shape == (n_rows, width) and codes.ndim == 2
        shape_ok &= codes.shape[1] == width and 0 <= attrs["h0_index"] < len(codes)
        if not shape_ok:
            raise ModelFileError(f"model header: {where}: its tensors' shapes do not match width {width}")
        h0 = codes[attrs["h0_index"]]
        readout = NearestReadout(frozen(codes), frozen(s["code_states"], np.int64))
    if not shape_ok:
        raise ModelFileError(f"model header: {where}: its tensors' shapes do not match width {width}")
    row_keys = encode(list(np.asarray(keys, dtype=np.int64).T), radix, LOW_FIRST)
    return LinearLayer(
        index=i,
        kind=kind,
        width=width,
        radix=radix,
        row_keys=frozen(row_keys),
        a=frozen(a),
        b=frozen(b),
        h0=frozen(h0),
        readout=readout,
        n_states=n_states,
        exact=exact,
        stored=MappingProxyType(stored),
        attrs=MappingProxyType(attrs),
    )


@dataclass(frozen=True, eq=False)
class LinearRNNProgram(Program):
    """Targets "householder" and "diagonal": ``layers`` top first and the final readout (``final_keys``, the
    low-first code of the layer states with ``final_radix``) → ``final_states``."""

    layers: tuple[LinearLayer, ...]
    final_radix: tuple[int, ...]
    final_keys: np.ndarray
    final_states: np.ndarray

    @classmethod
    def parse(cls, model: CompiledModel) -> LinearRNNProgram:
        r = HeaderReader(model)
        common = cls._common(model)
        entries = model.header["layers"]
        if not isinstance(entries, list) or not entries:
            raise ModelFileError("model header: 'layers' is not a non-empty list")
        layers = tuple(_linear_layer(r, i, e, len(common["symbols"])) for i, e in enumerate(entries))
        ro = model.header["readout"]
        radix = tuple(header_int(v, "readout radix") for v in r.entry(ro, "radix", "readout"))
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

    def symbol_spectra(self) -> dict[str, np.ndarray]:
        """The eigenvalues of the first layer's A(x) for every symbol x (its rows are keyed by the symbol alone)."""
        layer = self.layers[0]
        eig = layer.a if layer.diagonal else np.linalg.eigvals(layer.a)
        return {self.symbols[int(x)]: eig[r] for r, x in enumerate(layer.row_keys.tolist())}


__all__ = ["HashReadout", "LinearLayer", "LinearRNNProgram", "NearestReadout"]
