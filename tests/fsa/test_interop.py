"""automata-lib interop: DFA round trips (complete and partial) and regex → minimal DFA against Python's `re`."""

from __future__ import annotations

import itertools
import re

import pytest
from automata.fa.dfa import DFA
from hypothesis import given
from hypothesis import strategies as st

from fsa2rnn.fsa import Automaton, SpecError, UnknownStateError, resolve_spec
from fsa2rnn.fsa.dfa_interop import to_dfa


@st.composite
def dfas(draw, partial: bool = False):
    n = draw(st.integers(1, 8))
    k = draw(st.integers(1, 3))
    symbols = ["a", "b", "c"][:k]
    targets = st.one_of(st.none(), st.integers(0, n - 1)) if partial else st.integers(0, n - 1)
    transitions = {}
    for q in range(n):
        row = {x: f"q{t}" for x in symbols if (t := draw(targets)) is not None}
        transitions[f"q{q}"] = row
    finals = draw(st.sets(st.integers(0, n - 1)))
    return DFA(
        states={f"q{q}" for q in range(n)},
        input_symbols=set(symbols),
        transitions=transitions,
        initial_state=f"q{draw(st.integers(0, n - 1))}",
        final_states={f"q{q}" for q in finals},
        allow_partial=partial,
    )


@given(st.integers(1, 15), st.integers(1, 3), st.integers(0, 10_000), st.data())
def test_automaton_to_dfa_and_back_is_identity(n, k, seed, data):
    from cases import random_automaton

    a = random_automaton(n, k, seed).replace(initial=data.draw(st.integers(0, n - 1)))
    d = a.to_dfa()
    assert set(d.states) == set(a.states) and d.initial_state == a.states[a.initial]
    assert Automaton.from_dfa(d) == a


@given(dfas())
def test_complete_dfa_to_automaton_and_back_is_identity(d):
    a = Automaton.from_dfa(d)
    assert a.n_states == len(d.states)  # complete: no sink added
    back = to_dfa(a)
    assert back.states == d.states and back.final_states == d.final_states
    assert back.initial_state == d.initial_state and back.transitions == d.transitions


@given(dfas(partial=True))
def test_partial_dfa_gains_one_sink_and_keeps_its_language(d):
    a = Automaton.from_dfa(d)
    missing = any(len(d.transitions[q]) < len(d.input_symbols) for q in d.states)
    assert a.n_states == len(d.states) + int(missing)
    if missing:
        sink = a.state_index("sink")
        assert all(a.transitions[x, sink] == sink for x in range(a.n_symbols))
        assert sink not in a.accepting_states
    for n in range(5):
        for w in itertools.product(sorted(d.input_symbols), repeat=n):
            assert a.accepts(list(w)) == d.accepts_input("".join(w))


@given(dfas(partial=True))
def test_partial_dfa_round_trip_drops_the_added_sink(d):
    a = Automaton.from_dfa(d)
    own_sinks = [
        q
        for q in d.states
        if q != d.initial_state
        and q not in d.final_states
        and set(d.transitions[q].values()) == {q}
        and len(d.transitions[q]) == len(d.input_symbols)
    ]
    back = to_dfa(a, partial=True)
    assert back.allow_partial and back == d  # same language
    if not own_sinks:
        assert back.states == d.states and back.transitions == d.transitions
        assert back.initial_state == d.initial_state and back.final_states == d.final_states


def test_to_dfa_needs_an_initial_state():
    with pytest.raises(UnknownStateError, match="initial state"):
        to_dfa(Automaton([[0]]))


def test_sink_name_avoids_existing_states():
    d = DFA(
        states={"sink", "x"},
        input_symbols={"a", "b"},
        transitions={"sink": {"a": "x"}, "x": {"a": "x", "b": "sink"}},
        initial_state="sink",
        final_states={"x"},
        allow_partial=True,
    )
    a = Automaton.from_dfa(d)
    assert a.states == ("sink", "x", "sink'")


PATTERNS = ["(ab)*", "a*b", "(a|b)*abb", "a(b|c)*c?", "((ab)|(ba))*", "(a|b)(a|b)(a|b)", "a+b+"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_regex_matches_python_re_and_is_minimal(pattern):
    a = resolve_spec(f"regex:{pattern}")
    assert a.name == f"regex:{pattern}" and a.states == tuple(str(i) for i in range(a.n_states))
    assert list(a.symbols) == sorted(a.symbols)
    python = re.compile(pattern)
    for n in range(7):
        for w in itertools.product(a.symbols, repeat=n):
            assert a.accepts(list(w)) == bool(python.fullmatch("".join(w))), "".join(w)
    assert a.minimize() == a  # minimal and already in canonical numbering
    assert a.n_states == len(a.to_dfa().minify().states)


def test_regex_is_deterministic_across_hash_seeds():
    import subprocess
    import sys

    code = "from fsa2rnn.fsa import resolve_spec; print(resolve_spec('regex:(a|b)*abb|c').to_json())"
    outs = {
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONHASHSEED": s}, check=True
        ).stdout
        for s in ("1", "2", "3")
    }
    assert len(outs) == 1


@pytest.mark.parametrize("pattern", ["(ab", "a|", "*a", ")"])
def test_bad_regex_is_a_one_line_spec_error(pattern):
    with pytest.raises(SpecError) as info:
        resolve_spec(f"regex:{pattern}")
    msg = str(info.value)
    assert msg.startswith(f"bad regex {pattern!r}") and "\n" not in msg


def test_empty_regex():
    with pytest.raises(SpecError, match="empty"):
        resolve_spec("regex:")
