"""AALpy interop (fsa/aalpy_interop.py): every automaton of the shared table converts to AALpy's Dfa and Moore
machine and back (identity), AALpy's random automata convert to ours and back, and both sides compute the same
outputs on random words (AALpy's own ``execute_sequence`` is the oracle for ours and vice versa)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from cases import SMALL_CASES, case_automaton, random_automaton

from fsa2rnn.fsa import Automaton, SpecError, UnknownStateError
from fsa2rnn.fsa.aalpy_interop import (
    MissingDependencyError,
    from_aalpy_dfa,
    from_aalpy_moore,
    require_aalpy,
    to_aalpy_dfa,
    to_aalpy_moore,
)

pytest.importorskip("aalpy")
from aalpy.utils import generate_random_deterministic_automata  # noqa: E402

CASES_WITH_START = [c for c in SMALL_CASES if c.n_states <= 200]


def _random_words(symbols, n=40, max_len=12, seed=0):
    rng = np.random.default_rng(seed)
    return [[symbols[i] for i in rng.integers(0, len(symbols), rng.integers(0, max_len + 1))] for _ in range(n)]


def _aalpy_outputs(m, word):
    m.reset_to_initial()
    return [m.step(None)] + [m.step(x) for x in word]


def _our_outputs(a: Automaton, out, word):
    return [out[q] for q in [a.initial, *a.run(word).tolist()]] if word else [out[a.initial]]


def _started(a: Automaton) -> Automaton:
    return a if a.initial is not None else a.replace(initial=0)


@pytest.mark.parametrize("case", CASES_WITH_START, ids=lambda c: c.name)
def test_table_automata_round_trip_through_aalpy_moore_and_dfa(case):
    a = _started(case_automaton(case))
    labels = [f"out{j % 3}" for j in range(a.n_states)]  # outputs that merge states: not the identity by accident
    m = to_aalpy_moore(a, labels)
    assert m.size == a.n_states and m.is_input_complete()
    back, outs = from_aalpy_moore(m, name=a.name)
    assert back == a.replace(accepting=None) and outs == labels
    for w in _random_words(a.symbols, seed=len(case.name)):
        assert _aalpy_outputs(m, w) == _our_outputs(a, labels, w)
    acceptor = a if a.accepting is not None else a.replace(accepting=[0])
    d = to_aalpy_dfa(acceptor)
    assert from_aalpy_dfa(d, name=a.name) == acceptor
    for w in _random_words(a.symbols, seed=1):
        assert _aalpy_outputs(d, w)[-1] == acceptor.accepts(w)


@pytest.mark.parametrize("seed", range(6))
def test_aalpy_random_automata_round_trip(seed):
    random.seed(seed)
    n = 3 + seed
    for kind in ("dfa", "moore"):
        m = generate_random_deterministic_automata(kind, n, 3, 3 if kind == "moore" else 2, num_accepting_states=2)
        if kind == "dfa":
            a = from_aalpy_dfa(m)
            outs = [bool(v) for v in a.accepting]
            again = to_aalpy_dfa(a)
        else:
            a, outs = from_aalpy_moore(m)
            again = to_aalpy_moore(a, outs)
        assert a.n_states == n and a.states == tuple(str(s.state_id) for s in m.states)
        for w in _random_words(a.symbols, seed=seed):
            word = [m.get_input_alphabet()[[str(x) for x in m.get_input_alphabet()].index(s)] for s in w]
            assert _aalpy_outputs(m, word) == _our_outputs(a, outs, w) == _aalpy_outputs(again, w)


def test_partial_aalpy_dfa_gains_a_sink_and_partial_moore_is_refused():
    from aalpy.automata import Dfa, DfaState, MooreMachine, MooreState

    s0, s1 = DfaState("s0"), DfaState("s1", is_accepting=True)
    s0.transitions["a"] = s1
    s1.transitions["a"], s1.transitions["b"] = s0, s1
    a = from_aalpy_dfa(Dfa(s0, [s0, s1]))
    assert a.states == ("s0", "s1", "sink") and a.accepting_states == (1,)
    assert a.accepts(["a", "b"]) and not a.accepts(["b", "a"])
    m0 = MooreState("m0", output=0)
    m0.transitions["a"] = m0
    m1 = MooreState("m1", output=1)
    m1.transitions["b"] = m1
    with pytest.raises(SpecError, match="no transition"):
        from_aalpy_moore(MooreMachine(m0, [m0, m1]))


def test_bad_inputs_are_one_line_errors():
    a = random_automaton(3, 2, 0, initial=False)
    with pytest.raises(UnknownStateError, match="initial state"):
        to_aalpy_dfa(a)
    with pytest.raises(SpecError, match="one output per state"):
        to_aalpy_moore(a.replace(initial=0), [0, 1])


def test_missing_aalpy_is_a_one_line_error(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "aalpy", None)  # import aalpy now raises ImportError
    with pytest.raises(MissingDependencyError, match=r"AALpy is not installed: pip install 'fsa2rnn\[lstar\]'"):
        require_aalpy()
    with pytest.raises(MissingDependencyError):
        to_aalpy_dfa(random_automaton(2, 2, 0))
