"""Layer descriptions shared by the Householder and diagonal compilers, and their assembly into a CompiledModel.

A linear-RNN model is a stack of layers H_t = A(r_t) H_{t−1} + B(r_t) (negative-eigenvalues eq. (1)). Layer i reads
a *row* r_t of its tables, keyed by (x_t, s_0(t−1), …, s_{i−1}(t−1)): the symbol and the decoded states of the layers
above at the previous step (the one-step causal shift of docs/theory.md; s_j(0) is layer j's initial state). Each layer
decodes its hidden vector to a layer state s_i(t) (nearest code point, or a hash of a permutation code), and the
final readout maps the tuple (s_0(t), …, s_{L−1}(t)) to an automaton state. The file format is in README.md here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ....fsa.automaton import Automaton
from ....fsa.errors import ConstructionError
from ...keys import LOW_FIRST, MAX_KEY_SPACE, check_key_space, encode
from ...model import MODEL_FORMAT, CompiledModel, resolve_initial, stored_automaton
from . import exact, gh
from .rounding import root_values


@dataclass
class Readout:
    """How a layer's hidden vector decodes to a layer state index.

    ``nearest``: codes (S, n) [complex for diagonal layers]; state = argmax_s Re⟨c_s, h⟩ − ½‖c_s‖².
    ``hash``: h is a permutation of 1..n; key = Σ_i (h_i − 1) nⁱ looked up in the sorted ``keys`` → state index.
    """

    kind: str
    codes: np.ndarray | None = None
    keys: np.ndarray | None = None  # sorted int64
    values: np.ndarray | None = None  # state index of each key

    @property
    def n_states(self) -> int:
        return len(self.codes) if self.kind == "nearest" else len(self.keys)


@dataclass
class GHLayerSpec:
    """One GH-product layer: per row a list of GH factors (A = C_k ⋯ C_1) and B; exact kind 'rational' or 'angle'."""

    width: int
    keys: np.ndarray  # (R, 1 + i)
    radix: list[int]  # [|Σ|, S_0, …, S_{i−1}]
    factors: list[list[gh.GHFactor]]
    B: np.ndarray  # (R, n)
    h0: np.ndarray  # (n,)
    readout: Readout
    exact: str = "rational"
    code_angles: np.ndarray | None = None  # (S,) angle indices (units of π/den) for exact='angle'
    angle_den: int = 0
    h0_angle: int = 0
    note: str = ""

    def fused(self) -> np.ndarray:
        """The fused A(r) of every row: exact integer products for rational layers (0/±1 entries); for angle
        layers the exact rotation or reflection, its entries correctly rounded (gh.angle_matrix)."""
        if self.exact == "rational":
            return np.array([gh.integer_product(fs, self.width) for fs in self.factors], dtype=np.float64)
        actions = np.array([gh.angle_action(fs, self.angle_den) for fs in self.factors], dtype=np.int64)
        return gh.angle_matrix(actions[:, 0], actions[:, 1], self.angle_den)


@dataclass
class DiagonalLayerSpec:
    """One diagonal layer: A(r) = diag(λ_r) with λ_r,j = ζ_{m_j}^{e_r,j} (root of unity) or 0 on reset rows.

    Coordinate j with modulus m_j ≥ 1 is complex (real ±1 when every modulus ≤ 2); modulus 0 marks a real
    'orbit' coordinate whose value is an orbit index (A entry 1, or 0 on resets). Exact data: exponents.
    """

    keys: np.ndarray
    radix: list[int]
    moduli: np.ndarray  # (n,)
    exponents: np.ndarray  # (R, n) exponent of λ (ignored on reset rows)
    reset: np.ndarray  # (R,) bool: A = 0, B = the code of reset_to
    reset_code: np.ndarray  # (R, n) exact code (exponents / orbit index) of the reset target
    code_exponents: np.ndarray  # (S, n) exact code points
    code_states: np.ndarray  # (S,) the layer state (point) each code point stands for
    n_states: int  # number of layer states
    h0_index: int  # index of the initial code point
    note: str = ""

    @property
    def width(self) -> int:
        return len(self.moduli)

    @property
    def is_complex(self) -> bool:
        return bool(np.any(self.moduli > 2))


def check_digest(model: CompiledModel) -> None:
    """ModelFileError if the model's header and tensors no longer match its integrity hash (compiler/model.py)."""
    model.check_integrity()


def assemble(
    automaton: Automaton,
    initial: int,
    *,
    target: str,
    construction: str,
    layers: list[GHLayerSpec | DiagonalLayerSpec],
    final_keys: np.ndarray,
    final_states: np.ndarray,
    summary: dict[str, Any],
    verify: bool = True,
) -> CompiledModel:
    """Build the CompiledModel (header + tensors) and run the exhaustive exact check (sets summary.verified)."""
    tensors: dict[str, np.ndarray] = {}
    header_layers = []
    for i, layer in enumerate(layers):
        name = f"L{i}"
        check_key_space(layer.radix, f"layer {i} input")
        order = np.argsort(encode(list(layer.keys.T), layer.radix, LOW_FIRST), kind="stable")
        keys = layer.keys[order]
        tensors[f"{name}.keys"] = keys.astype(np.int64)
        entry: dict[str, Any] = {"name": name, "width": layer.width, "radix": [int(r) for r in layer.radix]}
        if isinstance(layer, GHLayerSpec):
            factors = [layer.factors[j] for j in order]
            packed = gh.pack(factors, layer.width)
            for k, v in packed.items():
                tensors[f"{name}.{k}"] = v
            fused = layer.fused()[order]
            norms = np.linalg.norm(fused, ord=2, axis=(1, 2)) if len(fused) else np.zeros(0)
            if np.any(norms > 1 + 1e-9):
                raise AssertionError("a compiled A(x) has spectral norm > 1 (Proposition 1 violated)")
            tensors[f"{name}.A"] = fused
            tensors[f"{name}.B"] = np.asarray(layer.B, dtype=np.float64)[order]
            tensors[f"{name}.h0"] = np.asarray(layer.h0, dtype=np.float64)
            entry.update(kind="gh", exact=layer.exact, factors_per_step=int(gh.factors_per_row(packed["fkind"]).max()))
            if layer.exact == "angle":
                tensors[f"{name}.code_angles"] = np.asarray(layer.code_angles, dtype=np.int64)
                entry.update(angle_den=int(layer.angle_den), h0_angle=int(layer.h0_angle))
        else:
            entry.update(kind="diagonal", complex=layer.is_complex)
            tensors[f"{name}.moduli"] = layer.moduli.astype(np.int64)
            exps = layer.exponents[order].astype(np.int64)
            reset = layer.reset[order].astype(np.int64)
            rcode = layer.reset_code[order].astype(np.int64)
            tensors[f"{name}.exponents"] = exps
            tensors[f"{name}.reset"] = reset
            tensors[f"{name}.reset_code"] = rcode
            tensors[f"{name}.code_exponents"] = layer.code_exponents.astype(np.int64)
            lam_re, lam_im = root_values(layer.moduli[None, :], exps)
            lam_re[:, layer.moduli == 0] = 1.0  # orbit coordinates are kept (A entry 1) on permutation rows
            lam_re[reset.astype(bool)] = 0.0
            lam_im[reset.astype(bool)] = 0.0
            b_re, b_im = root_values(layer.moduli[None, :], rcode)
            b_re[~reset.astype(bool)] = 0.0
            b_im[~reset.astype(bool)] = 0.0
            c_re, c_im = root_values(layer.moduli[None, :], layer.code_exponents)
            tensors.update(
                {
                    f"{name}.lam_re": lam_re,
                    f"{name}.lam_im": lam_im,
                    f"{name}.B_re": b_re,
                    f"{name}.B_im": b_im,
                    f"{name}.codes_re": c_re,
                    f"{name}.codes_im": c_im,
                }
            )
            tensors[f"{name}.code_states"] = layer.code_states.astype(np.int64)
            entry.update(h0_index=int(layer.h0_index), n_states=int(layer.n_states))
        if isinstance(layer, GHLayerSpec):
            ro = layer.readout
            entry["readout"] = ro.kind
            entry["n_states"] = int(ro.n_states)
            if ro.kind == "nearest":
                tensors[f"{name}.codes"] = np.asarray(ro.codes, dtype=np.float64)
            else:
                tensors[f"{name}.hkeys"] = ro.keys.astype(np.int64)
                tensors[f"{name}.hvals"] = ro.values.astype(np.int64)
        if layer.note:
            entry["note"] = layer.note
        header_layers.append(entry)
    radix = [int(e["n_states"]) for e in header_layers]
    final_keys = np.asarray(final_keys)
    if final_keys.ndim != 2 or final_keys.shape[1] != len(layers):
        raise ConstructionError(
            f"the final readout's state tuples have shape {final_keys.shape}, not (n, {len(layers)}) for "
            f"{len(layers)} layers"
        )
    check_key_space(radix, "final readout")
    fk = encode(list(np.asarray(final_keys).T), radix, LOW_FIRST)
    order = np.argsort(fk, kind="stable")
    tensors["readout.keys"] = fk[order]
    tensors["readout.states"] = np.asarray(final_states, dtype=np.int64)[order]
    header = {
        "format": MODEL_FORMAT,
        "target": target,
        "construction": construction,
        "name": automaton.name,
        "states": list(automaton.states),
        "symbols": list(automaton.symbols),
        "initial": int(initial),
        "accepting": None if automaton.accepting is None else list(automaton.accepting_states),
        "layers": header_layers,
        "readout": {"kind": "table", "radix": radix, "keys": "readout.keys", "states": "readout.states"},
        "automaton": stored_automaton(automaton, initial),
        "summary": {
            "target": target,
            "construction": construction,
            "layers": len(layers),
            "width": header_layers[0]["width"] if len(layers) == 1 else [e["width"] for e in header_layers],
            **summary,
            "verified": False,
        },
    }
    if all(isinstance(layer, GHLayerSpec) for layer in layers):  # the Householder target: GH products
        fps = max(e["factors_per_step"] for e in header_layers)
        header["summary"]["factors_per_step"] = fps
    model = CompiledModel(header, tensors).validate()
    if verify:
        report = exact.exact_check(model, automaton)
        header["summary"]["verified"] = bool(report["ok"])
        if not report["ok"]:
            header["summary"]["verification_failure"] = report.get("failure")
    return model.seal()


#: a construction: (automaton, initial state) → (layers, final readout keys, final readout states, summary facts)
Construction = Callable[
    [Automaton, int], tuple[list[GHLayerSpec] | list[DiagonalLayerSpec], np.ndarray, np.ndarray, dict[str, Any]]
]


def assemble_construction(
    automaton: Automaton, initial: int, build: Construction, *, target: str, construction: str, verify: bool = True
) -> CompiledModel:
    """Run one construction and ``assemble`` its layers and final readout into a checked CompiledModel."""
    layers, final_keys, final_states, facts = build(automaton, initial)
    return assemble(
        automaton,
        initial,
        target=target,
        construction=construction,
        layers=layers,
        final_keys=final_keys,
        final_states=final_states,
        summary=facts,
        verify=verify,
    )


__all__ = [
    "Readout",
    "GHLayerSpec",
    "DiagonalLayerSpec",
    "assemble",
    "assemble_construction",
    "Construction",
    "resolve_initial",
    "check_key_space",
    "MAX_KEY_SPACE",
]
