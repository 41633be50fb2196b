"""Emulation of every decomposition: random automata (seeded) and the builtin catalogue.

Each check is made here directly — the cascade is run with its own tables (``run``) and the decoded states are
compared with ``Automaton.run`` — besides the cascade's ``verify_emulation``.
"""

from __future__ import annotations

import numpy as np
import pytest
from cases import CASES
from hypothesis import given, settings
from hypothesis import strategies as st

from fsa2rnn.fsa import Automaton, resolve_spec
from fsa2rnn.fsa.holonomy import holonomy_decomposition, holonomy_levels


def check_emulation(a: Automaton, cascade, rng: np.random.Generator, n_words: int, length: int) -> None:
    n, k = a.n_states, a.n_symbols
    # every (state, symbol) from the lift
    q = np.repeat(np.arange(n), k)
    x = np.tile(np.arange(k), n)
    got = cascade.decode(cascade.run(x[:, None], cascade.coordinates[q]))[:, 0]
    assert np.array_equal(got, a.transitions[x, q])
    # random words from random states
    q0 = rng.integers(0, n, size=n_words)
    ids = rng.integers(0, k, size=(n_words, length))
    got = cascade.decode(cascade.run(ids, cascade.coordinates[q0]))
    assert np.array_equal(got, a.run(ids, start=q0))
    assert cascade.is_permutation_reset()


def test_120_random_automata() -> None:
    """120 seeded draws: every (states, symbols) in 2..8 × 1..4 occurs (asserted), cascades of 1 to 11 levels."""
    rng = np.random.default_rng(2024)
    levels_seen, sizes_seen = set(), set()
    for _ in range(120):
        n = int(rng.integers(2, 9))
        k = int(rng.integers(1, 5))
        a = Automaton(rng.integers(0, n, size=(k, n)))
        c = holonomy_decomposition(a, verify=False)
        assert c.verify_emulation(a, n_words=8, length=64, seed=int(rng.integers(1 << 30)))
        check_emulation(a, c, rng, n_words=8, length=96)
        levels_seen.add(c.n_levels)
        sizes_seen.add((n, k))
    assert len(levels_seen) >= 4 and len(sizes_seen) == 7 * 4  # the sample is varied


def _builtin_names() -> list[str]:
    from fsa2rnn.fsa.library.builtins import CATALOGUE

    names = [b.example for b in CATALOGUE]
    names += ["T3", "T5", "Z7", "Z12:gen", "S4", "S4:swaps", "A4", "D5", "flipflop:3", "parity"]
    names += [c.spec for c in CASES]  # every symbol-set variant of the catalogue
    return [nm for nm in dict.fromkeys(names) if resolve_spec(nm).n_states <= 200]


@pytest.mark.parametrize("name", _builtin_names())
def test_every_builtin_up_to_200_states(name: str) -> None:
    a = resolve_spec(name)
    c = holonomy_decomposition(a)
    assert c.emulation_verified
    check_emulation(a, c, np.random.default_rng(5), n_words=16, length=200)


def test_group_automata_have_one_level_with_the_group() -> None:
    """A group automaton's image set is {Q}: one level, its states as points, the transition group."""
    for name, order in [("S4", 24), ("D5", 10), ("Q8", 8), ("Z7", 7)]:
        a = resolve_spec(name)
        c = holonomy_decomposition(a)
        assert c.n_levels == 1
        (comp,) = c.levels[0].components
        assert comp.points == a.n_states and comp.group_order == order


def test_closure_in_small_batches_gives_the_same_cascade(monkeypatch: pytest.MonkeyPatch) -> None:
    """The closure processes tuples in batches; records must stay aligned with their tuples across batches."""
    import fsa2rnn.fsa.holonomy as holonomy

    rng = np.random.default_rng(99)
    autos = [resolve_spec("T5")] + [Automaton(rng.integers(0, 6, size=(3, 6))) for _ in range(5)]
    whole = [holonomy_decomposition(a) for a in autos]
    monkeypatch.setattr(holonomy, "_BATCH", 7)
    for a, ref in zip(autos, whole):
        c = holonomy_decomposition(a)
        assert c.emulation_verified
        assert {tuple(r) for r in c.reachable_tuples} == {tuple(r) for r in ref.reachable_tuples}
        for i in range(c.n_levels):
            k1, im1 = c.dependency(i)
            k2, im2 = ref.dependency(i)
            assert np.array_equal(k1, k2) and np.array_equal(im1, im2)


@settings(max_examples=40)
@given(
    n=st.integers(2, 7),
    k=st.integers(1, 3),
    data=st.data(),
)
def test_property_emulation_and_levels(n: int, k: int, data: st.DataObject) -> None:
    """Any automaton: the cascade emulates it, is permutation-reset, and holonomy_levels agrees with it."""
    table = data.draw(st.lists(st.integers(0, n - 1), min_size=n * k, max_size=n * k))
    a = Automaton(np.array(table).reshape(k, n))
    c = holonomy_decomposition(a, verify=False)
    assert c.verify_emulation(a, n_words=4, length=32, seed=3)
    assert c.is_permutation_reset()
    levels = holonomy_levels(a)
    assert [lv.n_points for lv in levels] == c.widths
    assert [[(x.points, x.group_order) for x in lv.components] for lv in levels] == [
        [(x.points, x.group_order) for x in lv.components] for lv in c.levels
    ]
