"""The NFSM plans one by one (compiler/targets/nfsm/heads.py) against independent oracles: the published holonomy
level sizes (cost Σ d², Brandoit et al.), the documented limits probed at their boundary, brute-force closures of
permutation groups (a base determines each element), the automaton's own run."""

from __future__ import annotations

import re
from itertools import product as cartesian
from pathlib import Path

import numpy as np
import pytest
import torch
from cases import CASES, automaton_named, random_automaton

from fsa2rnn.compiler import compile_nfsm
from fsa2rnn.compiler.targets.nfsm import heads as H
from fsa2rnn.fsa import Automaton
from fsa2rnn.fsa.errors import ConstructionError, LimitExceededError
from fsa2rnn.fsa.product import product
from fsa2rnn.nn import load_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")

DOC = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "compile-nfsm.md").read_text()
#: the documented limits (docs/guide/compile-nfsm.md)
MAX_KEYS = int(re.search(r"at most ([\d,]+) keys", DOC).group(1).replace(",", ""))
AUTO_MIN, AUTO_MAX = map(int, re.search(r"automata of (\d+) to (\d+) states", DOC).groups())


def _pad(a: Automaton, k: int) -> Automaton:
    """``a`` with identity symbols added up to k symbols (the cascade is unchanged; its keys grow with |Σ|)."""
    tr = np.asarray(a.transitions)
    ident = np.tile(np.arange(a.n_states), (k - tr.shape[0], 1))
    return Automaton(np.concatenate([tr, ident]), initial=a.initial)


def _ff_counter(m: int, extra_state: bool = False) -> Automaton:
    """A flip-flop bit beside a counter mod m (state f·m + c; symbols set, reset, +1), built from raw tables (no
    ``factors``). With ``extra_state``, one more state that every symbol sends to 0."""
    q = np.arange(2 * m)
    f, c = q // m, q % m
    rows = [c, m + c, f * m + (c + 1) % m]
    if extra_state:
        rows = [np.append(r, 0) for r in rows]
    return Automaton(np.array(rows), initial=0)


def _t4_levels() -> list[int]:
    """T4's holonomy level sizes as published (SgpDec; tests/cases.py)."""
    case = next(c for c in CASES if c.name == "T4")
    return [points for points, _ in case.holonomy]


def test_cascade_cost_refusal_is_at_the_published_sum_of_squares():
    """cascade_plan(max_cost=c) refuses a cascade needing at least c logits per step: T4's levels 4, 3, 2 cost
    16 + 9 + 4 = 29."""
    a = automaton_named("T4")
    cost = sum(d * d for d in _t4_levels())
    with pytest.raises(ConstructionError) as err:
        H.cascade_plan(a, max_cost=cost)
    assert str(err.value) == f"the cascade needs {cost} logits per step, not fewer than {cost}"
    plan = H.cascade_plan(a, max_cost=cost + 1)
    assert [layer.heads for layer in plan.layers] == [[d] for d in _t4_levels()]
    assert plan.cost == cost


def test_cascade_key_limit_at_its_documented_value():
    """The flip-flop's cascade is one level: its keys are the symbols, so |Σ| = limit passes and limit + 1 fails."""
    ff = automaton_named("flipflop")
    plan = H.cascade_plan(_pad(ff, MAX_KEYS))
    assert len(plan.layers) == 1 and plan.layers[0].bank.shape[0] == MAX_KEYS
    with pytest.raises(LimitExceededError) as err:
        H.cascade_plan(_pad(ff, MAX_KEYS + 1))
    assert f"read {MAX_KEYS + 1} keys" in str(err.value) and f"limit of {MAX_KEYS}" in str(err.value)


def test_cascade_key_limit_counts_every_upper_level():
    """T4's last layer reads (symbol, level-1 index, level-2 index): |Σ|·4·3 keys, with the symbols padded."""
    levels = _t4_levels()
    per_symbol = int(np.prod(levels[:-1]))
    k = MAX_KEYS // per_symbol
    assert k * per_symbol <= MAX_KEYS < (k + 1) * per_symbol
    plan = H.cascade_plan(_pad(automaton_named("T4"), k))
    assert [layer.bank.shape[0] for layer in plan.layers] == [k * int(np.prod(levels[:i])) for i in range(3)]
    with pytest.raises(LimitExceededError, match=f"read {(k + 1) * per_symbol} keys"):
        H.cascade_plan(_pad(automaton_named("T4"), k + 1))


def test_auto_takes_the_cascade_at_the_documented_largest_size_only():
    """A 64-state flip-flop × counter: its cascade (levels 2 and 32) is far below 64² logits, and auto takes it; one
    state more (65) and auto no longer tries it although it would still be cheaper than 65²."""
    a = _ff_counter(AUTO_MAX // 2)
    assert a.n_states == AUTO_MAX and not a.is_group_automaton and not a.factors
    cascade = H.cascade_plan(a)
    assert cascade.cost < a.n_states**2
    plans = H.candidate_plans(a, "auto", "auto")
    assert plans[0].construction == "stacked" and plans[0].cost == cascade.cost
    b = _ff_counter(AUTO_MAX // 2, extra_state=True)
    assert b.n_states == AUTO_MAX + 1 and not b.is_group_automaton
    assert H.cascade_plan(b).cost < b.n_states**2
    assert [p.construction for p in H.candidate_plans(b, "auto", "auto")] == ["single"]


def test_auto_takes_the_cascade_from_the_documented_smallest_size():
    """(ab)* has 3 states and a cascade of two levels of 2 points: 8 < 9 logits, so auto (either heads) picks it;
    layers='single' never adds it."""
    a = automaton_named("regex:(ab)*")
    assert a.n_states == AUTO_MIN
    cascade = H.cascade_plan(a)
    assert cascade.cost < a.n_states**2
    for heads in ("auto", "single"):
        plans = H.candidate_plans(a, heads, "auto")
        assert plans[0].construction == "stacked" and plans[0].cost == cascade.cost
        assert [p.construction for p in H.candidate_plans(a, heads, "single")] == ["single"]
    model = compile_nfsm(a)
    assert model.construction == "stacked"
    ids = np.random.default_rng(0).integers(0, a.n_symbols, (2, 200))
    assert np.array_equal(load_model(model).predict_states(torch.from_numpy(ids)).numpy(), a.run(ids))


def test_groups_never_get_the_cascade():
    """A group automaton's cascade is not a candidate under auto (point-tracking heads are its plan)."""
    a = automaton_named("D5:gens")
    assert all(p.construction != "stacked" for p in H.candidate_plans(a, "auto", "auto"))


def _closure(perms: np.ndarray) -> set[tuple[int, ...]]:
    """Every element of the permutation group generated by the rows (brute force)."""
    n = perms.shape[1]
    seen = {tuple(range(n))}
    frontier = list(seen)
    while frontier:
        nxt = []
        for g in frontier:
            for p in perms:
                h = tuple(int(p[i]) for i in g)
                if h not in seen:
                    seen.add(h)
                    nxt.append(h)
        frontier = nxt
    return seen


@pytest.mark.parametrize(
    "perms",
    [
        [[0]],
        [[0, 1, 2]],
        [[0, 2, 1]],
        [[1, 0, 2, 3], [0, 1, 3, 2]],
        [[1, 2, 0, 3, 4]],
        [[0, 1, 3, 4, 2], [0, 2, 1, 3, 4]],
    ],
)
def test_base_determines_every_element(perms):
    """A base: points of the action whose images determine the group element (Example G.7)."""
    perms = np.asarray(perms, dtype=np.int64)
    base = H._base(perms)
    assert isinstance(base, list) and base and all(0 <= b < perms.shape[1] for b in base)
    group = _closure(perms)
    images = {tuple(g[b] for b in base) for g in group}
    assert len(images) == len(group)


def test_group_without_a_natural_action_gets_point_heads():
    """The Klein four-group given by its tables only (no ``action``): the heads track points of a faithful
    permutation representation and the model follows the automaton."""
    a = Automaton([[1, 0, 3, 2], [2, 3, 0, 1]], initial=0)
    assert a.action is None and a.is_group_automaton
    plan = H.permutation_heads_plan(a)
    assert plan.construction == "multihead"
    model = compile_nfsm(a, heads="multi")
    ids = np.random.default_rng(4).integers(0, 2, (3, 300))
    assert np.array_equal(load_model(model).predict_states(torch.from_numpy(ids)).numpy(), a.run(ids))


def test_natural_action_is_used_when_given():
    """With an ``action``, the heads have the action's degree and start at base points of that action: the
    image tuple of every group element (brute force over the action's closure) is distinct."""
    a = automaton_named("D5:gens")
    assert a.action is not None
    plan = H.permutation_heads_plan(a)
    deg = np.asarray(a.action).shape[1]
    assert plan.layers[0].heads == [deg] * len(plan.initial)
    group = _closure(np.asarray(a.action))
    assert len({tuple(g[b] for b in plan.initial) for g in group}) == len(group)


def test_product_with_a_one_state_factor():
    """A one-state factor gets a head of one index; the other head is its factor's own state."""
    f1 = random_automaton(3, 2, 12)
    assert not f1.is_group_automaton  # else point-tracking heads (9 logits) would beat the product's 9 + 1
    f2 = Automaton([[0], [0]], symbols=["a", "b"], initial=0)
    a = product(f1, f2)
    plan = H.product_heads_plan(a)
    assert plan.layers[0].heads == [3, 1]
    model = compile_nfsm(a, heads="multi")
    assert model.construction == "product"
    ids = np.random.default_rng(5).integers(0, 2, (2, 300))
    idx = load_model(model).head_indices(torch.from_numpy(ids)).numpy()
    assert np.array_equal(idx[..., 0], f1.run(ids)) and np.all(idx[..., 1] == 0)
    for word in cartesian(range(2), repeat=4):
        ids = np.array([word])
        assert np.array_equal(load_model(model).predict_states(torch.from_numpy(ids)).numpy(), a.run(ids))
