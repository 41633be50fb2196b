"""The Cascade type: forward cascade products (Definition 1), the table contract, simulation timing and export."""

from __future__ import annotations

import json

import numpy as np
import pytest

from fsa2rnn.fsa import Automaton
from fsa2rnn.fsa.cascade import Cascade
from fsa2rnn.fsa.errors import LimitExceededError, SpecError
from fsa2rnn.fsa.holonomy import holonomy_decomposition

FLIP_FLOP = Automaton([[0, 1], [0, 0], [1, 1]], symbols=["read", "set0", "set1"])


def t_n(n: int) -> Automaton:
    return Automaton([[(i + 1) % n for i in range(n)], [1, 0, *range(2, n)], [0, 0, *range(2, n)]])


def random_product(seed: int) -> tuple[list[Automaton], int]:
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 4))
    n0, n1, n2 = (int(v) for v in rng.integers(1, 5, size=3))
    a0 = Automaton(rng.integers(0, n0, size=(k, n0)))
    a1 = Automaton(rng.integers(0, n1, size=(k * n0, n1)))
    a2 = Automaton(rng.integers(0, n2, size=(k * n0 * n1, n2)))
    return [a0, a1, a2], k


@pytest.mark.parametrize("seed", range(8))
def test_product_follows_definition_1(seed: int) -> None:
    """δ''((q0, q1, q2), x) = (δ0(q0, x), δ1(q1, (x, q0)), δ2(q2, (x, q0, q1))), upper states before the step."""
    (a0, a1, a2), k = random_product(seed)
    c = Cascade.product([a0, a1, a2])
    n0, n1, n2 = a0.n_states, a1.n_states, a2.n_states
    assert c.widths == [n0, n1, n2]
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, k, size=(6, 40))
    starts = np.stack([rng.integers(0, n, size=6) for n in (n0, n1, n2)], axis=1)
    got = c.run(ids, starts)
    for b in range(6):
        q0, q1, q2 = (int(v) for v in starts[b])
        for t in range(40):
            x = int(ids[b, t])
            q0, q1, q2 = (
                int(a0.transitions[x, q0]),
                int(a1.transitions[x * n0 + q0, q1]),
                int(a2.transitions[(x * n0 + q0) * n1 + q1, q2]),
            )
            assert tuple(got[b, t]) == (q0, q1, q2)
    # the emulated automaton: states are tuples in mixed radix
    prod = c.to_automaton()
    assert prod.n_states == n0 * n1 * n2
    assert c.verify_emulation(prod)
    assert np.array_equal(c.decode(c.coordinates), np.arange(prod.n_states))


def test_lower_level_reads_the_upper_state_before_the_step() -> None:
    """A level that resets to the upper coordinate is a one-step delay of the flip-flop (docs/theory.md, "The timing of
    cascades")."""
    delay = Automaton([[c, c] for x in range(3) for c in range(2)])  # symbol (x, c0) -> constant c0
    c = Cascade.product([FLIP_FLOP, delay])
    word = np.array([[2, 0, 1, 1, 2, 0, 0]])
    out = c.run(word, np.array([[0, 1]]))[0]
    top = FLIP_FLOP.run(word[0], start=0)
    assert np.array_equal(out[:, 0], top)
    assert np.array_equal(out[:, 1], np.concatenate([[0], top[:-1]]))


def test_product_errors() -> None:
    with pytest.raises(SpecError, match="level 1 of a cascade product must read 6 symbols"):
        Cascade.product([FLIP_FLOP, Automaton([[0, 1]] * 5)])
    with pytest.raises(SpecError):
        Cascade.product([])
    big = Automaton([list(range(1, 1000)) + [0]])
    with pytest.raises(LimitExceededError, match=r"1000000 states \(limit 999999\)"):
        Cascade.product([big, Automaton([[0] * 1000] * 1000)], limit=999_999)


@pytest.mark.parametrize("n", [3, 4])
def test_dependency_and_key_index_contract(n: int) -> None:
    c = holonomy_decomposition(t_n(n))
    reach = c.reachable_tuples
    for i in range(c.n_levels):
        keys, images = c.dependency(i)
        assert keys.shape == (images.shape[0], i + 1) and images.shape[1] == c.levels[i].n_points
        assert np.array_equal(c.key_index(i, keys), np.arange(keys.shape[0]))
        # batched shape is kept; a key outside the table is -1
        assert c.key_index(i, keys[None, :2]).shape == (1, min(2, keys.shape[0]))
        bad = keys[:1].copy()
        bad[0, 0] = c.n_levels + 99
        assert c.key_index(i, bad)[0] == -1
        # covers every symbol with every upper prefix of a reachable tuple
        prefixes = {tuple(r[:i]) for r in reach}
        covered = {(int(r[0]), *map(int, r[1:])) for r in keys}
        assert covered == {(x, *p) for x in range(len(c.symbols)) for p in prefixes}
        # every row is a permutation or a constant
        for row in images:
            assert np.all(row == row[0]) or sorted(row) == list(range(len(row)))
    with pytest.raises(IndexError):
        c.dependency(c.n_levels)


def test_decode_marks_invalid_tuples() -> None:
    c = holonomy_decomposition(t_n(3))
    assert np.array_equal(c.decode(c.coordinates), np.arange(3))
    assert c.decode(np.array([[99, 0]]))[0] == -1
    assert c.decode(np.array([[-1, 0]]))[0] == -1
    valid = {tuple(r) for r in c.reachable_tuples}
    for a in range(c.levels[0].n_points):
        for b in range(c.levels[1].n_points):
            assert (c.decode(np.array([a, b])) >= 0) == ((a, b) in valid)
    # a start outside the reachable tuples runs to -1
    out = c.run(np.array([[0, 1]]), np.array([[99, 0]]))
    assert np.all(out == -1)


def test_verify_emulation_can_fail() -> None:
    c = holonomy_decomposition(t_n(3))
    wrong = Automaton(t_n(3).transitions[[1, 0, 2]])  # symbols permuted
    assert not c.verify_emulation(wrong)
    assert not c.verify_emulation(FLIP_FLOP)


def test_to_automaton_is_mapped_homomorphically_onto_the_original() -> None:
    a = t_n(4)
    c = holonomy_decomposition(a)
    big = c.to_automaton()
    states = c.decode(c.reachable_tuples)
    for x in range(a.n_symbols):
        assert np.array_equal(states[big.transitions[x]], a.transitions[x, states])


def test_export_json_dot_and_display() -> None:
    c = holonomy_decomposition(t_n(4))
    assert str(c) == "1: (4,S4) / 2: (3,S3) / 3: (2,C2)"
    data = json.loads(json.dumps(c.to_json(tables=True)))
    assert data["format"] == "fsa2rnn.cascade/1"
    assert [lv["n_points"] for lv in data["levels"]] == [4, 3, 2]
    assert data["levels"][0]["components"][0]["group"] == "S4"
    assert data["emulation_verified"] is True
    assert len(data["dependencies"]) == 3 and data["coordinates"]["0"] == c.coordinates[0].tolist()
    dot = c.to_dot()
    assert dot.startswith("digraph cascade {") and dot.count("->") == 3 and "S3" in dot
