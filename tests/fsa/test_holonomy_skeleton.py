"""The skeleton and the holonomy groups against brute force on small random automata.

Every quantity is recomputed here from the definitions (docs/holonomy.md, "The skeleton") with a brute-force
enumeration of the transition monoid, independently of fsa/holonomy.py: the extended image set, subduction classes,
depths, tiles, the transversal maps, and each holonomy group (the permutations of a representative's tiles induced
by all monoid elements that stabilize it).
"""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest
from helpers import BruteSkeleton, closure, image

from fsa2rnn.fsa import Automaton, resolve_spec
from fsa2rnn.fsa.errors import LimitExceededError
from fsa2rnn.fsa.holonomy import Skeleton, holonomy_decomposition


def random_automata(count: int, seed: int, max_states: int = 5, max_symbols: int = 3) -> list[Automaton]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(rng.integers(2, max_states + 1))
        k = int(rng.integers(1, max_symbols + 1))
        out.append(Automaton(rng.integers(0, n, size=(k, n))))
    return out


SMALL = random_automata(40, seed=7)
# a few with permutations mixed in, so that holonomy groups are non-trivial
_rng = np.random.default_rng(11)
SMALL += [
    Automaton(np.stack([_rng.permutation(n), _rng.permutation(n), _rng.integers(0, n, n)])) for n in (3, 4, 4, 5, 5, 5)
]


@pytest.mark.parametrize("automaton", SMALL, ids=lambda a: f"n{a.n_states}k{a.n_symbols}")
def test_skeleton_matches_brute_force(automaton: Automaton) -> None:
    bf = BruteSkeleton(automaton.transitions)
    sk = Skeleton(automaton.transitions)
    n = automaton.n_states
    sets = [frozenset(np.flatnonzero(r).tolist()) for r in sk.sets]
    assert set(sets[: sk.n_images]) == bf.images
    assert set(sets) == bf.I and len(sets) == len(bf.I)
    # subduction classes
    ours = {frozenset(sets[i] for i in sk.class_members(c)) for c in range(sk.n_classes)}
    assert ours == {frozenset(cl) for cl in bf.classes}
    # depth and number of levels: SgpDec 1.x's (longest chains of strict subductions from Q) by default ...
    depths, n_levels = bf.sgpdec_depths()
    assert sk.n_levels == n_levels == bf.n_levels
    for i, A in enumerate(sets):
        assert sk.depth_of[i] == (n_levels + 1 if len(A) == 1 else depths[A])
    # ... and the height rule on request (the same number of levels)
    hk = Skeleton(automaton.transitions, depth="height")
    assert hk.n_levels == bf.n_levels
    for i, A in enumerate(sets):
        assert hk.depth_of[hk.index_of(sk.sets[i])[0]] == (
            bf.n_levels + 1 if len(A) == 1 else bf.n_levels - bf.height[A] + 1
        )
    # tiles, transversals, holonomy groups
    for c in range(sk.n_classes):
        R = sets[sk.class_rep[c]]
        if len(R) < 2:
            continue
        tiles = [sets[t] for t in sk.tiles[c]]
        assert set(tiles) == bf.tiles(R)
        for b in sk.class_members(c):
            B = sets[b]
            f = sk.from_rep[b].astype(int)
            t = sk.to_rep[b].astype(int)
            assert image(R, tuple(f)) == B
            assert all(t[f[r]] == r for r in R)
            assert tuple(f) in bf.monoid  # from_rep is a monoid element
            # to_rep agrees on B with some monoid element
            assert any(all(s[q] == t[q] for q in B) for s in bf.monoid)
        expected = bf.holonomy_permutations(R, tiles)
        assert closure(sk.holonomy_generators(c), len(tiles)) == expected
        assert sk.holonomy_group(c).order() == len(expected)
        perm_expected = {tuple(sorted(R).index(s[q]) for q in sorted(R)) for s in bf.monoid if image(R, s) == R}
        assert closure(sk.permutator_generators(c), len(R)) == perm_expected
    assert n == sk.n


def _placement(levels) -> list[list[tuple[frozenset[int], int]]]:
    """Per level, the components as sorted (representative set, group order) pairs."""
    return [sorted((frozenset(c.representative), c.group_order) for c in lv.components) for lv in levels]


#: more random automata (up to 6 states): the two depth rules place components differently on three of them
PLACEMENT = random_automata(24, seed=31, max_states=6, max_symbols=2)


def test_level_placement_matches_brute_force_sgpdec_depth() -> None:
    """Each component sits on the level of its class's SgpDec depth, computed here by brute force; the cascade
    still emulates the automaton. The height rule differs on some of these automata, so the test separates them."""
    differ = 0
    for a in PLACEMENT:
        bf = BruteSkeleton(a.transitions)
        depths, n_levels = bf.sgpdec_depths()
        c = holonomy_decomposition(a)
        assert c.n_levels == n_levels and c.emulation_verified
        for lv, level in enumerate(c.levels):
            for comp in level.components:
                assert depths[frozenset(comp.representative)] == lv + 1
        # every non-singleton class has its component on its level
        want = sorted(depths[cl[0]] for cl in bf.classes if len(cl[0]) > 1)
        assert sorted(lv + 1 for lv, level in enumerate(c.levels) for _ in level.components) == want
        h = holonomy_decomposition(a, depth="height")
        assert h.n_levels == n_levels and h.emulation_verified
        differ += _placement(h.levels) != _placement(c.levels)
    assert differ > 0


def test_issue_example_widths_are_sgpdec_s() -> None:
    """Generators [[5,5,3,0,6,7,3,1],[0,2,4,4,3,2,4,0]]: SgpDec's per-level widths (the height rule gives
    [2,4,5,3,3,3,6,9,2]), checked against the brute-force depths as well."""
    a = Automaton(np.array([[5, 5, 3, 0, 6, 7, 3, 1], [0, 2, 4, 4, 3, 2, 4, 0]]))
    c = holonomy_decomposition(a)
    assert c.widths == [2, 4, 5, 3, 6, 9, 3, 3, 2] and c.emulation_verified
    assert holonomy_decomposition(a, depth="height").widths == [2, 4, 5, 3, 3, 3, 6, 9, 2]
    bf = BruteSkeleton(a.transitions)
    depths, n_levels = bf.sgpdec_depths()
    widths = [0] * n_levels
    for cl in bf.classes:
        if len(cl[0]) > 1:
            widths[depths[cl[0]] - 1] += len(bf.tiles(cl[0]))
    assert widths == c.widths


def test_levels_components_are_the_classes_of_each_depth() -> None:
    for a in SMALL[:20]:
        c = holonomy_decomposition(a)
        sk = c.skeleton
        for lv, level in enumerate(c.levels):
            reps = [comp.representative for comp in level.components]
            expected = [sk.points(int(sk.class_rep[cl])) for cl in sk.classes_at_depth(lv + 1) if sk.class_size[cl] > 1]
            assert reps == expected
            assert level.n_points == sum(len(comp.tiles) for comp in level.components)


#: The published oracle automata (SgpDec 1.x) (T_3..T_5, the flip-flop, counters), with their holonomy group orders
ORACLES = [
    (resolve_spec("T3"), None),
    (resolve_spec("T4"), [[24], [6], [2]]),
    (resolve_spec("T5"), [[120], [24], [6], [2]]),
    (resolve_spec("flipflop"), [[1]]),
    (resolve_spec("Z5:gen"), [[5]]),
]


@pytest.mark.parametrize("a, orders", ORACLES, ids=lambda x: getattr(x, "name", ""))
def test_oracle_components_are_permutation_reset(a: Automaton, orders) -> None:
    """Each symbol acts on each level by an element of the component's holonomy group (closed here by brute force,
    its order the published one) or by a constant: checked on the dependency rows themselves."""
    c = holonomy_decomposition(a)
    if orders is not None:
        assert [[comp.group_order for comp in lv.components] for lv in c.levels] == orders
    _check_dependency_rows(c)


def _check_dependency_rows(c) -> None:
    sk = c.skeleton
    for lv, level in enumerate(c.levels):
        _, images = c.dependency(lv)
        classes = [cl for cl in sk.classes_at_depth(lv + 1) if sk.class_size[cl] > 1]
        groups = {cl: closure(sk.holonomy_generators(cl), sk.tiles[cl].size) for cl in classes}
        for cl, comp in zip(classes, level.components):
            assert len(groups[cl]) == comp.group_order
        for row in images:
            if np.all(row == row[0]) and level.n_points > 1:
                continue
            assert sorted(row.tolist()) == list(range(level.n_points))
            moved = 0
            for cl, comp in zip(classes, level.components):
                block = row[comp.offset : comp.offset + comp.points] - comp.offset
                assert tuple(block.tolist()) in groups[cl]
                moved += int(np.any(block != np.arange(comp.points)))
            assert moved <= 1


def test_dependency_rows_are_holonomy_elements_or_constants() -> None:
    """Every permutation row moves one component by an element of its holonomy group and fixes the others."""
    for a in SMALL:
        c = holonomy_decomposition(a)
        _check_dependency_rows(c)


def test_image_set_limit_is_stated() -> None:
    a = Automaton([[(i + 1) % 12 for i in range(12)], [0, 0, *range(2, 12)]])  # 4095 image sets
    with pytest.raises(LimitExceededError, match=r"more than 100 sets.*limit 100"):
        Skeleton(a.transitions, max_image_set=100)


def test_coordinate_tuple_limit_is_stated() -> None:
    a = Automaton([[1, 2, 3, 4, 0], [1, 0, 2, 3, 4], [0, 0, 2, 3, 4]])  # T_5: 120 reachable tuples
    with pytest.raises(LimitExceededError, match=r"more than 50 coordinate tuples.*limit 50"):
        holonomy_decomposition(a, max_tuples=50)


def test_all_tile_chain_lifts_are_chains() -> None:
    """Each lift decodes top-down into a chain Q ⊋ X_1 ⊋ … ⊋ {q} of tiles."""
    for a in SMALL[:15]:
        c = holonomy_decomposition(a)
        sk = c.skeleton
        for q, coords in enumerate(c.coordinates):
            X = 0
            for lv in range(c.n_levels):
                if sk.depth_of[X] == lv + 1:
                    cl = sk.class_of[X]
                    comp_off = {comp.representative: comp.offset for comp in c.levels[lv].components}
                    off = comp_off[sk.points(int(sk.class_rep[cl]))]
                    nxt = int(sk.tile_set(np.array([X]), np.array([coords[lv] - off]))[0])
                    assert set(sk.points(nxt)) < set(sk.points(X))
                    assert q in sk.points(nxt)
                    X = nxt
                else:
                    assert coords[lv] == 0  # a skipped level is the don't-care 0
            assert sk.points(X) == (q,)


@pytest.mark.parametrize("n, k", [(2, 1), (2, 2), (2, 3), (3, 1), (3, 2)])
def test_exhaustive_tiny_automata(n: int, k: int) -> None:
    """Every automaton with n states and k symbols (up to 729 of them): emulation, checked exhaustively on the
    reachable coordinate tuples (short random words only, to stay quick)."""
    for table in product(range(n), repeat=n * k):
        a = Automaton(np.array(table).reshape(k, n))
        c = holonomy_decomposition(a, verify=False)
        assert c.verify_emulation(a, n_words=4, length=16, seed=1)
        assert c.is_permutation_reset()
