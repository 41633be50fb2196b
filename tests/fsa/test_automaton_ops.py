"""Automaton operations against brute force and automata-lib: reachable part, minimization, product, relabelling,
isomorphism, DOT export."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from cases import random_automaton
from hypothesis import given
from hypothesis import strategies as st

from fsa2rnn.fsa import Automaton, FsaError, LimitExceededError, SpecError, resolve_spec
from fsa2rnn.fsa.dot import graphviz_available, to_dot, write_dot
from fsa2rnn.fsa.minimize import is_minimal
from fsa2rnn.fsa.product import factor_states, product
from fsa2rnn.fsa.relabel import isomorphism, renumber


def _reachable_brute(a: Automaton) -> set[int]:
    seen, todo = {a.initial}, [a.initial]
    while todo:
        q = todo.pop()
        for x in range(a.n_symbols):
            r = int(a.transitions[x, q])
            if r not in seen:
                seen.add(r)
                todo.append(r)
    return seen


def _language(a: Automaton, length: int) -> list[bool]:
    """Acceptance of every word up to ``length`` (in a fixed order of symbol names)."""
    out = []
    for n in range(length + 1):
        for w in itertools.product(sorted(a.symbols), repeat=n):
            out.append(a.accepts(list(w)))
    return out


@given(st.integers(1, 40), st.integers(1, 3), st.integers(0, 10_000))
def test_reachable_part(n, k, seed):
    a = random_automaton(n, k, seed, p_accept=0.3)
    r = a.reachable()
    names = {a.states[q] for q in _reachable_brute(a)}
    assert set(r.states) == names
    assert [s for s in a.states if s in names] == list(r.states)  # relative order kept
    assert r.states[r.initial] == a.states[a.initial]
    for x in range(k):
        for q, name in enumerate(r.states):
            assert r.states[r.transitions[x, q]] == a.states[a.transitions[x, a.state_index(name)]]


@given(st.integers(1, 25), st.integers(1, 3), st.integers(0, 10_000))
def test_minimize_agrees_with_automata_lib(n, k, seed):
    a = random_automaton(n, k, seed)
    m = a.minimize()
    reference = a.to_dfa().minify()
    assert m.n_states == len(reference.states)
    assert m.to_dfa() == reference  # automata-lib's == is language equivalence
    assert m.is_isomorphic(Automaton.from_dfa(reference))


@pytest.mark.parametrize("seed", range(6))
def test_minimize_preserves_language_brute_force(seed):
    a = random_automaton(12, 2, seed, p_accept=0.5)
    m = a.minimize()
    assert _language(m, 7) == _language(a, 7)
    assert is_minimal(m) and m.minimize() == m


def test_minimize_merges_known_equivalent_states():
    # parity unrolled twice: e1 -1-> o1 -1-> e2 -1-> o2 -1-> e1, "0" loops; the minimal DFA is parity itself
    a = Automaton([[0, 1, 2, 3], [1, 2, 3, 0]], states=["e1", "o1", "e2", "o2"], initial="e1", accepting=["o1", "o2"])
    m = a.minimize()
    assert m.states == ("e1", "o1") and m.accepting_states == (1,)
    assert m.transitions.tolist() == [[0, 1], [1, 0]]


def test_minimize_semiautomaton_is_reachable_part():
    a = Automaton([[1, 0, 2]], initial=0)  # state 2 unreachable, no accepting set
    assert a.minimize() == a.reachable()
    assert a.minimize().n_states == 2
    b = Automaton([[1, 0, 2]])  # no initial state: nothing to do
    assert b.minimize() is b


def test_minimize_returns_a_reachable_word_problem_unchanged():
    s3 = resolve_spec("S3")
    assert s3.minimize() is s3  # semiautomaton, all reachable


def test_product_against_brute_force():
    a = resolve_spec("parity")
    b = Automaton([[0, 1, 2], [1, 2, 0]], states=["p0", "p1", "p2"], symbols=["0", "1"], initial=0, accepting=[2])
    p = product(a, b)
    assert p.n_states == 6 and p.factors == (a, b)
    assert p.states[0] == "(even,p0)" and p.states[5] == "(odd,p2)"
    for x, sym in enumerate(p.symbols):
        for i, j in itertools.product(range(2), range(3)):
            q = 3 * i + j
            r = p.transitions[x, q]
            assert r == 3 * a.transitions[x, i] + b.transitions[b.symbol_index(sym), j]
    assert np.array_equal(factor_states(p, np.arange(6)), [[i, j] for i in range(2) for j in range(3)])
    assert p.accepting_states == (5,)  # odd and p2
    assert product(a, b, accept="any").accepting_states == (2, 3, 4, 5)
    rng = np.random.default_rng(0)
    for w in rng.integers(0, 2, size=(20, 15)):
        assert p.accepts(w) == (a.accepts(w) and b.accepts(w))


def test_product_aligns_symbols_by_name_and_keeps_actions():
    z2, z3 = resolve_spec("Z2"), resolve_spec("Z3")
    with pytest.raises(SpecError, match="different alphabet"):
        product(z2, z3)
    f = resolve_spec("flipflop")
    g = f.replace(transitions=f.transitions[[2, 0, 1]], symbols=["read", "set", "reset"])
    p = product(f, g)
    assert p.states[p.final_state(["set", "read"])] == "(1,1)"
    c5, c5b = resolve_spec("cycle_nav"), resolve_spec("cycle_nav")
    q = product(c5, c5b)
    assert q.action.shape == (3, 10)
    with pytest.raises(LimitExceededError, match="25 states.*limit of 10"):
        product(c5, c5b, limit=10)


def test_relabel_and_renumber_give_isomorphic_automata():
    a = random_automaton(15, 3, seed=7)
    b = a.relabel(states=lambda s: s.upper(), symbols={"a": "A"})
    assert b.symbols[0] == "A" and b.states[0] == "Q0"
    assert not a.is_isomorphic(b)  # symbols are matched by name
    c = a.relabel(states=[f"r{i}" for i in range(15)])
    assert a.is_isomorphic(c)
    perm = np.random.default_rng(1).permutation(15)
    d = renumber(a, perm)
    phi = isomorphism(a, d)
    assert phi is not None
    for x in range(3):
        assert np.array_equal(phi[a.transitions[x]], d.transitions[x][phi])
    assert d.states[phi[0]] == a.states[0]


def _isomorphic_brute(a: Automaton, b: Automaton) -> bool:
    return any(
        np.array_equal(np.asarray(p)[a.transitions], b.transitions[:, np.asarray(p)])
        for p in itertools.permutations(range(a.n_states))
    )


@pytest.mark.parametrize("seed", range(8))
def test_isomorphism_without_initial_state_matches_brute_force(seed):
    """No initial state: the networkx VF2 path, against trying all 6! bijections."""
    rng = np.random.default_rng(seed)
    a = random_automaton(6, 2, seed=seed, initial=False, accepting=False)
    b = renumber(a, rng.permutation(6))
    if seed % 2:  # perturb one arrow: sometimes still isomorphic, usually not
        t = b.transitions.copy()
        t[0, 0] = (t[0, 0] + 1) % 6
        b = b.replace(transitions=t)
    phi = isomorphism(a, b)
    assert (phi is not None) == _isomorphic_brute(a, b)
    if phi is not None:
        assert np.array_equal(phi[a.transitions], b.transitions[:, phi])


def test_isomorphism_respects_accepting_and_initial():
    a = resolve_spec("even_pairs")
    assert a.is_isomorphic(renumber(a, [4, 3, 2, 1, 0]))
    assert not a.is_isomorphic(a.replace(accepting=["ab"]))
    assert not a.is_isomorphic(a.replace(initial="aa"))


def test_dot_export(tmp_path):
    a = resolve_spec("regex:(ab)*")
    src = to_dot(a)
    assert src.startswith("digraph") and src.count("->") == 1 + 5  # start arrow + distinct (source, target) pairs
    assert "doublecircle" in src
    path = tmp_path / "a.dot"
    write_dot(src, path)
    assert path.read_text() == src
    with pytest.raises(LimitExceededError, match="7920"):
        to_dot(resolve_spec("M11"))


def test_dot_rendering(tmp_path):
    target = tmp_path / "a.svg"
    if graphviz_available():
        write_dot(to_dot(resolve_spec("parity")), target)
        assert target.read_text().lstrip().startswith("<")
    else:
        with pytest.raises(FsaError, match="Graphviz"):
            write_dot(to_dot(resolve_spec("parity")), target)
        assert list(tmp_path.iterdir()) == []  # no partial file


@pytest.mark.parametrize("rounds", [0, 1])
@pytest.mark.parametrize("seed", range(10))
def test_hopcroft_finish_agrees_with_automata_lib(monkeypatch, rounds, seed):
    """Force the Hopcroft path (after 0 or 1 Moore rounds), on random DFAs and on cycles with long
    distinguishing words."""
    import fsa2rnn.fsa.minimize as minimize_module

    monkeypatch.setattr(minimize_module, "MOORE_ROUNDS", rounds)
    a = random_automaton(30, 2, seed)
    if seed % 2:
        q = np.arange(30)
        a = a.replace(transitions=np.stack([(q + 1) % 30, a.transitions[1]]), accepting=[0, 7 + seed])
    m = a.minimize()
    reference = a.to_dfa().minify()
    assert m.n_states == len(reference.states) and m.to_dfa() == reference


@given(st.integers(1, 8), st.integers(1, 8), st.integers(0, 10_000))
def test_product_is_language_intersection_and_union(n1, n2, seed):
    a = random_automaton(n1, 2, seed)
    b = random_automaton(n2, 2, seed + 1)
    both, either = product(a, b), product(a, b, accept="any")
    words = np.random.default_rng(seed).integers(0, 2, size=(20, 12))
    for w in words:
        assert both.accepts(w) == (a.accepts(w) and b.accepts(w))
        assert either.accepts(w) == (a.accepts(w) or b.accepts(w))
    digits = factor_states(both, both.run(words))
    assert np.array_equal(digits[..., 0], a.run(words)) and np.array_equal(digits[..., 1], b.run(words))


def test_relabel_and_renumber_errors():
    a = resolve_spec("parity")
    with pytest.raises(SpecError, match="unknown state 'nope'"):
        a.relabel(states={"nope": "x"})
    with pytest.raises(SpecError, match="got 3 state names for 2 states"):
        a.relabel(states=["a", "b", "c"])
    with pytest.raises(SpecError, match="duplicate name"):
        a.relabel(states=["a", "a"])
    with pytest.raises(SpecError, match="permutation of 0..1"):
        renumber(a, [0, 0])
