"""At least 100 random automata (2–6 states): compiled Householder and diagonal models track Automaton.run."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cases import random_automaton
from fsa2rnn.compiler import compile_diagonal, compile_householder
from fsa2rnn.fsa import Automaton, ConstructionError
from fsa2rnn.nn import load_model
from hypothesis import given, settings
from hypothesis import strategies as st

SEEDS = range(110)


def _automaton(seed: int) -> Automaton:
    return random_automaton(2 + seed % 5, 1 + (seed // 5) % 3, seed)


def _batch_check(models, automata, length: int = 1000) -> None:
    for i, (m, a) in enumerate(zip(models, automata)):
        ids = np.random.default_rng(i).integers(0, a.n_symbols, size=(2, length))
        want = a.run(ids, start=np.full(2, m.initial))
        got = load_model(m).predict_states(torch.from_numpy(ids), scan="parallel").numpy()
        assert np.array_equal(got, want), a.name


def test_random_automata_householder():
    automata = [_automaton(s) for s in SEEDS]
    models = [compile_householder(a) for a in automata]
    assert all(m.summary["verified"] for m in models)
    constructions = {m.construction for m in models}
    assert "cascade" in constructions
    _batch_check(models, automata)


def test_random_permutation_automata():
    rng = np.random.default_rng(7)
    automata = []
    for s in range(30):
        n, k = 2 + s % 5, 1 + s % 3
        automata.append(Automaton([rng.permutation(n) for _ in range(k)], initial=0, name=f"perm-{s}"))
    models = [compile_householder(a) for a in automata]
    assert all(m.summary["verified"] for m in models)
    assert {"permutation", "rotation"} <= {m.construction for m in models}
    _batch_check(models, automata)


@pytest.mark.parametrize("seed", range(0, 110, 11))
def test_random_automata_diagonal_or_refused(seed):
    a = _automaton(seed)
    try:
        m = compile_diagonal(a)
    except ConstructionError as exc:
        assert "abelian" in str(exc) or "commut" in str(exc)
        return
    assert m.summary["verified"]
    _batch_check([m], [a])


@st.composite
def small_automata(draw):
    n = draw(st.integers(1, 5))
    k = draw(st.integers(1, 3))
    rows = draw(st.lists(st.lists(st.integers(0, n - 1), min_size=n, max_size=n), min_size=k, max_size=k))
    return Automaton(rows, initial=draw(st.integers(0, n - 1)))


@settings(max_examples=25)
@given(small_automata(), st.sampled_from(["householder", "diagonal"]))
def test_property_compiled_models_realize_random_automata(a, target):
    try:
        m = compile_householder(a) if target == "householder" else compile_diagonal(a)
    except ConstructionError as exc:  # only the diagonal target refuses, and only for non-abelian groups
        assert target == "diagonal" and ("abelian" in str(exc) or "commut" in str(exc))
        return
    assert m.summary["verified"]
    ids = np.random.default_rng(0).integers(0, a.n_symbols, size=(2, 200))
    got = load_model(m).predict_states(torch.from_numpy(ids)).numpy()
    assert np.array_equal(got, a.run(ids))
