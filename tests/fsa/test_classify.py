"""Classification (group, aperiodic, commutative, definite with its degree) against brute force over all words up to
a length bound, on seeded random automata and on hand-built definite ones; the syntactic monoid."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from cases import random_automaton

from fsa2rnn.fsa import Automaton, resolve_spec
from fsa2rnn.fsa.classify import (
    classify,
    definite_degree,
    is_aperiodic,
    is_commutative,
    is_group,
    is_solvable,
    syntactic_monoid,
)
from fsa2rnn.fsa.monoid import TransitionMonoid


def _levels(a: Automaton, bound: int) -> list[set[tuple[int, ...]]]:
    """Brute force: the set of δ_w over all words w of length L, for L = 0..bound (every word enumerated)."""
    g = a.transitions
    out = []
    for L in range(bound + 1):
        level = set()
        for w in itertools.product(range(a.n_symbols), repeat=L):
            t = np.arange(a.n_states)
            for x in w:
                t = g[x][t]
            level.add(tuple(int(v) for v in t))
        out.append(level)
    return out


def _brute(a: Automaton, bound: int) -> dict:
    levels = _levels(a, bound)
    elements = set().union(*levels)
    constant = [all(len(set(t)) == 1 for t in lv) for lv in levels]
    # definite of degree k: all words of length ≥ k constant (checked up to the bound)
    degree = next((k for k in range(bound + 1) if all(constant[k:])), None)

    def period(t):
        seen, p, i = {}, tuple(t), 0
        while p not in seen:
            seen[p] = i
            p, i = tuple(np.asarray(t)[list(p)]), i + 1
        return i - seen[p]

    return {
        "is_group": all(sorted(t) == list(range(a.n_states)) for t in elements),
        "is_aperiodic": all(period(t) == 1 for t in elements),
        "is_commutative": all(
            tuple(np.asarray(t)[list(s)]) == tuple(np.asarray(s)[list(t)]) for s in elements for t in elements
        ),
        "definite_degree": degree,
        "complete": levels[-1] <= set().union(*levels[:-1]),  # no new element at the last length
    }


def _cases():
    for seed in range(40):
        n, k = 2 + seed % 3, 1 + (seed // 3) % 2
        yield random_automaton(n, k, 300 + seed)
    # definite by construction: the last two symbols (states = pairs), a delayed reset, and a constant map
    yield Automaton([[0, 0, 1, 1], [2, 2, 3, 3]], name="last-two")
    yield Automaton([[1, 2, 2], [1, 2, 2]], name="delay")
    yield Automaton([[0, 0, 0]], name="constant")
    yield Automaton([[0]], name="one state")


@pytest.mark.parametrize("a", list(_cases()), ids=lambda a: a.name)
def test_classification_agrees_with_brute_force(a):
    bound = 8 if a.n_symbols == 1 else 7
    brute = _brute(a, bound)
    M = TransitionMonoid(a)
    assert is_group(M) == brute["is_group"]
    assert is_commutative(M) == brute["is_commutative"]
    if brute["complete"]:  # every element has a word of length ≤ bound: the brute-force verdicts are exact
        assert len(set().union(*_levels(a, bound))) == M.size
        assert is_aperiodic(M) == brute["is_aperiodic"]
    k = definite_degree(M)
    if k is not None and k <= bound:
        assert brute["definite_degree"] == k
    elif k is None:
        # not definite: non-constant words at every length, in particular at the bound
        assert brute["definite_degree"] is None
    else:  # degree beyond the bound: words of length bound are not all constant
        assert brute["definite_degree"] is None


def test_definite_examples():
    assert definite_degree(TransitionMonoid(Automaton([[0, 0, 1, 1], [2, 2, 3, 3]]))) == 2
    assert definite_degree(TransitionMonoid(Automaton([[0]]))) == 0
    assert definite_degree(TransitionMonoid(resolve_spec("parity"))) is None
    assert definite_degree(TransitionMonoid(resolve_spec("flipflop"))) is None  # "read" keeps the state forever


def test_named_automata():
    c = classify(TransitionMonoid(resolve_spec("flipflop")))
    assert c["is_aperiodic"] and not c["is_group"] and not c["is_definite"]
    c = classify(TransitionMonoid(resolve_spec("Z3")))
    assert c["is_group"] and c["is_commutative"] and not c["is_aperiodic"] and c["is_solvable"]
    assert not is_solvable(TransitionMonoid(resolve_spec("A5")))
    assert not is_solvable(TransitionMonoid(resolve_spec("T5")))  # contains S5
    assert is_solvable(TransitionMonoid(resolve_spec("T4")))


def test_syntactic_monoid_of_ab_star():
    # (ab)*: syntactic monoid {1, a, b, ab, ba, 0} (6 elements), aperiodic
    M = syntactic_monoid(resolve_spec("regex:(ab)*"))
    assert M.size == 6
    assert is_aperiodic(M)
    # (aa)*: the syntactic monoid is the cyclic group of order 2 on the minimal DFA
    M = syntactic_monoid(resolve_spec("regex:(aa)*"))
    assert M.size == 2 and is_group(M) and not is_aperiodic(M)
