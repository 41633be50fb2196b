"""Groups from their element tables (fsa/group_table.py) against sympy: orders, centres, derived series, abelian
invariants, the dihedral test, names and composition factors; describe_group with and without the tables."""

from __future__ import annotations

import numpy as np
import pytest
from sympy.combinatorics import Permutation, PermutationGroup
from sympy.combinatorics.group_constructs import DirectProduct
from sympy.combinatorics.named_groups import AlternatingGroup, CyclicGroup, DihedralGroup, SymmetricGroup

from fsa2rnn.fsa import groups
from fsa2rnn.fsa.group_table import GroupTable, enumerate_group, generates_symmetric, invariant_factors, prime_factors
from fsa2rnn.fsa.groups import composition_factors, describe_group, group_name

Q8 = PermutationGroup([Permutation([[0, 1, 2, 3], [4, 5, 6, 7]]), Permutation([[0, 4, 2, 6], [1, 7, 3, 5]])])
DIC12 = PermutationGroup([Permutation([[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]]),
                          Permutation([[0, 6, 3, 9], [1, 11, 4, 8], [2, 10, 5, 7]])])  # fmt: skip


def affine8(a: int) -> PermutationGroup:
    """{i ↦ a^e·i + b on Z8}: a = 7 the dihedral group D16, a = 3 the semidihedral and a = 5 the modular group of
    order 16 (an element of order 8 and involutions outside it, yet not dihedral)."""
    return PermutationGroup([Permutation([(i + 1) % 8 for i in range(8)]), Permutation([a * i % 8 for i in range(8)])])


def regular(G: PermutationGroup) -> PermutationGroup:
    elts = list(G.generate())
    idx = {e: i for i, e in enumerate(elts)}
    return PermutationGroup([Permutation([idx[e * g] for e in elts]) for g in G.generators])


NAMED = {
    "C1": PermutationGroup([Permutation([0, 1])]),
    "C12": CyclicGroup(12),
    "C2xC2xC2": DirectProduct(CyclicGroup(2), CyclicGroup(2), CyclicGroup(2)),
    "C2xC4": DirectProduct(CyclicGroup(2), CyclicGroup(4)),
    "C3xC6": DirectProduct(CyclicGroup(3), CyclicGroup(6)),
    "S3": SymmetricGroup(3),
    "S3xC2 (D12)": DirectProduct(SymmetricGroup(3), CyclicGroup(2)),
    "D8": DihedralGroup(4),
    "D8 regular": regular(DihedralGroup(4)),
    "D14": DihedralGroup(7),
    "Q8": Q8,
    "Dic12": DIC12,
    "A4": AlternatingGroup(4),
    "A4 regular": regular(AlternatingGroup(4)),
    "S4": SymmetricGroup(4),
    "S4 regular": regular(SymmetricGroup(4)),
    "S3xS3": DirectProduct(SymmetricGroup(3), SymmetricGroup(3)),
    "C2 wr C2": PermutationGroup([Permutation([1, 0, 2, 3]), Permutation([2, 3, 0, 1])]),
    "D16": affine8(7),
    "SD16": affine8(3),
    "M16": affine8(5),
}


def _table(G: PermutationGroup) -> GroupTable:
    gens = np.array([g.array_form + list(range(g.size, G.degree)) for g in G.generators])
    table = GroupTable.of(gens, 1 << 22)
    assert table is not None
    return table


@pytest.mark.parametrize("label", NAMED)
def test_invariants_equal_sympy(label):
    G = NAMED[label]
    T = _table(G)
    assert T.order() == G.order() and T.is_abelian == G.is_abelian and T.is_solvable == G.is_solvable
    assert T.center().order() == G.center().order()
    assert [H.order() for H in T.derived_series] == [H.order() for H in G.derived_series()][: len(T.derived_series)]
    assert T.is_dihedral == G.is_dihedral and T.is_cyclic == G.is_cyclic
    if G.is_abelian:
        assert T.abelian_invariants() == sorted(int(a) for a in G.abelian_invariants())
    assert group_name(T) == group_name(G) and composition_factors(T) == composition_factors(G)


@pytest.mark.parametrize("seed", range(40))
def test_random_subgroups_of_s7_named_as_sympy_names_them(seed):
    """Seeded random generators (permutations, products of a few cycles): the table's name, order, factors and
    solvability against sympy's; non-solvable ones are handed to sympy by group_name itself."""
    rng = np.random.default_rng(seed)
    d, k = int(rng.integers(3, 8)), int(rng.integers(1, 4))
    gens = []
    for _ in range(k):
        p = np.arange(d)
        pts = rng.choice(d, size=int(rng.integers(2, d + 1)), replace=False)
        p[pts] = np.roll(pts, 1) if rng.random() < 0.7 else rng.permutation(pts)
        gens.append(p)
    T = GroupTable.of(np.array(gens), 1 << 22)
    G = PermutationGroup([Permutation(list(map(int, g))) for g in gens])
    assert T.order() == G.order() and T.is_solvable == G.is_solvable
    assert group_name(T) == group_name(G) and composition_factors(T) == composition_factors(G)


def test_quotient_invariants_and_invariant_factors():
    """A/B for A = S4, B = A4 (C2), A = A4, B = V4 (C3), A = V4, B = 1 (C2 x C2); invariant factors d1 | d2 | …"""
    T = _table(SymmetricGroup(4))
    A4, V4 = T.derived_series[1], T.derived_series[2]
    assert (T.quotient_invariants(A4), A4.quotient_invariants(V4), V4.abelian_invariants()) == ([2], [3], [2, 2])
    assert invariant_factors([2, 2, 3, 4, 9]) == [2, 6, 36] and invariant_factors([]) == []
    assert prime_factors(720) == [(2, 4), (3, 2), (5, 1)] and prime_factors(1) == []


def test_generates_symmetric_is_a_sufficient_test():
    assert generates_symmetric(np.array([[1, 2, 3, 4, 0], [1, 0, 2, 3, 4]]), 5)  # (0 1 2 3 4), (0 1)
    assert generates_symmetric(np.array([[1, 0, 2, 3], [0, 2, 1, 3], [0, 1, 3, 2]]), 4)  # adjacent transpositions
    assert not generates_symmetric(np.array([[1, 2, 3, 0], [2, 1, 0, 3]]), 4)  # (0 1 2 3), (0 2): D8
    assert not generates_symmetric(np.array([[1, 2, 0, 3], [1, 0, 2, 3]]), 4)  # S3 on three of four points


@pytest.mark.parametrize("label", NAMED)
def test_describe_group_with_and_without_the_tables(label, monkeypatch):
    G = NAMED[label]
    gens = np.array([g.array_form + list(range(g.size, G.degree)) for g in G.generators])
    fast = describe_group(gens)
    monkeypatch.setattr(groups, "MAX_TABLE_CELLS", 0)
    groups._summary.cache_clear()
    slow = describe_group(gens)
    groups._summary.cache_clear()
    assert fast == slow


@pytest.mark.parametrize("label", NAMED)
def test_generating_subset_generates_the_group_greedily(label):
    """fsa.green's greedy generating subset (closures in the element table) against brute force: the subgroup
    generated by the chosen rows, enumerated, is the whole group, and each chosen row lies outside the subgroup
    generated by those before it."""
    from fsa2rnn.fsa.green import _generating_subset

    G = NAMED[label]
    gens = np.array([g.array_form + list(range(g.size, G.degree)) for g in G.generators])
    elements = enumerate_group(gens, 1 << 20)
    shuffled = elements[np.random.default_rng(len(label)).permutation(len(elements))]
    chosen = _generating_subset(shuffled)
    rows = lambda a: {tuple(map(int, r)) for r in a}  # noqa: E731
    assert rows(enumerate_group(chosen, 1 << 20)) == rows(elements)
    for i in range(1, len(chosen)):
        assert tuple(map(int, chosen[i])) not in rows(enumerate_group(chosen[:i], 1 << 20))
