"""``compile_pdssm``: any automaton as one PD-SSM layer (Terzić et al. 2025, arXiv 2509.22284: one layer of
dimension N emulates any N-state automaton).

The PD-SSM recurrence is h_t = P(x_t) D(x_t) h_{t−1} (+ b(x_t), zero here), P(x) column one-hot and D(x) diagonal.
With N = |Q|, P(x) = δ_x — column q has its one in row δ_x(q), stored as the index array δ_x itself, so the model
takes |Σ|·N integers (M11's 7,920 states in 32k entries, not 63M per symbol) — D(x) = I and h_0 = e_{q0}:

    P(x) D(x) e_q = e_{δ_x(q)},   so by induction h_t = e_{δ_w(q0)} exactly, for every word w and every length,

and the one-hot readout maps coordinate i to state i (argmax h). The code points e_q are closed under every
transition, so the exact check (:func:`check_pdssm`, integer arithmetic) is the induction step itself: for every
coordinate i and symbol x, D(x)[i] = 1 and the readout of P(x)[i] is δ_x(readout of i), and h_0 is the code of
q0. Tensors: ``pd.P`` (|Σ|, N) int64, ``pd.D`` (|Σ|, N) float64, ``pd.h0`` (N,), ``readout.states`` (N,) int64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....fsa.automaton import Automaton
from ....fsa.errors import ConstructionError, LimitExceededError, ModelFileError
from ...model import MODEL_FORMAT, CompiledModel, resolve_initial, stored_automaton
from ...registry import program_of
from .program import PDSSMProgram

#: index-array entries |Σ|·N a model may hold
MAX_ENTRIES = 1 << 26


#: the constructions of target "pdssm" ("auto" is the one there is)
CONSTRUCTIONS = ("auto", "one_hot")


def compile_pdssm(
    automaton: Automaton, *, construction: str = "auto", initial: int | str | None = None, verify: bool = True
) -> CompiledModel:
    """Compile an automaton to target "pdssm" (construction "one_hot"; the module docstring)."""
    if construction not in CONSTRUCTIONS:
        raise ConstructionError(f"the pdssm target has one construction, one_hot (got {construction!r})")
    q0 = resolve_initial(automaton, initial)
    a = automaton.replace(initial=q0)
    n, s = a.n_states, a.n_symbols
    if n * s > MAX_ENTRIES:
        raise LimitExceededError(f"a PD-SSM of {n} states over {s} symbols needs {n * s} index entries, over the "
                                 f"limit of {MAX_ENTRIES}")  # fmt: skip
    h0 = np.zeros(n)
    h0[q0] = 1.0
    tensors = {
        "pd.P": np.asarray(a.transitions, dtype=np.int64),
        "pd.D": np.ones((s, n)),
        "pd.h0": h0,
        "readout.states": np.arange(n, dtype=np.int64),
    }
    header: dict[str, Any] = {
        "format": MODEL_FORMAT,
        "target": "pdssm",
        "construction": "one_hot",
        "name": automaton.name,
        "states": list(a.states),
        "symbols": list(a.symbols),
        "initial": int(q0),
        "accepting": None if a.accepting is None else list(a.accepting_states),
        "layers": [{"kind": "pdssm", "name": "pd", "width": n, "P": "pd.P", "D": "pd.D", "h0": "pd.h0"}],
        "readout": {"kind": "one_hot", "states": "readout.states"},
        "automaton": stored_automaton(a, q0),
        "summary": {
            "target": "pdssm",
            "construction": "one_hot",
            "layers": 1,
            "width": n,
            "bound": f"N = |Q| = {n} (Terzić et al.: one layer of dimension N emulates any N-state automaton); "
            "P(x) = δ_x as index arrays, D(x) = I",
            "verified": False,
        },
    }
    model = CompiledModel(header, tensors).validate()
    if verify:
        report = check_pdssm(model, a)
        header["summary"]["verified"] = bool(report["ok"])
        if not report["ok"]:
            header["summary"]["verification_failure"] = report["failure"]
    return model.seal()


def check_pdssm(model: CompiledModel, automaton: Automaton) -> dict[str, Any]:
    """Exact check of a PD-SSM model in integer arithmetic (the module docstring's induction): the code points e_i
    are closed under P(x) D(x) with D(x) = 1, the readout commutes with the transitions and h_0 reads as the
    initial state. Returns ``{ok, failure, code_points, checked}``."""

    def fail(msg: str) -> dict[str, Any]:
        return {"ok": False, "failure": msg, "code_points": None, "checked": None}

    try:
        p = program_of(model, integrity=False)
    except ModelFileError as exc:
        return fail(str(exc))
    if not isinstance(p, PDSSMProgram):
        return fail(f"not a pdssm model (target {p.target!r})")
    if p.n_symbols != automaton.n_symbols or p.n_states != automaton.n_states:
        return fail("the model's alphabet or states differ from the automaton's")
    P, D, h0, states = p.P, p.D, p.h0, p.readout
    if not (D == 1).all():
        return fail("D(x) must be the identity (every diagonal entry exactly 1)")
    if not (np.isin(h0, (0.0, 1.0)).all() and int((h0 == 1).sum()) == 1):
        return fail("h0 must be a one-hot code point e_i")
    start = int(np.flatnonzero(h0 == 1)[0])
    if states[start] != p.initial:
        return fail(f"h0 = e_{start} reads as state {states[start]}, not the initial state {p.initial}")
    # induction step: readout(P(x)[i]) = δ_x(readout(i)) for every coordinate i and symbol x
    want = automaton.transitions[:, states]  # (|Σ|, N)
    bad = np.argwhere(states[P] != want)
    if len(bad):
        x, i = (int(v) for v in bad[0])
        return fail(f"symbol {automaton.symbols[x]!r} sends code point e_{i} (state {automaton.states[states[i]]!r}) "
                    f"to e_{P[x, i]}, which reads as {automaton.states[states[P[x, i]]]!r}, not "
                    f"{automaton.states[want[x, i]]!r}")  # fmt: skip
    return {"ok": True, "failure": None, "code_points": int(p.width), "checked": int(P.size)}


def realized_automaton(model: CompiledModel) -> Automaton:
    """The automaton a PD-SSM model's exact dynamics realize, on the header's names (the exact interpreter): from the
    start code point e_i, symbol x leads to D(x)[i] e_{P(x)[i]}, a code point again only when D(x)[i] = 1; the
    coordinates reachable so are explored breadth-first and read out. States never reached keep self-loops. Raises
    ModelFileError where a code point leaves the one-hot codes or one (state, symbol) gets two successors."""
    p = program_of(model)
    if not isinstance(p, PDSSMProgram):
        raise ModelFileError(f"not a pdssm model (target {p.target!r})")
    P, D, h0, states = p.P, p.D, p.h0, p.readout
    if not (np.isin(h0, (0.0, 1.0)).all() and int((h0 == 1).sum()) == 1):
        raise ModelFileError("the PD-SSM's h0 is not a one-hot code point")
    seen = np.zeros(p.width, dtype=bool)
    frontier = np.flatnonzero(h0 == 1)
    seen[frontier] = True
    edges = []
    while len(frontier):
        if not (D[:, frontier] == 1).all():
            raise ModelFileError("the PD-SSM's dynamics leave the one-hot code points (a diagonal entry ≠ 1)")
        nxt = P[:, frontier]  # (|Σ|, F)
        xs = np.repeat(np.arange(p.n_symbols), len(frontier))
        edges.append(np.stack([states[np.tile(frontier, p.n_symbols)], xs, states[nxt.ravel()]], 1))
        new = np.unique(nxt)
        frontier = new[~seen[new]]
        seen[frontier] = True
    e = np.unique(np.concatenate(edges), axis=0)
    if len(np.unique(e[:, :2], axis=0)) != len(e):
        raise ModelFileError(
            "the model's dynamics are not those of an automaton: one (state, symbol) has two successors"
        )
    table = np.tile(np.arange(p.n_states), (p.n_symbols, 1))
    table[e[:, 1], e[:, 0]] = e[:, 2]
    acc = None if p.accepting is None else np.flatnonzero(p.accepting).tolist()
    return Automaton(table, states=list(p.states), symbols=list(p.symbols), initial=p.initial, accepting=acc,
                     name=model.header.get("name"))  # fmt: skip


def verify_check(model: CompiledModel, automaton: Automaton, *, dtype: str = "float64") -> tuple[dict[str, Any], bool]:
    """What ``verify`` reports for a PD-SSM: the induction step on the one-hot code points (:func:`check_pdssm`), in
    integer arithmetic."""
    ex = check_pdssm(model, automaton)
    return {"exact": dict(ex)}, bool(ex["ok"])
