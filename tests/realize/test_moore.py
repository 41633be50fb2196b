"""Output-labelled machines: Moore minimization, label-preserving isomorphism and homomorphism, each against brute
force (all words up to the length that separates any two states, all state bijections)."""

import itertools

import numpy as np
import pytest
from cases import random_automaton

from fsa2rnn.fsa.automaton import Automaton
from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.fsa.minimize import minimize, moore_classes, moore_minimize
from fsa2rnn.fsa.reachable import bfs_order
from fsa2rnn.fsa.relabel import homomorphism, isomorphism, renumber


def _outputs(a: Automaton, labels, state: int, n_words: int) -> tuple:
    """Brute force: the labels after every word of length ≤ n − 1 from ``state`` (enough to separate any two
    inequivalent states of an n-state machine), words in length-lexicographic order."""
    out = []
    for m in range(n_words):
        for word in itertools.product(range(a.n_symbols), repeat=m):
            q = state
            for x in word:
                q = int(a.transitions[x, q])
            out.append(int(labels[q]))
    return tuple(out)


def _brute_partition(a: Automaton, labels) -> list[frozenset]:
    sig = [_outputs(a, labels, q, a.n_states) for q in range(a.n_states)]
    blocks: dict[tuple, set] = {}
    for q, s in enumerate(sig):
        blocks.setdefault(s, set()).add(q)
    return sorted(frozenset(b) for b in blocks.values())


def _partition(cls) -> list[frozenset]:
    blocks: dict[int, set] = {}
    for q, c in enumerate(cls.tolist()):
        blocks.setdefault(c, set()).add(q)
    return sorted(frozenset(b) for b in blocks.values())


@pytest.mark.parametrize("seed", range(40))
def test_moore_classes_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 7)), int(rng.integers(1, 4))
    a = random_automaton(n, k, seed, accepting=False)
    labels = rng.integers(0, int(rng.integers(1, 4)), n)
    assert _partition(moore_classes(a, labels)) == _brute_partition(a, labels)


@pytest.mark.parametrize("seed", range(30))
def test_moore_minimize_is_minimal_and_equivalent(seed):
    rng = np.random.default_rng(100 + seed)
    n, k = int(rng.integers(2, 8)), int(rng.integers(1, 4))
    a = random_automaton(n, k, 100 + seed, accepting=False)
    labels = rng.integers(0, 3, n)
    m, mlab = moore_minimize(a, labels)
    reach = bfs_order(a).tolist()
    distinct = {_outputs(a, labels, q, n) for q in reach}
    assert m.n_states == len(distinct)  # one state per behaviour of a reachable state
    words = rng.integers(0, k, (50, 20))
    assert np.array_equal(mlab[m.run(words)], labels[a.run(words)])  # same outputs on every word
    assert mlab[m.initial] == labels[a.initial]
    again, lab2 = moore_minimize(m, mlab)
    assert isomorphism(again, m, labels=(lab2, mlab)) is not None


def test_moore_minimize_with_accepting_labels_is_the_minimal_dfa():
    """Labels = the accepting bit: the Moore quotient is the minimal DFA (the language minimizer as oracle)."""
    for seed in range(20):
        a = random_automaton(6, 2, 300 + seed)
        m, lab = moore_minimize(a, a.accepting.astype(int))
        dfa = minimize(a)
        assert isomorphism(m.replace(accepting=np.flatnonzero(lab).tolist()), dfa) is not None


def _parity_clusters() -> tuple[Automaton, np.ndarray]:
    """A 7-cluster machine that refines parity: clusters 0..3 are even, 4..6 odd; 0 is the start."""
    parity = np.array([0, 0, 0, 0, 1, 1, 1])
    rng = np.random.default_rng(7)
    even, odd = np.flatnonzero(parity == 0), np.flatnonzero(parity == 1)
    table = np.empty((2, 7), dtype=np.int64)
    for c in range(7):
        same, other = (even, odd) if parity[c] == 0 else (odd, even)
        table[0, c] = rng.choice(same)
        table[1, c] = rng.choice(other)
    return Automaton(table, symbols=["0", "1"], initial=0), parity


def test_seven_parity_clusters_minimize_to_parity():
    clusters, labels = _parity_clusters()
    m, lab = moore_minimize(clusters, labels)
    assert m.n_states == 2
    target = Automaton([[0, 1], [1, 0]], states=["even", "odd"], symbols=["0", "1"], initial=0)
    assert isomorphism(m, target, labels=(lab, np.array([0, 1]))) is not None
    assert isomorphism(m, target, labels=(lab, np.array([1, 0]))) is None  # swapped labels
    assert isomorphism(m, target) is not None  # the same structure


def _brute_isomorphic(a, la, b, lb) -> bool:
    if a.n_states != b.n_states:
        return False
    tb = b.transitions
    for perm in itertools.permutations(range(a.n_states)):
        p = np.array(perm)
        if p[a.initial] != b.initial or not np.array_equal(lb[p], la):
            continue
        if np.array_equal(p[a.transitions], tb[:, p]):
            return True
    return False


@pytest.mark.parametrize("seed", range(25))
def test_labelled_isomorphism_matches_brute_force(seed):
    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(2, 6))
    a = random_automaton(n, 2, 500 + seed, accepting=False)
    la = rng.integers(0, 2, n)
    order = rng.permutation(n)
    b = renumber(a, order)  # new state i is old state order[i]
    lb = la[order].copy()
    if seed % 2:  # sometimes change one label
        lb[int(rng.integers(n))] ^= 1
    phi = isomorphism(a, b, labels=(la, lb))
    assert (phi is not None) == _brute_isomorphic(a, la, b, lb)
    if phi is not None:
        assert np.array_equal(lb[phi], la) and np.array_equal(phi[a.transitions], b.transitions[:, phi])


def test_labelled_isomorphism_without_initial_states_uses_vf2():
    a = Automaton([[1, 2, 0]], initial=None)
    b = Automaton([[2, 0, 1]], initial=None)
    assert isomorphism(a, b, labels=([0, 0, 1], [0, 1, 0])) is not None
    assert isomorphism(a, b, labels=([0, 0, 1], [1, 1, 1])) is None


def _run(a: Automaton, word) -> int:
    return int(a.run(np.array(word, dtype=np.int64))[-1]) if len(word) else int(a.initial)


@pytest.mark.parametrize("seed", range(20))
def test_homomorphism_of_a_product_onto_its_factor(seed):
    """a × c maps onto a (the projection); a onto a × c does not when c adds a reachable distinction."""
    rng = np.random.default_rng(700 + seed)
    a = random_automaton(int(rng.integers(2, 5)), 2, 700 + seed, accepting=False)
    c = random_automaton(int(rng.integers(2, 4)), 2, 800 + seed, accepting=False)
    prod = a.product(c)
    phi, witness = homomorphism(prod, a)
    assert witness is None
    words = rng.integers(0, 2, (100, 12))
    assert np.array_equal(phi[prod.run(words)], a.run(words))  # φ(δ_w(q0)) = δ_w(q0)
    back, wit = homomorphism(a, prod)
    if prod.reachable().n_states > a.reachable().n_states:
        assert back is None and wit.kind == "states"
        w1, w2 = wit.words
        assert _run(a, w1) == _run(a, w2) and _run(prod, w1) != _run(prod, w2)  # checked by running both
    else:
        assert wit is None


def test_homomorphism_output_witness_and_errors():
    a = Automaton([[1, 0]], symbols=["x"], initial=0)
    phi, wit = homomorphism(a, a, labels=([0, 1], [0, 1]))
    assert wit is None and phi.tolist() == [0, 1]
    phi, wit = homomorphism(a, a, labels=([0, 1], [0, 0]))
    assert phi is None and wit.kind == "output" and wit.words == ((0,),)
    with pytest.raises(SpecError):
        homomorphism(a, Automaton([[0]], symbols=["y"], initial=0))
    with pytest.raises(SpecError):
        moore_minimize(a, [0])
