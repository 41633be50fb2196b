"""The Automaton core: spec round trips, running words (single, batch) against a plain-Python reference, files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cases import DESIGN_SPEC, random_automaton
from hypothesis import given
from hypothesis import strategies as st

from fsa2rnn.fsa import Automaton, SpecError, UnknownStateError, UnknownSymbolError


@st.composite
def automata(draw, max_states: int = 12, max_symbols: int = 4):
    n = draw(st.integers(1, max_states))
    k = draw(st.integers(1, max_symbols))
    table = draw(st.lists(st.lists(st.integers(0, n - 1), min_size=n, max_size=n), min_size=k, max_size=k))
    initial = draw(st.one_of(st.none(), st.integers(0, n - 1)))
    accepting = draw(st.one_of(st.none(), st.sets(st.integers(0, n - 1))))
    names = draw(st.lists(st.text("abcxyz01", min_size=1, max_size=4), min_size=n, max_size=n, unique=True))
    return Automaton(table, states=names, symbols=[f"s{i}" for i in range(k)], initial=initial, accepting=accepting)


@given(automata())
def test_spec_round_trip_is_identity(a):
    spec = a.to_spec()
    b = Automaton.from_spec(json.loads(json.dumps(spec)))
    assert b == a
    assert b.to_spec() == spec


def _reference_run(spec: dict, word: list[str], start: str) -> list[str]:
    """Plain-Python δ straight from the JSON spec."""
    states, q, out = spec["states"], states_index(spec, start), []
    for x in word:
        q = spec["transitions"][x][q]
        out.append(states[q])
    return out


def states_index(spec: dict, name: str) -> int:
    return spec["states"].index(name)


@given(automata(), st.data())
def test_run_matches_reference(a, data):
    start = a.initial if a.initial is not None else 0
    word = data.draw(st.lists(st.sampled_from(a.symbols), max_size=20))
    got = a.decode_states(a.run(word, start=start))
    assert got == _reference_run(a.to_spec(), word, a.states[start])
    assert a.final_state(word, start=start) == (a.state_index(got[-1]) if word else start)


def test_batch_run_equals_single_runs():
    a = random_automaton(50, 3, seed=5)
    rng = np.random.default_rng(0)
    words = rng.integers(0, 3, size=(16, 40))
    batch = a.run(words)
    for w, row in zip(words, batch):
        assert np.array_equal(a.run(w), row)
    starts = rng.integers(0, 50, size=16)
    batch = a.run(words, start=starts)
    for w, s, row in zip(words, starts, batch):
        assert np.array_equal(a.run(w, start=int(s)), row)


def test_accepts_and_names():
    a = Automaton.from_spec(DESIGN_SPEC)
    assert a.accepts(["a", "a"]) and not a.accepts(["a"]) and a.accepts(["a", "b"])
    assert a.decode_states(a.run(["a", "b", "a"])) == ["q1", "q2", "q0"]
    with pytest.raises(UnknownSymbolError, match="'c'"):
        a.run(["a", "c"])
    with pytest.raises(SpecError, match="not a string"):
        a.run("ab")


def test_integer_states_and_defaults():
    a = Automaton.from_spec({"states": 3, "symbols": ["x"], "transitions": {"x": [1, 2, 0]}})
    assert a.states == ("0", "1", "2") and a.initial is None and a.accepting is None
    with pytest.raises(UnknownStateError, match="no initial state"):
        a.run(["x"])
    with pytest.raises(UnknownStateError, match="no accepting set"):
        Automaton([[0]], initial=0).accepts([])


def test_from_transformations_and_group_predicate():
    a = Automaton.from_transformations({"r": [1, 2, 0], "s": [1, 0, 2]}, initial=0)
    assert a.symbols == ("r", "s") and a.is_group_automaton
    b = Automaton.from_transformations([[1, 2, 0], [0, 0, 2]])
    assert not b.is_group_automaton and b.symbols == ("0", "1")


def test_save_load(tmp_path):
    a = random_automaton(20, 2, seed=1)
    path = tmp_path / "a.json"
    a.save(path)
    assert Automaton.load(path) == a
    assert json.loads(path.read_text())["format"] == "fsa2rnn.automaton/1"


def test_replace_and_equality():
    a = random_automaton(5, 2, seed=2)
    assert a.replace(name="other") == a  # names of automata do not matter for equality
    assert a.replace(initial=1) != a
    assert a.replace(accepting=None) != a
