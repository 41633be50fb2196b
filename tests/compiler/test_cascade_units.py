"""The Householder cascade construction (Theorem 4) piece by piece: the levels' lower bound against a brute-force
chain of images, the size and key-space refusals at their exact boundaries, the level-row classification, and the
stated bound of GH factors per step against the compiled model."""

from __future__ import annotations

import numpy as np
import pytest
from cases import random_automaton

from fsa2rnn.compiler import compile_householder
from fsa2rnn.compiler.targets.lrnn import cascade_to_householder as ch
from fsa2rnn.fsa import Automaton, resolve_spec
from fsa2rnn.fsa.errors import ConstructionError, LimitExceededError


def _brute_lower_bound(a: Automaton, enough: int = 64) -> tuple[int, int]:
    """For each symbol x: the strictly shrinking chain Q ⊋ Q·x ⊋ Q·x² ⊋ …, counting its sets of ≥ 2 states
    (capped at ``enough``); the largest count and the first symbol that reaches it."""
    best, arg = 0, 0
    for x in range(a.n_symbols):
        t = [int(v) for v in a.transitions[x]]
        current = set(range(a.n_states))
        chain = [current]
        while True:
            image = {t[q] for q in current}
            if len(image) == len(current):
                break
            chain.append(image)
            current = image
        count = min(enough, sum(len(s) >= 2 for s in chain))
        if count > best:
            best, arg = count, x
    return best, arg


def _staircase(n: int, symbols: int = 1) -> Automaton:
    """Symbol 0 moves i → i + 1 (n − 1 stays): its powers shrink the states one at a time."""
    rows = [[min(i + 1, n - 1) for i in range(n)]] + [list(range(n))] * (symbols - 1)
    return Automaton(rows, initial=0)


@pytest.mark.parametrize("seed", range(12))
def test_levels_lower_bound_is_the_longest_chain_of_images(seed):
    rng = np.random.default_rng(seed)
    a = random_automaton(int(rng.integers(1, 9)), int(rng.integers(1, 4)), seed)
    assert ch.levels_lower_bound(a) == _brute_lower_bound(a)


def test_levels_lower_bound_on_known_chains():
    assert ch.levels_lower_bound(Automaton([[0], [0]], initial=0)) == (0, 0)  # one state: no set of two
    assert ch.levels_lower_bound(Automaton([[1, 0]], initial=0)) == (1, 0)  # a permutation: Q only
    assert ch.levels_lower_bound(Automaton([[0, 0], [1, 0]], initial=0)) == (1, 0)  # Q, then a singleton
    three = Automaton([[0, 1, 2], [1, 2, 2]], initial=0)  # symbol 1: {0,1,2} ⊋ {1,2} ⊋ {2}
    assert ch.levels_lower_bound(three) == (2, 1)
    assert ch.levels_lower_bound(_staircase(10)) == (9, 0)
    assert ch.levels_lower_bound(_staircase(70)) == (64, 0)  # stops at the default enough = 64
    assert ch.levels_lower_bound(_staircase(70), enough=5) == (5, 0)
    # the true cascade has at least that many levels
    for a in (three, _staircase(6), resolve_spec("T3")):
        assert ch.decompose(a).n_levels >= ch.levels_lower_bound(a)[0]


def test_key_space_bound_at_62_levels():
    """m levels need ≥ 2^m readout keys: 62 levels fit the int64 key space (2^62), 63 are refused naming m and x."""
    ch.check_key_space_bound(_staircase(63))  # 62 sets of ≥ 2 states
    with pytest.raises(LimitExceededError, match=r"at least 63 levels .* symbol '0' shrink 63 times.* 2\^63 values"):
        ch.check_key_space_bound(_staircase(64))


def test_a_deep_cascade_is_refused_before_decomposing():
    with pytest.raises(LimitExceededError, match=r"at least 64 levels"):
        compile_householder(_staircase(70), construction="cascade")


def test_check_size_boundary(monkeypatch):
    """Up to n²·|Σ| weight entries per layer are allowed, one more is not."""
    a = random_automaton(5, 3, 0)
    monkeypatch.setattr(ch, "MAX_LAYER_ENTRIES", 5 * 5 * 3)
    ch.check_size(a)
    monkeypatch.setattr(ch, "MAX_LAYER_ENTRIES", 5 * 5 * 3 - 1)
    with pytest.raises(LimitExceededError, match=r"5 states and 3 symbols give up to 75 weight entries per layer"):
        ch.check_size(a)


def test_level_size_boundary(monkeypatch):
    """A level of n points read by R rows holds R·n² entries: allowed at the limit, refused one below, naming it."""
    a = resolve_spec("T3")
    casc = ch.decompose(a)
    sizes = [len(casc.dependency(i)[0]) * casc.widths[i] ** 2 for i in range(casc.n_levels)]
    top = max(sizes)
    monkeypatch.setattr(ch, "MAX_LAYER_ENTRIES", top)
    layers, _ = ch.cascade_layers(a, 0, casc)
    assert [spec.width for spec in layers] == list(casc.widths)
    monkeypatch.setattr(ch, "MAX_LAYER_ENTRIES", top - 1)
    i = sizes.index(top)
    rows = len(casc.dependency(i)[0])
    with pytest.raises(LimitExceededError, match=rf"level {i + 1} has {casc.widths[i]} points and {rows} input rows"):
        ch.cascade_layers(a, 0, casc)


def test_level_rows_classification():
    kinds, targets = ch.level_rows(np.array([[1, 0, 2], [2, 2, 2], [0, 1, 2]]), 0)
    assert kinds == ["perm", "reset", "perm"] and targets[1] == 2
    kinds, targets = ch.level_rows(np.array([[0], [0]]), 3)  # one point: every row is the identity
    assert kinds == ["perm", "perm"] and targets.tolist() == [0, 0]
    with pytest.raises(ConstructionError, match=r"level 4 row 1 is neither a permutation nor a reset"):
        ch.level_rows(np.array([[0, 1, 2], [0, 0, 1]]), 4)


@pytest.mark.parametrize("spec", ["T3", "flipflop", "S3", "regex:(ab)*"])
def test_theorem4_bound_is_the_widest_level_and_holds(spec):
    """The stated bound: at most max n_i GH factors per step (n_i − 1 reflections, or n_i projections for a reset);
    the compiled model uses no more."""
    a = resolve_spec(spec)
    model = compile_householder(a, construction="cascade", initial=a.initial or 0)
    widths = ch.decompose(a).widths
    assert f"at most max n_i = {max(widths)} GH factors per step" in model.summary["bound"]
    assert model.summary["factors_per_step"] <= max(widths)


def test_a_one_state_automaton_is_one_trivial_layer():
    a = Automaton([[0], [0]], initial=0)
    layers, keys, states, facts = ch.cascade(a, 0)
    assert len(layers) == 1 and layers[0].width == 1 and keys.shape == (1, 1) and states.tolist() == [0]
    assert facts["decomposition"] == "no levels"
