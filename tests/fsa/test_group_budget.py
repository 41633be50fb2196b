"""describe_group (orders, names, composition factors within a stated budget) and the holonomy groups it describes.

Oracles: sympy's Schreier–Sims orders and named groups, factorials, and the holonomy group on its tiles (the
definition) against the smaller faithful action on atoms that the decomposition uses.
"""

from __future__ import annotations

from math import factorial

import numpy as np
import pytest
from sympy.combinatorics import Permutation, PermutationGroup

from fsa2rnn.fsa import Automaton
from fsa2rnn.fsa import groups as groups_mod
from fsa2rnn.fsa.errors import LimitExceededError
from fsa2rnn.fsa.groups import composition_factors, describe_group
from fsa2rnn.fsa.holonomy import Skeleton, holonomy_decomposition, holonomy_levels

from .test_groups import CASES
from .test_holonomy_skeleton import SMALL

_ORDERS = {"A5": 60, "A6": 360, "A8": 20160, "A9": 181440, "PSL(2,7)": 168, "M11": 7920}


def _factor_order(f: str) -> int:
    if f in _ORDERS:
        return _ORDERS[f]
    if f.startswith("A"):
        return factorial(int(f[1:])) // 2
    return int(f[1:])


def _arrays(G: PermutationGroup) -> list[list[int]]:
    return [g.array_form + list(range(g.size, G.degree)) for g in G.generators]


@pytest.mark.parametrize("label, G, name, factors, solvable", CASES, ids=[c[0] for c in CASES])
def test_describe_group_agrees_with_sympy(label, G, name, factors, solvable):
    g = describe_group(_arrays(G), G.degree)
    assert g.order == G.order() and g.name == name
    assert sorted(g.composition_factors) == sorted(factors) and g.is_solvable == solvable
    assert g.is_abelian == G.is_abelian


def _psl2(p: int) -> list[list[int]]:
    """PSL(2,p) on the projective line {0..p−1, ∞ = p}: x ↦ x + 1 and x ↦ −1/x."""
    shift = [(x + 1) % p for x in range(p)] + [p]
    inv = [p] + [(-pow(x, -1, p)) % p for x in range(1, p)] + [0]
    return [shift, inv]


def test_symmetric_and_alternating_groups_of_large_degree_by_jordan():
    rng = np.random.default_rng(3)
    d = 100
    gens = [rng.permutation(d) for _ in range(2)]
    g = describe_group(gens)
    parity = [Permutation(list(map(int, p))).is_odd for p in gens]
    want = "S100" if any(parity) else "A100"
    assert g.name == want and g.order == factorial(d) // (1 if any(parity) else 2)
    assert g.composition_factors == (("C2", "A100") if any(parity) else ("A100",))
    # even generators: A_d (a 203-cycle and a 3-cycle; points fixed by both are dropped)
    even = [np.r_[np.roll(np.arange(203), 1), 203, 204], np.r_[1, 2, 0, np.arange(3, 205)]]
    a = describe_group(even)
    assert a.name == "A203" and a.order == factorial(203) // 2 and not a.is_solvable


def test_small_groups_on_many_points_are_enumerated_onto_few():
    two = np.arange(5000).reshape(-1, 2)[:, ::-1].reshape(-1)  # 2500 transpositions
    assert describe_group([two]) == groups_mod.GroupSummary(2, "C2", ("C2",), True, 2)
    cyc = np.r_[np.roll(np.arange(4), 1), 4 + np.roll(np.arange(6), 1), np.arange(10, 300)]
    c = describe_group([cyc])
    assert (c.order, c.name, sorted(c.composition_factors)) == (12, "C12", ["C2", "C2", "C3"])
    # S3 acting diagonally on 40 copies of its 3 points (degree 120 > MAX_GROUP_DEGREE): enumerated, 3 points kept
    s3 = [np.arange(120).reshape(40, 3)[:, p].reshape(-1) for p in ([1, 0, 2], [1, 2, 0])]
    s = describe_group(s3)
    assert (s.order, s.name, s.degree) == (6, "S3", 3)


def test_beyond_the_budget_is_refused_naming_it():
    s40 = np.r_[np.roll(np.arange(40), 1), 40 + np.arange(40)]
    t40 = np.r_[1, 0, np.arange(2, 80)]
    u40 = np.r_[np.arange(40), 40 + np.roll(np.arange(40), 1)]
    with pytest.raises(LimitExceededError, match=r"the product acts faithfully on 80 points .* at most 64 points"):
        describe_group([s40, t40, u40], what="the product")  # S40 x S40: intransitive, not enumerable
    # on fewer points it is within the budget (Schreier–Sims, then orbit splitting for the factors)
    s8 = [np.r_[np.roll(np.arange(8), 1), 8 + np.arange(8)], np.r_[1, 0, np.arange(2, 16)]]
    s8 += [np.r_[np.arange(8), 8 + np.roll(np.arange(8), 1)], np.r_[np.arange(8), 9, 8, np.arange(10, 16)]]
    g = describe_group(s8)
    assert g.order == factorial(8) ** 2 and sorted(g.composition_factors) == ["A8", "A8", "C2", "C2"]
    assert g.name == f"order {factorial(8) ** 2}"  # above MAX_NAMED_ORDER: no structure description


def test_composition_factors_split_products_and_refuse_large_primitive_groups():
    a5 = [[1, 2, 3, 4, 0], [1, 2, 0, 3, 4]]
    gens = [np.r_[np.arange(5 * i), np.array(g) + 5 * i, np.arange(5 * i + 5, 20)] for i in range(4) for g in a5]
    G = PermutationGroup([Permutation(list(map(int, g))) for g in gens])  # A5^4, order 12,960,000
    assert composition_factors(G) == ["A5"] * 4
    psl = PermutationGroup([Permutation(g) for g in _psl2(79)])  # simple, primitive, order 246,480
    with pytest.raises(LimitExceededError, match="200,000"):
        composition_factors(psl)


def test_imprimitive_groups_split_by_blocks():
    # C2 wr S3 on 6 points in 3 blocks of 2 (order 48) and S3 wr C2 on 6 points in 2 blocks of 3 (order 72)
    c2wr = [[1, 0, 2, 3, 4, 5], [2, 3, 4, 5, 0, 1], [2, 3, 0, 1, 4, 5]]
    s3wr = [[1, 0, 2, 3, 4, 5], [1, 2, 0, 3, 4, 5], [3, 4, 5, 0, 1, 2]]
    for gens, order in ((c2wr, 48), (s3wr, 72)):
        G = PermutationGroup([Permutation(g) for g in gens])
        f = composition_factors(G)
        assert G.order() == order and np.prod([_factor_order(x) for x in f]) == order


# ---------------------------------------------------------------------------------------------- holonomy groups
def test_holonomy_action_on_atoms_is_faithful():
    """The atom action of every holonomy group has the order of the group on the tiles (the definition)."""
    for a in SMALL:
        sk = Skeleton(a.transitions)
        for c in range(sk.n_classes):
            if sk.class_size[c] < 2:
                continue
            on_tiles = sk.holonomy_group(c).order()
            act = sk.holonomy_action(c)
            G = PermutationGroup([Permutation(list(map(int, g))) for g in act]) if len(act) else None
            assert (G.order() if G is not None else 1) == on_tiles
            assert act.shape[1] <= sk.tiles[c].size


def _full_transformations(n: int, rank: int, seed: int) -> Automaton:
    """S_n (an n-cycle and a transposition) with one random map of the given rank: every set of at most ``rank``
    states is an image, and Q's tiles are the C(n, rank) sets of size ``rank``."""
    rng = np.random.default_rng(seed)
    cyc, swap = np.roll(np.arange(n), -1), np.r_[1, 0, np.arange(2, n)]
    f = rng.permutation(n)[np.r_[np.arange(rank), rng.integers(0, rank, n - rank)]]
    return Automaton(np.stack([cyc, swap, f]))


def test_symmetric_group_on_many_tiles_is_described_on_its_atoms():
    """The issue's slow case in small: S9 acting on the 126 4-subsets of its states (Q's tiles) is computed on 9
    atoms; the order agrees with sympy on the 126 tiles."""
    a = _full_transformations(9, 4, seed=1)
    sk = Skeleton(a.transitions)
    assert sk.tiles[0].size == 126 and sk.holonomy_action(0).shape[1] == 9
    assert sk.holonomy_group(0).order() == factorial(9)
    levels = holonomy_levels(a)
    top = levels[0].components[0]
    assert (top.points, top.group, top.group_order, top.composition_factors) == (126, "S9", factorial(9), ("C2", "A9"))
    assert [c.group for lv in levels for c in lv.components] == ["S9", "S4", "S3", "C2"]


def test_large_case_refuses_promptly_at_its_limits():
    """16 states, S16 with a rank-8 map: 39,203 image sets, S16 on 12,870 tiles at the top. The groups are named
    on their atoms; the coordinate closure refuses at the tuple limit (here lowered to keep the test short)."""
    a = _full_transformations(16, 8, seed=0)
    levels = holonomy_levels(a)
    top = levels[0].components[0]
    assert (top.points, top.group, top.group_order, top.composition_factors) == (
        12870,
        "S16",
        factorial(16),
        ("C2", "A16"),
    )
    assert [lv.components[0].group for lv in levels[1:]] == ["S8", "S7", "S6", "S5", "S4", "S3", "C2"]
    with pytest.raises(LimitExceededError, match=r"more than 2000 coordinate tuples"):
        holonomy_decomposition(a, max_tuples=2000)


def test_decompose_states_the_group_budget_in_one_line(tmp_path):
    """S40 x S40 acting on 80 states (two orbits): the holonomy group of Q acts faithfully on 80 atoms, is not
    enumerable within the budget and not S_d or A_d: `decompose` exits 2 with one line naming the budget."""
    import json

    from click.testing import CliRunner

    from fsa2rnn.cli.main import main

    gens = {
        "a": np.r_[np.roll(np.arange(40), 1), 40 + np.arange(40)],
        "b": np.r_[1, 0, np.arange(2, 80)],
        "c": np.r_[np.arange(40), 40 + np.roll(np.arange(40), 1)],
        "d": np.r_[np.arange(40), 41, 40, np.arange(42, 80)],
    }
    spec = {"states": 80, "symbols": list(gens), "transitions": {k: v.tolist() for k, v in gens.items()}}
    path = tmp_path / "s40xs40.json"
    path.write_text(json.dumps(spec))
    res = CliRunner().invoke(main, ["decompose", str(path)])
    assert res.exit_code == 2 and "Traceback" not in res.output
    line = res.output.strip()
    assert len(line.splitlines()) == 1 and "80 points" in line and "at most 64 points" in line
