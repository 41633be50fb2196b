"""Group automaton → one-hot permutation-matrix RNN, and its exact check (integer arithmetic)."""

from __future__ import annotations

from typing import Any

import numpy as np

from fsa2rnn.compiler import CompiledModel, program_of
from fsa2rnn.compiler.model import MODEL_FORMAT, resolve_initial, stored_automaton
from fsa2rnn.fsa import Automaton
from fsa2rnn.fsa.errors import ConstructionError, ModelFileError


def compile_onehot(
    automaton: Automaton, *, construction: str = "auto", initial: int | str | None = None, verify: bool = True
) -> CompiledModel:
    """M(x) = the permutation matrix of δ_x for every symbol x; a symbol that is no permutation is refused."""
    if construction not in ("auto", "permutation"):
        raise ConstructionError(f"the onehot target has one construction, permutation (got {construction!r})")
    q0 = resolve_initial(automaton, initial)
    a = automaton.replace(initial=q0)
    if not a.is_group_automaton:
        raise ConstructionError("the onehot target needs a group automaton (every symbol a permutation)")
    n, s = a.n_states, a.n_symbols
    perm = np.asarray(a.transitions, dtype=np.int64)
    m = np.zeros((s, n, n))
    m[np.arange(s)[:, None], perm, np.arange(n)[None, :]] = 1.0  # column q of M(x) is e_{δ_x(q)}
    h0 = np.zeros(n)
    h0[q0] = 1.0
    header: dict[str, Any] = {
        "format": MODEL_FORMAT,
        "target": "onehot",
        "construction": "permutation",
        "name": automaton.name,
        "states": list(a.states),
        "symbols": list(a.symbols),
        "initial": int(q0),
        "accepting": None if a.accepting is None else list(a.accepting_states),
        "layers": [{"kind": "onehot", "name": "perm", "width": n, "M": "perm.M", "h0": "perm.h0"}],
        "readout": {"kind": "one_hot", "states": "perm.states"},
        "automaton": stored_automaton(a, q0),
        "summary": {"target": "onehot", "construction": "permutation", "layers": 1, "width": n, "verified": False},
    }
    tensors = {"perm.M": m, "perm.h0": h0, "perm.states": np.arange(n, dtype=np.int64)}
    model = CompiledModel(header, tensors).validate()
    if verify:
        header["summary"]["verified"] = bool(check_onehot(model, a)["ok"])
    return model.seal()


def check_onehot(model: CompiledModel, automaton: Automaton) -> dict[str, Any]:
    """Every M(x) is a 0/1 permutation matrix, h_0 = e_{q0}, and the coordinate reached reads as δ_x(state): checked
    on every (coordinate, symbol) in integer arithmetic."""
    try:
        p = program_of(model, integrity=False)
    except ModelFileError as exc:
        return {"ok": False, "failure": str(exc), "checked": 0}
    m = p.M
    if not (np.isin(m, (0.0, 1.0)).all() and (m.sum(axis=1) == 1).all() and (m.sum(axis=2) == 1).all()):
        return {"ok": False, "failure": "some M(x) is not a permutation matrix", "checked": 0}
    if not (np.isin(p.h0, (0.0, 1.0)).all() and p.h0.sum() == 1):
        return {"ok": False, "failure": "h0 is not a one-hot code point", "checked": 0}
    if p.readout[int(np.flatnonzero(p.h0)[0])] != automaton.initial:
        return {"ok": False, "failure": "h0 does not read as the initial state", "checked": 0}
    image = m.argmax(axis=1)  # (|Σ|, N): the coordinate column i moves to
    want = np.asarray(automaton.transitions)[:, p.readout]
    ok = np.array_equal(p.readout[image], want)
    failure = None if ok else "a transition reads as the wrong state"
    return {"ok": bool(ok), "failure": failure, "checked": int(m.shape[0] * m.shape[1])}


def verify_check(model: CompiledModel, automaton: Automaton, *, dtype: str = "float64") -> tuple[dict[str, Any], bool]:
    ex = check_onehot(model, automaton)
    return {"exact": ex}, bool(ex["ok"])
