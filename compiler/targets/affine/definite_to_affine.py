"""Definite automaton → affine shift register with nilpotent A (ρ = 0): the positive side of Theorem 4.1.

Brandoit et al.'s Theorem 4.1: an affine recurrence h_t = A(x_t) h_{t−1} + b(x_t) with ρ(A_w) < 1 for every word
realizes at most a *definite* automaton — one whose state, after k or more symbols, depends only on the last k.
The converse is constructive: for a definite automaton of degree k over s symbols,

- h ∈ R^{k·s} holds k blocks of s coordinates; block j is the one-hot code of the symbol read j steps ago (zero
  when fewer than j + 1 symbols were read);
- A (the same for every symbol) shifts block j into block j + 1 and drops the last: A^k = 0, so ρ(A_w) = 0;
- b(x) = e_x in block 0; h_0 = 0;
- readout π: decode each block to the nearest of {0, e_1, …, e_s} (a window of up to k symbols) and look the window
  up in a table: the state δ_window(q_0) — for a full window, δ_window is a constant map, so the start is forgotten.

The exact check (:func:`check_affine`) enumerates every window (Σ_{ℓ≤k} s^ℓ of them, bounded by
:data:`MAX_WINDOWS`) in integer arithmetic. Robustness (Theorem 3.2's cells): an error e_t added at each step reaches
h_t as Σ_{j<k} A^j e_{t−j}, of norm ≤ η·Σ_{j<k} ‖A^j‖₂ = kη, and a block decodes correctly while its error is below
1/2 (half the distance 1 between 0 and e_x; e_x and e_y are √2 apart). So the model is η-robust for every η < 1/(2k):
:func:`robust_radius`.

Non-definite automata are refused (ConstructionError) with Theorem 4.1 and a witness: a word w whose powers never
become constant — δ_{w^n} is not a constant map for n = |Q| (and so for no n).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....fsa.automaton import Automaton
from ....fsa.classify import definite_degree, semigroup_mask
from ....fsa.errors import ConstructionError, LimitExceededError
from ....fsa.monoid import TransitionMonoid
from ...model import MODEL_FORMAT, CompiledModel, resolve_initial, stored_automaton
from ...registry import program_of
from .program import AffineProgram

#: most windows (words of length ≤ k) the readout table and the exact check enumerate
MAX_WINDOWS = 1_000_000


def non_definite_witness(automaton: Automaton) -> list[int] | None:
    """A shortest word w (symbol ids) whose power w^|Q| is not a constant map, or None if the automaton is definite.

    A non-definite transformation semigroup S has a non-constant idempotent e = δ_w (w nonempty); then δ_{w^n} = e
    for every n ≥ 1. The BFS tree of the monoid gives a shortest such w; the power is checked directly.
    """
    M = TransitionMonoid(automaton)
    E = M.elements
    const = np.all(E == E[:, :1], axis=1)
    candidates = np.flatnonzero(M.idempotent_mask & semigroup_mask(M) & ~const)
    if len(candidates) == 0:
        return None

    def word(i: int) -> list[int]:
        if i:
            return M.word(i)
        # the identity is in S: some nonempty word acts as it (an element times a symbol gives the identity)
        s, x = (int(v) for v in np.argwhere(M.right_cayley == 0)[0])
        return M.word(s) + [x]

    return min((word(int(i)) for i in candidates), key=len)


def _power_image(automaton: Automaton, word: list[int], n: int) -> np.ndarray:
    q = np.arange(automaton.n_states)
    for _ in range(n):
        for x in word:
            q = automaton.transitions[x][q]
    return q


#: the constructions of target "affine" ("auto" is the one there is)
CONSTRUCTIONS = ("auto", "shift_register")


def compile_affine(
    automaton: Automaton, *, construction: str = "auto", initial: int | str | None = None, verify: bool = True
) -> CompiledModel:
    """Compile a definite automaton to target "affine" (construction "shift_register"); see the module docstring."""
    if construction not in CONSTRUCTIONS:
        raise ConstructionError(f"the affine target has one construction, shift_register (got {construction!r})")
    q0 = resolve_initial(automaton, initial)
    a = automaton.replace(initial=q0)
    reach = a.reachable()
    k = definite_degree(TransitionMonoid(reach))
    if k is None:
        w = non_definite_witness(reach)
        names = " ".join(reach.symbols[x] for x in w)
        n = reach.n_states
        image = _power_image(reach, w, n)
        raise ConstructionError(
            f"not definite: by Theorem 4.1 (Brandoit et al.) no contracting affine recurrence realizes it; witness "
            f"w = [{names}]: δ_(w^{n}) maps the reachable states to {len(set(image.tolist()))} different states, "
            "not to one"
        )
    s = a.n_symbols
    k = max(k, 1)
    windows = sum(s**j for j in range(k + 1))
    if windows > MAX_WINDOWS:
        raise LimitExceededError(
            f"a shift register over the last {k} of {s} symbols has {windows} windows, over the limit of {MAX_WINDOWS}"
        )
    d = k * s
    shift = np.zeros((d, d))
    shift[s:, : d - s] = np.eye(d - s)  # block j → block j + 1
    b = np.zeros((s, d))
    b[np.arange(s), np.arange(s)] = 1.0
    table = window_table(a, k)
    tensors = {"A": shift, "B": b, "h0": np.zeros(d), "readout.table": table}
    header: dict[str, Any] = {
        "format": MODEL_FORMAT,
        "target": "affine",
        "construction": "shift_register",
        "name": automaton.name,
        "states": list(a.states),
        "symbols": list(a.symbols),
        "initial": int(q0),
        "accepting": None if a.accepting is None else list(a.accepting_states),
        "layers": [{"kind": "affine", "name": "shift", "window": k, "width": d, "A": "A", "B": "B", "h0": "h0"}],
        "readout": {"kind": "window_table", "window": k, "radix": s + 1, "table": "readout.table"},
        "automaton": stored_automaton(a, q0),
        "summary": {
            "target": "affine",
            "construction": "shift_register",
            "layers": 1,
            "width": d,
            "definite_degree": k,
            "spectral_radius": 0.0,
            "robust_radius": robust_radius(k),
            "verified": False,
        },
    }
    model = CompiledModel(header, tensors).validate()
    if verify:
        report = check_affine(model, a)
        header["summary"]["verified"] = bool(report["ok"])
        if not report["ok"]:
            header["summary"]["verification_failure"] = report["failure"]
    return model.seal()


def window_code(window: np.ndarray, radix: int) -> np.ndarray:
    """Integer code of windows (…, k) of digits 0 (empty) or x + 1, block 0 (the newest symbol) least significant."""
    w = np.asarray(window, dtype=np.int64)
    return (w * (radix ** np.arange(w.shape[-1], dtype=np.int64))).sum(axis=-1)


def window_table(a: Automaton, k: int) -> np.ndarray:
    """readout.table[code(window)] = δ_window(q_0) for every window of length ≤ k (−1 for codes that are no window:
    an empty block newer than a full one). Vectorized per window length."""
    s = a.n_symbols
    table = np.full((s + 1) ** k, -1, dtype=np.int64)
    table[0] = a.initial
    for length in range(1, k + 1):
        # every word of this length, newest symbol first (digit j = the symbol read j steps ago)
        digits = np.indices((s,) * length).reshape(length, s**length).T  # (s^length, length)
        oldest_first = digits[:, ::-1]
        states = a.run(oldest_first, start=np.full(len(digits), a.initial))[:, -1]
        window = np.zeros((len(digits), k), dtype=np.int64)
        window[:, :length] = digits + 1
        table[window_code(window, s + 1)] = states
    return table


def robust_radius(k: int) -> float:
    """η* = 1/(2k): below it every η-trajectory decodes correctly (module docstring)."""
    return 1.0 / (2 * k)


def check_affine(model: CompiledModel, automaton: Automaton) -> dict[str, Any]:
    """Exact check of a shift-register model in integer arithmetic: A is the block shift (so A^k = 0 exactly), B the
    one-hot codes, h_0 = 0, and the table maps every window to δ_window(q_0), every full window to a constant map's
    value. Returns ``{ok, failure, windows, nilpotent_index}``."""
    program = program_of(model, integrity=False)  # its parser refuses tensors whose shapes are not (k, |Σ|)'s
    if not isinstance(program, AffineProgram):
        return {"ok": False, "failure": f"target {model.target!r} is not a shift register", "windows": 0}
    k = program.window
    s = automaton.n_symbols
    d = k * s
    A, B, h0, table = program.A, program.B, program.h0, program.table

    def fail(msg: str) -> dict[str, Any]:
        return {"ok": False, "failure": msg, "windows": None, "nilpotent_index": None}

    if len(program.symbols) != s:
        return fail(f"the model reads {len(program.symbols)} symbols, the automaton {s}")
    if not (np.isin(A, (0.0, 1.0)).all() and np.isin(B, (0.0, 1.0)).all() and not h0.any()):
        return fail("A and B must be 0/1 matrices and h0 zero")
    Ai = A.astype(np.int64)
    want = np.zeros((d, d), dtype=np.int64)
    want[s:, : d - s] = np.eye(d - s, dtype=np.int64)
    if not np.array_equal(Ai, want) or not np.array_equal(B.astype(np.int64), np.eye(s, d, dtype=np.int64)):
        return fail("A is not the block shift or B not the one-hot codes of block 0")
    power, index = np.eye(d, dtype=np.int64), 0
    while power.any():  # the block shift of k blocks: A^k = 0, A^(k-1) ≠ 0 (reported; it cannot differ from k here)
        power, index = Ai @ power, index + 1
    a = automaton.replace(initial=model.initial)
    if not np.array_equal(window_table(a, k), table):
        return fail("the readout table differs from δ_window(q0) on some window")
    # a full window must forget the start: δ_window is a constant map on the reachable states
    digits = np.indices((s,) * k).reshape(k, s**k).T  # every word of length k
    reach = a.reachable()
    ends = np.stack([reach.run(digits, start=np.full(len(digits), q))[:, -1] for q in range(reach.n_states)])
    if not (ends == ends[:1]).all():
        return fail(f"a window of length {k} does not determine the state (the automaton is not {k}-definite)")
    return {"ok": True, "failure": None, "windows": int(sum(s**j for j in range(k + 1))), "nilpotent_index": index}


def verify_check(model: CompiledModel, automaton: Automaton, *, dtype: str = "float64") -> tuple[dict[str, Any], bool]:
    """What ``verify`` reports for a shift register: the window check (:func:`check_affine`), in integer arithmetic."""
    ex = check_affine(model, automaton)
    return {"exact": dict(ex)}, bool(ex["ok"])
