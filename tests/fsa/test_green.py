"""Green's relations and maximal subgroups: the published counts for T_3..T_5, subgroup orders and composition factors
of word problems (S5, A5, D5, Q8, M11, PSL(2,7)) and of T_4, and the definitions checked directly on small monoids."""

from __future__ import annotations

import numpy as np
import pytest
from cases import random_automaton

from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.monoid import TransitionMonoid, full_transformation_generators


@pytest.mark.parametrize(
    "n, D, L, R, H", [(3, 3, 7, 5, 13), (4, 4, 15, 15, 71), (5, 5, 31, 52, 456)], ids=["T3", "T4", "T5"]
)
def test_green_counts_of_full_transformation_monoids(n, D, L, R, H):
    M = TransitionMonoid(full_transformation_generators(n))
    assert (M.number_of_D_classes, M.number_of_L_classes, M.number_of_R_classes, M.number_of_H_classes) == (D, L, R, H)
    assert M.green.number_of_regular_D_classes == n  # T_n is regular: one D-class per rank
    assert all(M.is_regular_element(i) for i in range(0, M.size, 17))


def test_t4_maximal_subgroups_one_per_d_class():
    M = TransitionMonoid(resolve_spec("T4"))
    subs = M.green.maximal_subgroups
    assert [h.order for h in subs] == [24, 6, 2, 1]
    assert [h.name for h in subs] == ["S4", "S3", "C2", "C1"]
    assert [h.rank for h in subs] == [4, 3, 2, 1]
    assert sorted(subs[0].composition_factors) == ["C2", "C2", "C2", "C3"]


@pytest.mark.parametrize(
    "spec, order, name, factors, solvable",
    [
        ("S5", 120, "S5", ["A5", "C2"], False),
        ("A5", 60, "A5", ["A5"], False),
        ("D5:gens", 10, "D10", ["C2", "C5"], True),
        ("Q8", 8, "Q8", ["C2", "C2", "C2"], True),
        ("PSL(2,7):gens", 168, "PSL(2,7)", ["PSL(2,7)"], False),
        ("M11", 7920, "M11", ["M11"], False),
    ],
)
def test_word_problem_maximal_subgroup(spec, order, name, factors, solvable):
    M = TransitionMonoid(resolve_spec(spec))
    (h,) = M.green.maximal_subgroups  # a group has one D-class
    assert M.size == h.order == order
    assert h.name == name
    assert sorted(h.composition_factors) == sorted(factors)
    assert h.is_solvable == solvable


@pytest.mark.parametrize("spec, order, name", [("A5:gens", 60, "A5"), ("M11", 7920, "M11")])
def test_word_problem_without_natural_action_uses_image_action(spec, order, name):
    """Drop the builtin's natural action: the subgroup is then the group of units acting regularly on the states,
    reduced to a small faithful action before it is named."""
    a = resolve_spec(spec)
    bare = type(a)(a.transitions, states=a.states, symbols=a.symbols)
    (h,) = TransitionMonoid(bare).green.maximal_subgroups
    assert (h.order, h.name, h.composition_factors) == (order, name, [name])
    assert h.group.order() == order


@pytest.mark.parametrize("seed", range(8))
def test_green_relations_by_definition(seed):
    """s R t ⇔ sM = tM, s L t ⇔ Ms = Mt, D = J ⇔ MsM = MtM, computed from the multiplication table."""
    a = random_automaton(3 + seed % 2, 2, 50 + seed)
    M = TransitionMonoid(a)
    if M.size > 400:
        M = TransitionMonoid(a.transitions[:1])
    T = M.multiplication_table()
    right = [frozenset(T[s]) for s in range(M.size)]  # sM
    left = [frozenset(T[:, s]) for s in range(M.size)]  # Ms
    two = [frozenset(T[T[:, s]].ravel()) for s in range(M.size)]  # MsM
    G = M.green
    for s in range(M.size):
        for t in range(M.size):
            assert (G.R[s] == G.R[t]) == (right[s] == right[t])
            assert (G.L[s] == G.L[t]) == (left[s] == left[t])
            assert (G.D[s] == G.D[t]) == (two[s] == two[t])
            assert (G.H[s] == G.H[t]) == (right[s] == right[t] and left[s] == left[t])
    # maximal subgroups: the H-class of the idempotent, closed under the product, acting bijectively on the image
    for h in G.maximal_subgroups:
        elems = set(h.elements.tolist())
        assert {int(T[s, t]) for s in elems for t in elems} == elems
        assert len({tuple(p) for p in h.permutations}) == h.order
        assert h.is_abelian == all(int(T[s, t]) == int(T[t, s]) for s in elems for t in elems)
        assert h.group.order() == h.order
        assert np.array_equal(M.elements[h.idempotent][M.elements[h.idempotent]], M.elements[h.idempotent])


def _our_d_class_profile(M: TransitionMonoid) -> list[tuple]:
    G = M.green
    idem = M.idempotent_mask
    out = []
    for d, members in enumerate(G.D_classes()):
        h_size = int(np.sum(G.H == G.H[members[0]]))
        out.append(
            (
                len(members),
                len(np.unique(G.L[members])),
                len(np.unique(G.R[members])),
                h_size,
                bool(G.regular_D_mask[d]),
                int(idem[members].sum()),
            )
        )
    return sorted(out)


@pytest.mark.parametrize("seed", range(40))
def test_d_class_profiles_and_subgroup_orders_match_libsemigroups(seed):
    """Per D-class: size, L and R classes, H-class size, regularity, idempotents — against Konieczny's D-classes;
    and the maximal subgroups' orders are the H-class sizes of the regular D-classes."""
    ls = pytest.importorskip("libsemigroups_pybind11")
    guard = ls.ReportGuard(False)  # noqa: F841
    rng = np.random.default_rng(5000 + seed)
    n, k = int(rng.integers(2, 7)), int(rng.integers(1, 4))
    gens = rng.integers(0, n, size=(k, n))
    M = TransitionMonoid(gens)
    K = ls.Konieczny([ls.Transf([int(v) for v in g]) for g in gens] + [ls.Transf(list(range(n)))])
    theirs = sorted(
        (
            d.size(),
            d.number_of_L_classes(),
            d.number_of_R_classes(),
            d.size_H_class(),
            d.is_regular_D_class(),
            d.number_of_idempotents(),
        )
        for d in K.D_classes()
    )
    assert _our_d_class_profile(M) == theirs
    orders = sorted(h.order for h in M.green.maximal_subgroups)
    assert orders == sorted(p[3] for p in theirs if p[4])
