"""Conversion between Automaton and automata-lib's DFA (complete or partial).

``to_dfa`` keeps state and symbol names; ``Automaton.from_dfa`` reads states and symbols in the DFA's insertion
order, so ``Automaton.from_dfa(to_dfa(a)) == a`` for every automaton with an initial state and an accepting set. A
partial DFA gains one non-accepting sink state (named ``sink``, or ``sink'``… if that name is taken) receiving every
missing transition; ``to_dfa(a, partial=True)`` drops it again, so ``to_dfa(Automaton.from_dfa(d), partial=True)`` is
``d`` for a partial DFA without sink states of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .errors import SpecError, UnknownStateError
from .indices import STATE_DTYPE

if TYPE_CHECKING:  # the operations build automata with Automaton.replace: no import cycle
    from .automaton import Automaton

SINK = "sink"


def sink_states(a: Automaton) -> np.ndarray:
    """Indices of the sinks: non-accepting, non-initial states that every symbol maps to themselves."""
    t = a.transitions
    loops = np.all(t == np.arange(a.n_states), axis=0)
    if a.accepting is not None:
        loops &= ~a.accepting
    if a.initial is not None:
        loops[a.initial] = False
    return np.flatnonzero(loops)


def to_dfa(a: Automaton, partial: bool = False) -> Any:
    """An automata-lib ``DFA`` with the same states, symbols, initial state and accepting set (empty if none).

    ``partial=True`` leaves out the sink states (see :func:`sink_states`) and every transition into them, giving a
    partial DFA (``allow_partial``) with the same language; ``Automaton.from_dfa`` adds one sink back."""
    from automata.fa.dfa import DFA

    if a.initial is None:
        raise UnknownStateError("an automata-lib DFA needs an initial state; this automaton has none")
    states, symbols = a.states, a.symbols
    t = a.transitions
    dropped = set(sink_states(a).tolist()) if partial else set()
    transitions = {
        q: {x: states[t[i, j]] for i, x in enumerate(symbols) if int(t[i, j]) not in dropped}
        for j, q in enumerate(states)
        if j not in dropped
    }
    return DFA(
        states=set(transitions),
        input_symbols=set(symbols),
        transitions=transitions,
        initial_state=states[a.initial],
        final_states={states[i] for i in a.accepting_states},
        allow_partial=partial,
    )


def dfa_arguments(dfa: Any, name: str | None = None) -> dict[str, Any]:
    """The Automaton of an automata-lib DFA, as the arguments of its constructor (``Automaton.from_dfa`` builds
    it); missing transitions of a partial DFA go to an added sink state.

    State names are ``str(state)`` (frozensets as ``{a,b}``); states and symbols keep the DFA's insertion order.
    """
    raw_states = list(dfa.transitions.keys())
    raw_states += [q for q in _sorted(dfa.states) if q not in dfa.transitions]
    symbols: list[str] = []
    seen_symbols: set[str] = set()
    for q in raw_states:
        for x in dfa.transitions.get(q, {}):
            if x not in seen_symbols:
                seen_symbols.add(x)
                symbols.append(x)
    symbols += _sorted(set(dfa.input_symbols) - seen_symbols)
    if not symbols:
        raise SpecError("the DFA has an empty alphabet")
    index = {q: i for i, q in enumerate(raw_states)}
    n = len(raw_states)
    sym_index = {x: i for i, x in enumerate(symbols)}
    table = np.full((len(symbols), n), n, dtype=STATE_DTYPE)  # n = the sink, if needed
    for q, row in dfa.transitions.items():
        j = index[q]
        for x, target in row.items():
            table[sym_index[x], j] = index[target]
    names = _unique_names([_name(q) for q in raw_states])
    if np.any(table == n):
        sink = SINK
        while sink in names:
            sink += "'"
        names.append(sink)
        table = np.concatenate([table, np.full((len(symbols), 1), n, dtype=STATE_DTYPE)], axis=1)
    return dict(
        transitions=table,
        states=names,
        symbols=[str(x) for x in symbols],
        initial=index[dfa.initial_state],
        accepting=sorted(index[q] for q in dfa.final_states),
        name=name,
    )


def _name(q: Any) -> str:
    if isinstance(q, (frozenset, set)):
        return "{" + ",".join(_name(v) for v in _sorted(q)) + "}"
    if isinstance(q, tuple):
        return "(" + ",".join(_name(v) for v in q) + ")"
    return str(q)


def _sorted(values: Any) -> list[Any]:
    return sorted(values, key=lambda v: (type(v).__name__, _name(v)))


def _unique_names(names: list[str]) -> list[str]:
    seen: dict[str, int] = {}
    out = []
    for nm in names:
        if nm in seen:
            seen[nm] += 1
            nm = f"{nm}#{seen[nm]}"
        seen.setdefault(nm, 0)
        out.append(nm)
    return out
