"""At least 100 random automata (2–6 states): compiled Householder and diagonal models track Automaton.run."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cases import random_automaton
from helpers import check_gh_weights, diagonal_realizable
from hypothesis import given, settings
from hypothesis import strategies as st

from fsa2rnn.compiler import compile_diagonal, compile_householder
from fsa2rnn.fsa import Automaton, ConstructionError
from fsa2rnn.nn import load_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")

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
    # the cascade construction (Theorem 4) covers every non-group automaton
    assert all(m.construction == "cascade" for m, a in zip(models, automata) if not a.is_group_automaton)
    assert sum(not a.is_group_automaton for a in automata) >= 90
    for m in models:
        check_gh_weights(m)  # Proposition 1
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
    for m in models:
        check_gh_weights(m)
    _batch_check(models, automata)


def _diagonal_or_refused(a: Automaton, run: bool = True) -> str:
    """compile_diagonal's abelian constructions refuse exactly the automata whose groups are not all abelian
    (brute-force oracle); those go through construction 'series', refused only for a non-abelian simple factor."""
    realizable = diagonal_realizable(a.transitions, a.initial)
    try:
        m = compile_diagonal(a, construction="group" if a.is_group_automaton else "cascade")
    except ConstructionError as exc:
        assert not realizable, f"{a.name}: refused although every group is abelian: {exc}"
        assert "abelian" in str(exc) or "commut" in str(exc)
        try:
            m = compile_diagonal(a)
        except ConstructionError as exc2:
            assert "non-abelian simple composition factor" in str(exc2)
            return "refused"
        assert m.construction == "series" and m.summary["verified"]
        if run:
            _batch_check([m], [a], length=200)
        return "refused"
    assert realizable, f"{a.name}: compiled although a group is non-abelian"
    assert m.summary["verified"]
    lam = [np.abs(m.tensors[f"{e['name']}.lam_re"] + 1j * m.tensors[f"{e['name']}.lam_im"]) for e in m.header["layers"]]
    assert all(np.all(x <= 1 + 1e-12) for x in lam)  # Proposition 1 for diagonal A(x)
    if run:
        _batch_check([m], [a], length=200)
    return "compiled"


def test_random_automata_diagonal_or_refused():
    outcomes = [_diagonal_or_refused(_automaton(seed), run=seed % 5 == 0) for seed in SEEDS]
    assert set(outcomes) == {"refused", "compiled"}


@st.composite
def small_automata(draw):
    n = draw(st.integers(1, 5))
    k = draw(st.integers(1, 3))
    rows = draw(st.lists(st.lists(st.integers(0, n - 1), min_size=n, max_size=n), min_size=k, max_size=k))
    return Automaton(rows, initial=draw(st.integers(0, n - 1)))


@settings(max_examples=25)
@given(small_automata(), st.sampled_from(["householder", "diagonal"]))
def test_property_compiled_models_realize_random_automata(a, target):
    if target == "diagonal":
        _diagonal_or_refused(a)  # refused only for non-abelian groups (brute-force oracle)
        return
    m = compile_householder(a)
    assert m.summary["verified"]
    ids = np.random.default_rng(0).integers(0, a.n_symbols, size=(2, 200))
    got = load_model(m).predict_states(torch.from_numpy(ids)).numpy()
    assert np.array_equal(got, a.run(ids))
