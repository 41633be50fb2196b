"""Faithful permutation representations and abelian decompositions (fsa/permutation_rep.py)."""

from __future__ import annotations

import numpy as np
import pytest
from sympy.combinatorics import Permutation, PermutationGroup

from fsa2rnn.fsa import Automaton, NotAGroupError, resolve_spec
from fsa2rnn.fsa.permutation_rep import (
    abelian_characters,
    faithful_permutation_representation,
    noncommuting_pair,
)
from fsa2rnn.fsa.product import product


def _order(perms) -> int:
    return int(PermutationGroup([Permutation(list(map(int, r))) for r in perms]).order())


def _stripped(spec: str) -> Automaton:
    """The JSON spec of a builtin: the natural action (a hint of structure) is dropped."""
    return Automaton.from_spec(resolve_spec(spec).to_spec())


def test_natural_action_is_used():
    a = resolve_spec("M11")
    rep = faithful_permutation_representation(a)
    assert (rep.degree, rep.source) == (11, "natural action")
    assert _order(rep.perms) == 7920


def test_s5_word_problem_as_json_is_found_on_5_points():
    a = _stripped("S5")
    assert a.action is None and a.n_states == 120
    rep = faithful_permutation_representation(a)
    assert rep.degree == 5, rep.source
    assert "block system search" in rep.source
    # independent oracle: the representation generates a group of order 120 = |S5|, and ρ(g) determines g(q0)
    assert _order(rep.perms) == 120
    images, states = rep.elements(a, a.initial)
    assert len(images) == 120 and len(set(states.tolist())) == 120


@pytest.mark.parametrize(
    "spec,degree", [("S4:gens", 4), ("A5", 5), ("D5:gens", 5), ("PSL(2,7):gens", 7), ("Q8", 8), ("M11", 11)]
)
def test_search_finds_the_known_minimal_degrees(spec, degree):
    # minimal faithful degrees from the literature: S4 4, A5 5, D10 5, PSL(2,7) 7, Q8 8 (regular), M11 11
    a = _stripped(spec)
    rep = faithful_permutation_representation(a)
    assert rep.degree == degree
    assert _order(rep.perms) == a.n_states  # a faithful image of the regular action has |G| = |Q| elements


def test_permutation_automaton_uses_its_states_when_nothing_smaller_exists():
    # the 5-cycle and a transposition on 5 points: S5 acting naturally, no smaller faithful action
    a = Automaton([[1, 2, 3, 4, 0], [1, 0, 2, 3, 4]], initial=0)
    rep = faithful_permutation_representation(a)
    assert rep.degree == 5 and rep.source == "states"


def test_not_a_group():
    with pytest.raises(NotAGroupError, match="does not permute"):
        faithful_permutation_representation(resolve_spec("flipflop"))


@pytest.mark.parametrize("ms", [(2,), (6,), (2, 2), (2, 6), (4, 4), (3, 5), (2, 2, 2)])
def test_abelian_characters_match_the_invariant_factors(ms):
    gens = []
    offset = 0
    total = sum(ms)
    for m in ms:
        p = np.arange(total)
        p[offset : offset + m] = np.roll(np.arange(offset, offset + m), -1)
        gens.append(p)
        offset += m
    gens.append(np.array(gens[0])[gens[-1]])  # a redundant product as an extra symbol
    chars = abelian_characters(np.array(gens))
    G = PermutationGroup([Permutation(g.tolist()) for g in gens])
    # oracle: sympy's abelian invariants (prime-power form) multiply to the same order, the moduli chain divides
    assert int(np.prod(chars.moduli)) == int(G.order()) == len(chars.elements)
    assert all(b % a == 0 for a, b in zip(chars.moduli, chars.moduli[1:]))
    assert sorted(_prime_powers(chars.moduli)) == sorted(int(x) for x in G.abelian_invariants())
    # the character map is a bijection and a homomorphism on the generators
    assert len({tuple(e) for e in chars.element_exps.tolist()}) == len(chars.elements)
    lookup = {e.tobytes(): i for i, e in enumerate(chars.elements)}
    for x, g in enumerate(gens):
        for i, e in enumerate(chars.elements):
            prod = g[e]  # apply e, then g
            assert np.array_equal(
                chars.element_exps[lookup[prod.tobytes()]], (chars.element_exps[i] + chars.exps[x]) % chars.moduli
            )


def _prime_powers(moduli):
    from sympy import factorint

    return [p**e for m in moduli for p, e in factorint(int(m)).items()]


def test_noncommuting_pair():
    assert noncommuting_pair(np.array([[1, 0, 2], [0, 2, 1]])) == (0, 1)
    assert noncommuting_pair(resolve_spec("Z6:gen").transitions) is None


def test_synchronous_product_of_parities_is_one_c2():
    # the product reads one symbol in both factors: the transition group is the diagonal C2, not C2 x C2
    a = product(resolve_spec("parity"), resolve_spec("parity"))
    assert abelian_characters(a.transitions).moduli.tolist() == [2]
    klein = Automaton([[1, 0, 3, 2], [2, 3, 0, 1]], initial=0)
    assert abelian_characters(klein.transitions).moduli.tolist() == [2, 2]


@pytest.mark.parametrize("seed", range(8))
def test_minimal_block_matches_sympy(seed):
    from fsa2rnn.fsa.permutation_rep import minimal_block

    rng = np.random.default_rng(seed)
    # transitive imprimitive groups: wreath-like actions on n = blocks × size points, plus a random relabelling
    size, blocks = int(rng.integers(2, 4)), int(rng.integers(2, 4))
    n = size * blocks
    within = np.arange(n).reshape(blocks, size)
    g1 = np.roll(within, 1, axis=0).reshape(-1)  # permute the blocks cyclically
    g2 = np.arange(n)
    g2[:size] = np.roll(np.arange(size), 1)  # rotate inside the first block
    relabel = rng.permutation(n)
    inv = np.argsort(relabel)
    perms = np.array([relabel[g[inv]] for g in (g1, g2)])
    G = PermutationGroup([Permutation(p.tolist()) for p in perms])
    for pts in ([0, int(rng.integers(1, n))], [0, 1, 2]):
        ours = minimal_block(perms, np.array(pts))
        theirs = np.array(G.minimal_block(pts))
        # the same partition of the points (labels may differ)
        assert len(set(zip(ours.tolist(), theirs.tolist()))) == len(set(ours.tolist())) == len(set(theirs.tolist()))
