"""Holonomy decomposition against SgpDec 1.x's published outputs."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from fsa2rnn.fsa import Automaton
from fsa2rnn.fsa.holonomy import holonomy_decomposition


def full_transformation_monoid(n: int) -> Automaton:
    """T_n by its standard generators: the n-cycle, the transposition (0 1), and the map sending 1 to 0."""
    cycle = [(i + 1) % n for i in range(n)]
    swap = [1, 0, *range(2, n)]
    collapse = [0, 0, *range(2, n)]
    return Automaton([cycle, swap, collapse], symbols=["c", "t", "e"], name=f"T{n}")


def flip_flop() -> Automaton:
    """States 0, 1; symbols read (identity), set0, set1."""
    return Automaton([[0, 1], [0, 0], [1, 1]], symbols=["read", "set0", "set1"])


def counter(n: int) -> Automaton:
    return Automaton([[(i + 1) % n for i in range(n)]], symbols=["inc"])


def signature(cascade) -> Counter:
    return Counter((c.points, c.group_order) for lv in cascade.levels for c in lv.components)


@pytest.mark.parametrize(
    "n, expected",
    [
        (3, [(3, 6), (2, 2)]),
        (4, [(4, 24), (3, 6), (2, 2)]),
        (5, [(5, 120), (4, 24), (3, 6), (2, 2)]),
    ],
)
def test_full_transformation_monoids(n: int, expected: list[tuple[int, int]]) -> None:
    c = holonomy_decomposition(full_transformation_monoid(n))
    assert c.n_levels == n - 1
    assert [lv.n_points for lv in c.levels] == [p for p, _ in expected]
    assert signature(c) == Counter(expected)
    assert c.emulation_verified and c.is_permutation_reset()


def test_t4_holonomy_groups_are_s4_s3_c2() -> None:
    c = holonomy_decomposition(full_transformation_monoid(4))
    orders = [[comp.group_order for comp in lv.components] for lv in c.levels]
    assert orders == [[24], [6], [2]]
    assert c.levels[0].components[0].group == "S4"
    assert c.levels[2].components[0].group == "C2"


def test_flip_flop_one_level_two_points_trivial_group() -> None:
    c = holonomy_decomposition(flip_flop())
    assert c.n_levels == 1
    assert signature(c) == Counter({(2, 1): 1})
    assert c.levels[0].components[0].group == "C1"
    assert c.emulation_verified


@pytest.mark.parametrize("n", [2, 3, 5, 12])
def test_counter_is_one_cyclic_level(n: int) -> None:
    c = holonomy_decomposition(counter(n))
    assert c.n_levels == 1
    assert signature(c) == Counter({(n, n): 1})
    assert c.levels[0].components[0].group == f"C{n}"
    assert c.emulation_verified


def test_display_names_levels_from_the_top() -> None:
    c = holonomy_decomposition(flip_flop())
    assert str(c) == "1: (2,C1)"
    assert str(holonomy_decomposition(counter(3))) == "1: (3,C3)"


def test_one_state_automaton_has_no_levels() -> None:
    a = Automaton([[0], [0]])
    c = holonomy_decomposition(a)
    assert c.n_levels == 0
    assert c.emulation_verified
    assert np.array_equal(c.decode(np.zeros((4, 0), dtype=int)), np.zeros(4, dtype=int))
