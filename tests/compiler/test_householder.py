"""compile_householder: every construction realizes its automaton (exactly, and in float64 on long random words)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from cases import CASES, case_automaton
from helpers import check_gh_weights

from fsa2rnn.compiler import compile_householder
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.targets.lrnn.exact import exact_check
from fsa2rnn.fsa import Automaton, ConstructionError, NotAGroupError, UnknownStateError, resolve_spec
from fsa2rnn.fsa.errors import LimitExceededError
from fsa2rnn.nn import load_model

LENGTH = 1000


def _words(a: Automaton, seed: int, n: int = 3, length: int = LENGTH) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, a.n_symbols, size=(n, length))


def _check_runs(model: CompiledModel, a: Automaton, seed: int = 0, **kw) -> None:
    net = load_model(model)
    ids = _words(a, seed)
    want = a.run(ids, start=np.full(len(ids), model.initial))  # the oracle: Automaton.run
    got = net.predict_states(torch.from_numpy(ids), **kw).numpy()
    assert np.array_equal(got, want)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_case_compiles_and_tracks_states(case):
    a = case_automaton(case)
    model = compile_householder(a, initial=None if a.initial is not None else 0)
    assert model.summary["verified"] is True
    if not case.is_group:
        assert model.construction == "cascade"
    check_gh_weights(model)
    _check_runs(model, a, seed=hash(case.name) % 1000)


@pytest.mark.parametrize("spec", ["T3", "T4", "flipflop", "Z3", "S3", "modarith:3"])
def test_cascade_construction_on_groups_and_monoids(spec):
    a = resolve_spec(spec)
    model = compile_householder(a, construction="cascade", initial=a.initial or 0)
    assert model.summary["verified"] and model.summary["layers"] >= 1
    check_gh_weights(model)
    for scan, mode in (("sequential", "factors"), ("parallel", "fused")):
        _check_runs(model, a, scan=scan, mode=mode)


def test_sizes_of_the_paper():
    s5_json = Automaton.from_spec(resolve_spec("S5").to_spec())  # 120 states, no hint of structure
    m = compile_householder(s5_json)
    assert (m.summary["width"], m.construction) == (5, "permutation")
    assert m.summary["factors_per_step"] <= 4
    assert compile_householder(resolve_spec("S5:swaps")).summary["factors_per_step"] == 1
    for spec in ("Z3", "Z60"):
        s = compile_householder(resolve_spec(spec)).summary
        assert (s["width"], s["factors_per_step"], s["construction"]) == (2, 2, "rotation")
    assert compile_householder(resolve_spec("parity")).summary["width"] == 1
    assert compile_householder(resolve_spec("M11")).summary["width"] == 11


@pytest.mark.parametrize("spec", ["Z3", "Z5", "Z60", "parity"])
def test_reflections2_two_layers_of_single_reflections(spec):
    a = resolve_spec(spec)
    m = compile_householder(a, construction="reflections2")
    assert m.summary["verified"] and m.summary["width"] == [1, 2] and m.summary["factors_per_step"] == 1
    assert {int(k) for k in np.unique(m.tensors["L1.fkind"])} == {4}  # angle reflections only
    _check_runs(m, a, scan="parallel")


@pytest.mark.parametrize(("spec", "k"), [("Z5", 5), ("S3", 3), ("S5:swaps", 2)])
def test_theorem3_bound_counts_the_points_a_generator_moves(spec, k):
    """Theorem 3's stated bound: k = the most points one ρ(δ_x) moves, at most k − 1 reflections per step, and the
    compiled model uses exactly that many (a k-cycle needs k − 1)."""
    s = compile_householder(resolve_spec(spec), construction="permutation").summary
    assert f"at most k − 1 = {k - 1} reflections per step (k = {k}," in s["bound"]
    assert s["factors_per_step"] == k - 1


def _cycle(n: int) -> Automaton:
    return Automaton.from_transformations({"a": [(i + 1) % n for i in range(n)]}, initial=0)


def test_permutation_degree_limit_of_the_hash_readout():
    """The hash readout keys a hidden vector by Σ (H_i − 1)·d^i < d^d, which fits int64 up to d = 15: a 15-cycle's
    natural action compiles (width 15), a 16-cycle's is refused before any key is computed."""
    model = compile_householder(_cycle(15), construction="permutation")
    assert model.summary["width"] == 15 and model.summary["verified"]
    with pytest.raises(LimitExceededError, match=r"has degree 16 \(limit 15 for the hash readout"):
        compile_householder(_cycle(16), construction="permutation")


def test_rotation_refuses_a_product_of_two_cyclic_groups():
    klein = Automaton.from_transformations({"a": [1, 0, 3, 2], "b": [2, 3, 0, 1]}, initial=0)
    with pytest.raises(ConstructionError, match=r"needs a cyclic transition group, but it is C2 x C2$"):
        compile_householder(klein, construction="rotation")


def test_constructions_that_do_not_apply():
    with pytest.raises(ConstructionError, match="cyclic"):
        compile_householder(resolve_spec("S3"), construction="rotation")
    with pytest.raises(NotAGroupError):
        compile_householder(resolve_spec("T3"), construction="permutation")
    with pytest.raises(ConstructionError, match="unknown construction"):
        compile_householder(resolve_spec("S3"), construction="magic")
    with pytest.raises(UnknownStateError, match="--initial"):
        compile_householder(Automaton([[1, 0]]))


def test_initial_override():
    a = Automaton([[1, 2, 0]], states=["a", "b", "c"])
    m = compile_householder(a, initial="b")
    assert m.initial == 1
    _check_runs(m, a)


def _tampered(model: CompiledModel, name: str, fn) -> CompiledModel:
    t = {k: v.copy() for k, v in model.tensors.items()}
    t[name] = fn(t[name])
    return CompiledModel(dict(model.header), t)


def test_exact_check_rejects_tampering():
    a = resolve_spec("S5:swaps")
    m = compile_householder(a)
    assert exact_check(m, a)["ok"]

    def swap_rows(x):
        x[1][[0, 1]] = x[1][[1, 0]]
        return x

    cases = {
        "L0.A": swap_rows,
        "L0.beta": lambda x: np.where(x == 2, 2.5, x),
        "L0.v": lambda x: x * 0.9,
        "L0.h0": lambda x: x + 1,
        "readout.states": lambda x: np.roll(x, 1),
    }
    for name, fn in cases.items():
        res = exact_check(_tampered(m, name, fn), a)
        assert not res["ok"], name
    # a model for another automaton: the comparison with δ fails
    other = Automaton(a.transitions[:, np.argsort(a.transitions[1])], states=a.states, symbols=a.symbols, initial=0)
    assert not exact_check(m, other)["ok"]


def test_exact_check_needs_closure_not_just_decoding():
    a = resolve_spec("flipflop")
    m = compile_householder(a)
    # resets to 2·e_q still decode to q by nearest code point, but leave the code points: closure fails
    bad = _tampered(m, "L0.B", lambda x: 2 * x)
    res = exact_check(bad, a)
    assert not res["ok"] and "closure" in res["failure"]


def test_rotation_tampering_detected():
    a = resolve_spec("Z60")
    m = compile_householder(a)
    assert not exact_check(_tampered(m, "L0.fargs", lambda x: x + np.array([0, 0])[None, None] + (x == 7)), a)["ok"]
    assert not exact_check(_tampered(m, "L0.codes", lambda x: x[::-1].copy()), a)["ok"]


def test_automaton_from_model_reads_back_the_automaton():
    from fsa2rnn.realize.verify import automaton_from_model

    for spec in ("S5:swaps", "T3", "Z60"):
        a = resolve_spec(spec)
        back = automaton_from_model(compile_householder(a))
        assert back.states == a.states and back.symbols == a.symbols and back.initial == a.initial
        assert np.array_equal(back.transitions, a.transitions)  # every state is reachable in these three


@pytest.mark.parametrize("construction", ["auto", "cascade", "permutation", "rotation"])
def test_degenerate_automata(construction):
    from fsa2rnn.compiler import compile_diagonal

    one = Automaton([[0], [0]], initial=0)
    fixed = Automaton([[1, 0, 3, 2, 4]], initial=4)  # the initial state is a fixed point: trivial group on its orbit
    for a in (one, fixed):
        m = compile_householder(a, construction=construction)
        assert m.summary["verified"]
        _check_runs(m, a)
    m = compile_diagonal(one, construction="cascade")
    assert m.summary["verified"]
    _check_runs(m, one)


def test_m11_without_its_action_is_found_on_11_points():
    a = Automaton.from_spec(resolve_spec("M11").to_spec())  # 7920 states, no natural action
    m = compile_householder(a)
    assert (m.construction, m.summary["width"], m.summary["verified"]) == ("permutation", 11, True)
    assert m.summary["group_order"] == 7920


def test_large_cascade_refused_before_decomposing():
    big = Automaton(np.random.default_rng(0).integers(0, 3000, size=(3, 3000)), initial=0)
    with pytest.raises(ConstructionError, match=r"limit 20000000"):
        compile_householder(big)
