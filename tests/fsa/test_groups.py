"""Group names and composition factors against sympy's named groups, including non-natural (regular) actions."""

from __future__ import annotations

import pytest
from sympy.combinatorics import Permutation, PermutationGroup
from sympy.combinatorics.group_constructs import DirectProduct
from sympy.combinatorics.named_groups import AlternatingGroup, CyclicGroup, DihedralGroup, SymmetricGroup

from fsa2rnn.fsa.errors import LimitExceededError
from fsa2rnn.fsa.groups import (
    composition_factors,
    group_name,
    is_simple,
    is_solvable,
    permutation_group,
    smaller_faithful_action,
)

M11 = PermutationGroup([Permutation(list(range(1, 11)) + [0]), Permutation([[2, 6, 10, 7], [3, 9, 4, 5]], size=11)])
PSL27 = PermutationGroup(
    [
        Permutation([[0, 1, 2, 3, 4, 5, 6]]),
        Permutation([[1, 2, 4], [3, 6, 5]], size=7),
        Permutation([[0, 1], [2, 5]], size=7),
    ]
)
Q8 = PermutationGroup([Permutation([[0, 1, 2, 3], [4, 5, 6, 7]]), Permutation([[0, 4, 2, 6], [1, 7, 3, 5]])])


def regular(G: PermutationGroup) -> PermutationGroup:
    """The right regular action of G on its own elements."""
    elts = list(G.generate())
    idx = {e: i for i, e in enumerate(elts)}
    return PermutationGroup([Permutation([idx[e * g] for e in elts]) for g in G.generators])


CASES = [
    ("trivial", PermutationGroup([Permutation([0, 1])]), "C1", [], True),
    ("C6", CyclicGroup(6), "C6", ["C2", "C3"], True),
    ("C2xC2", DirectProduct(CyclicGroup(2), CyclicGroup(2)), "C2 x C2", ["C2", "C2"], True),
    ("C2xC6", DirectProduct(CyclicGroup(2), CyclicGroup(6)), "C2 x C6", ["C2", "C2", "C3"], True),
    ("S3", SymmetricGroup(3), "S3", ["C2", "C3"], True),
    ("S3 regular", regular(SymmetricGroup(3)), "S3", ["C2", "C3"], True),
    ("A4", AlternatingGroup(4), "A4", ["C2", "C2", "C3"], True),
    ("S4", SymmetricGroup(4), "S4", ["C2", "C2", "C2", "C3"], True),
    ("D10", DihedralGroup(5), "D10", ["C2", "C5"], True),
    ("D8", DihedralGroup(4), "D8", ["C2", "C2", "C2"], True),
    ("Q8", Q8, "Q8", ["C2", "C2", "C2"], True),
    ("A5", AlternatingGroup(5), "A5", ["A5"], False),
    ("S5", SymmetricGroup(5), "S5", ["A5", "C2"], False),
    ("S5 regular", regular(SymmetricGroup(5)), "S5", ["A5", "C2"], False),
    ("PSL(2,7)", PSL27, "PSL(2,7)", ["PSL(2,7)"], False),
    ("M11", M11, "M11", ["M11"], False),
    ("A5xA5", DirectProduct(AlternatingGroup(5), AlternatingGroup(5)), "order 3600", ["A5", "A5"], False),
    ("A5xC2", DirectProduct(AlternatingGroup(5), CyclicGroup(2)), "order 120", ["A5", "C2"], False),
    ("S6", SymmetricGroup(6), "S6", ["A6", "C2"], False),
    ("A8", AlternatingGroup(8), "A8", ["A8"], False),
    ("S9", SymmetricGroup(9), "S9", ["A9", "C2"], False),
]


@pytest.mark.parametrize("label, G, name, factors, solvable", CASES, ids=[c[0] for c in CASES])
def test_name_and_composition_factors(label, G, name, factors, solvable):
    assert group_name(G) == name
    fac = composition_factors(G)
    assert sorted(fac) == sorted(factors)
    assert is_solvable(G) == solvable
    assert is_simple(G) == (len(factors) == 1)
    # the product of the factors' orders is the group's order
    orders = {"A5": 60, "A6": 360, "A8": 20160, "A9": 181440, "PSL(2,7)": 168, "M11": 7920}
    prod = 1
    for f in fac:
        prod *= orders[f] if f in orders else int(f[1:])
    assert prod == G.order()


def test_smaller_faithful_action_of_regular_m11():
    R = regular(M11)
    H = smaller_faithful_action(R, order=7920)
    assert H.degree < 100 and H.order() == 7920
    assert group_name(H) == "M11"


def test_permutation_group_from_arrays():
    G = permutation_group([[1, 2, 0], [1, 0, 2]])
    assert G.order() == 6 and group_name(G) == "S3"
    assert group_name(permutation_group([], degree=3)) == "C1"
    with pytest.raises(ValueError):
        permutation_group([[0, 0, 1]])


def test_large_non_solvable_group_beyond_the_exhaustive_limit_is_refused():
    """PSL(2,79) on the projective line (primitive, simple, order 246,480); A5^4 (order 12,960,000) is split by
    its orbits instead."""
    p = 79
    shift = Permutation([(x + 1) % p for x in range(p)] + [p])
    inv = Permutation([p] + [(-pow(x, -1, p)) % p for x in range(1, p)] + [0])
    with pytest.raises(LimitExceededError, match="200,000"):
        composition_factors(PermutationGroup([shift, inv]))
    G = DirectProduct(AlternatingGroup(5), AlternatingGroup(5), AlternatingGroup(5), AlternatingGroup(5))
    assert composition_factors(G) == ["A5"] * 4
