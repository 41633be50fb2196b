"""Conversion between Automaton and AALpy's automata (the optional extra ``fsa2rnn[lstar]``, AALpy ≥ 2.0).

- An acceptor (an automaton with an initial state and an accepting set) ↔ AALpy's ``Dfa``: :func:`to_aalpy_dfa`,
  :func:`from_aalpy_dfa`.
- An automaton with an output per state (a class label: the state itself for a word problem, a class name for a
  task) ↔ AALpy's ``MooreMachine``: :func:`to_aalpy_moore`, :func:`from_aalpy_moore`.

States keep their names (AALpy's ``state_id``) and their order; symbols are AALpy's inputs, in the automaton's order.
So ``from_aalpy_dfa(to_aalpy_dfa(a)) == a`` and ``from_aalpy_moore(to_aalpy_moore(a, out)) == (a, out)`` for every
automaton with an initial state (and an accepting set, for the DFA). An AALpy DFA with missing transitions gains one
non-accepting sink state (named ``sink``, primed if taken); a Moore machine with missing transitions is refused
(no output could be given to an invented state).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

from .automaton import STATE_DTYPE, Automaton
from .errors import MissingDependencyError, SpecError, UnknownStateError

#: how a user gets AALpy
INSTALL_HINT = "pip install 'fsa2rnn[lstar]' (or: pip install 'aalpy>=2.0')"


def require_aalpy() -> Any:
    """The ``aalpy`` module, or :class:`MissingDependencyError` with the install command."""
    try:
        import aalpy
    except ImportError:
        raise MissingDependencyError(f"AALpy is not installed: {INSTALL_HINT}") from None
    return aalpy


def _need_initial(a: Automaton, what: str) -> int:
    if a.initial is None:
        raise UnknownStateError(f"an AALpy {what} needs an initial state; this automaton has none")
    return int(a.initial)


def to_aalpy_dfa(a: Automaton) -> Any:
    """An AALpy ``Dfa`` with the states (``state_id`` = name), symbols, initial state and accepting set (empty if
    the automaton has none) of ``a``."""
    require_aalpy()
    from aalpy.automata import Dfa, DfaState

    init = _need_initial(a, "DFA")
    acc = a.accepting if a.accepting is not None else np.zeros(a.n_states, dtype=bool)
    states = [DfaState(name, is_accepting=bool(acc[j])) for j, name in enumerate(a.states)]
    _wire(a, states)
    return Dfa(states[init], states)


def to_aalpy_moore(a: Automaton, outputs: Sequence[Hashable]) -> Any:
    """An AALpy ``MooreMachine`` with the states, symbols and initial state of ``a``, state j's output
    ``outputs[j]``."""
    require_aalpy()
    from aalpy.automata import MooreMachine, MooreState

    init = _need_initial(a, "Moore machine")
    outputs = list(outputs)
    if len(outputs) != a.n_states:
        raise SpecError(f"a Moore machine needs one output per state ({a.n_states}), got {len(outputs)}")
    states = [MooreState(name, output=outputs[j]) for j, name in enumerate(a.states)]
    _wire(a, states)
    return MooreMachine(states[init], states)


def _wire(a: Automaton, states: list[Any]) -> None:
    t = a.transitions
    for x, sym in enumerate(a.symbols):
        for j, s in enumerate(states):
            s.transitions[sym] = states[int(t[x, j])]


def from_aalpy_dfa(dfa: Any, name: str | None = None) -> Automaton:
    """An Automaton from an AALpy ``Dfa`` (states in ``dfa.states`` order, named ``str(state_id)``); missing
    transitions go to an added non-accepting sink."""
    a, _ = _from_aalpy(dfa, name, partial_ok=True)
    return a


def from_aalpy_moore(moore: Any, name: str | None = None) -> tuple[Automaton, list[Hashable]]:
    """(automaton, outputs): an AALpy ``MooreMachine`` as an Automaton and each state's output, in ``moore.states``
    order. Every state needs a transition on every input."""
    return _from_aalpy(moore, name, partial_ok=False)


def _from_aalpy(m: Any, name: str | None, *, partial_ok: bool) -> tuple[Automaton, list[Hashable]]:
    states = list(m.states)
    if m.initial_state not in states:
        raise UnknownStateError("the AALpy automaton's initial state is not one of its states")
    index = {id(s): j for j, s in enumerate(states)}
    symbols: list[Any] = []
    for s in states:
        for x in s.transitions:
            if x not in symbols:
                symbols.append(x)
    if not symbols:
        raise SpecError("the AALpy automaton has no inputs")
    n = len(states)
    table = np.full((len(symbols), n), n, dtype=STATE_DTYPE)  # n: missing
    for j, s in enumerate(states):
        for x, target in s.transitions.items():
            if id(target) not in index:
                raise UnknownStateError(f"state {s.state_id!r} goes on {x!r} to a state outside the automaton")
            table[symbols.index(x), j] = index[id(target)]
    names = [str(s.state_id) for s in states]
    if len(set(names)) != n:
        raise SpecError("the AALpy automaton has two states with the same id")
    outputs = [s.output for s in states]
    if np.any(table == n):
        x, j = np.argwhere(table == n)[0]
        if not partial_ok:
            raise SpecError(f"the Moore machine has no transition from {names[j]!r} on {symbols[x]!r}")
        sink = "sink"
        while sink in names:
            sink += "'"
        names.append(sink)
        outputs.append(False)
        table = np.concatenate([table, np.full((len(symbols), 1), n, dtype=STATE_DTYPE)], axis=1)
    accepting = [j for j, o in enumerate(outputs) if o is True] if partial_ok else None
    a = Automaton(table, states=names, symbols=[str(x) for x in symbols], initial=index[id(m.initial_state)],
                  accepting=accepting, name=name)  # fmt: skip
    return a, outputs
