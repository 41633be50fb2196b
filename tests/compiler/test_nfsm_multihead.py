"""Multi-head and stacked NFSM plans: point-tracking heads for permutation groups (Example G.7), one head per
direct-product factor, stacked layers from the holonomy cascade (Prop. G.6) agreeing with the single head."""

import numpy as np
import pytest
import torch
from cases import automaton_named, random_automaton
from sympy.combinatorics import Permutation

from fsa2rnn.compiler import compile_nfsm
from fsa2rnn.fsa.errors import ConstructionError
from fsa2rnn.fsa.product import product
from fsa2rnn.nn import load_model

DTYPES = (torch.float32, torch.bfloat16, torch.float16)


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _states(model, ids, dtype=torch.float32):
    module = load_model(model)
    module.to(dtype)
    return module.predict_states(torch.from_numpy(ids)).numpy()


def test_m11_heads_of_eleven_indices():
    a = automaton_named("M11")
    model = compile_nfsm(a)
    dims = model.summary["head_dims"]
    assert model.construction == "multihead"
    assert len(dims) == 1 and set(dims[0]) == {11} and len(dims[0]) <= 4  # M11 is sharply 4-transitive
    assert model.summary["logits_per_step"] == 121 * len(dims[0])  # not 7920² for one head


def test_m11_heads_follow_the_images_of_base_points():
    """Independent oracle: sympy permutation products give where each base point goes."""
    a = automaton_named("M11")
    model = compile_nfsm(a)
    module = load_model(model)
    base = model.header["layers"][0]["initial"]
    ids = np.random.default_rng(0).integers(0, a.n_symbols, (1, 60))
    idx = module.head_indices(torch.from_numpy(ids)).numpy()[0]
    perms = [Permutation(list(map(int, row))) for row in a.action]
    g = Permutation(list(range(11)))
    for t, x in enumerate(ids[0]):
        g = g * perms[x]  # sympy: p*q applies p first, then q — "apply x_1, then x_2, ..."
        assert [g(b) for b in base] == idx[t].tolist()


@pytest.mark.parametrize("name", ["S5", "S5:gens", "S5:swaps", "S5:s3"])
def test_s5_at_most_five_heads_of_five(name):
    a = automaton_named(name)
    model = compile_nfsm(a)
    dims = model.summary["head_dims"][0]
    assert set(dims) == {5} and len(dims) <= 5
    ids = np.random.default_rng(1).integers(0, a.n_symbols, (2, 500))
    for dtype in DTYPES:
        assert np.array_equal(_states(model, ids, dtype), a.run(ids))


@pytest.mark.parametrize("name", ["A5", "A5:gens", "PSL(2,7):gens"])
def test_other_groups_track_points(name):
    a = automaton_named(name)
    model = compile_nfsm(a)
    assert model.construction == "multihead"
    assert set(model.summary["head_dims"][0]) == {a.action.shape[1]}


def test_direct_product_one_head_per_factor():
    f1, f2, f3 = random_automaton(3, 2, 1), random_automaton(4, 2, 2), random_automaton(2, 2, 3)
    a = product(f1, f2, f3)
    model = compile_nfsm(a, heads="multi")
    assert model.construction == "product"
    assert model.summary["head_dims"] == [[3, 4, 2]]
    ids = np.random.default_rng(2).integers(0, 2, (3, 1000))
    for dtype in DTYPES:
        assert np.array_equal(_states(model, ids, dtype), a.run(ids))
    # each head is its factor's own state (independent oracle: the factors run alone)
    idx = load_model(model).head_indices(torch.from_numpy(ids)).numpy()
    for h, f in enumerate((f1, f2, f3)):
        assert np.array_equal(idx[..., h], f.run(ids))


def test_product_builtin_auto_picks_factor_heads():
    a = automaton_named("gridworld:3")
    assert a.factors is not None
    model = compile_nfsm(a)
    assert model.construction == "product" and model.summary["head_dims"] == [[3, 3]]


STACKED = ["flipflop", "flipflop:3", "T3", "T4", "T5", "even_pairs", "modarith:3", "regex:(ab)*", "cycle_nav", "Z3"]


@pytest.mark.parametrize("name", STACKED)
def test_stacked_layers_agree_with_single_head(name):
    a = automaton_named(name)
    stacked = compile_nfsm(a, layers="stacked")
    single = compile_nfsm(a, heads="single", layers="single")
    assert stacked.construction == "stacked"
    assert stacked.summary["layers"] == len(stacked.header["layers"])
    ids = np.random.default_rng(3).integers(0, a.n_symbols, (3, 1000))
    ref = _states(single, ids)
    assert np.array_equal(ref, a.run(ids))
    for dtype in DTYPES:
        assert np.array_equal(_states(stacked, ids, dtype), ref)


def test_stacked_levels_follow_the_cascade():
    """The T4 cascade has levels of 4, 3, 2 points (SgpDec's published decomposition): one layer per level, one head
    each."""
    model = compile_nfsm(automaton_named("T4"), layers="stacked")
    assert model.summary["head_dims"] == [[4], [3], [2]]
    assert [spec["upper"] for spec in model.header["layers"]] == [[], [0], [0, 1]]


def test_stacked_random_automata():
    for seed in range(6):
        a = random_automaton(3 + seed, 2, 500 + seed)
        stacked = compile_nfsm(a, layers="stacked")
        assert stacked.summary["layers"] >= 2
        ids = np.random.default_rng(seed).integers(0, 2, (2, 400))
        assert np.array_equal(_states(stacked, ids, torch.bfloat16), a.run(ids))


def test_multi_heads_need_a_group_or_product():
    with pytest.raises(ConstructionError, match="no multi-head plan"):
        compile_nfsm(automaton_named("T3"), heads="multi")


def _haar(seed: int, n: int) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((n, n)))
    return q * np.sign(np.diag(r))[None, :]


def test_dense_key_embeddings_are_drawn_per_layer_from_seed_plus_layer():
    """embedding="dense": layer i's key embedding is the Haar-orthogonal matrix drawn from seed + i, so the stacked
    layers get different embeddings; the default seed is 0 (compile_nfsm and nfsm_model alike); the model still
    tracks the automaton."""
    from fsa2rnn.compiler.targets.nfsm.automaton_to_nfsm import _first_realizing_plan, nfsm_model

    a = automaton_named("T4")
    model = compile_nfsm(a, layers="stacked", embedding="dense", seed=5)
    specs = model.header["layers"]
    assert len(specs) == 3
    for i, spec in enumerate(specs):
        assert np.array_equal(model.tensors[spec["embedding"]], _haar(5 + i, spec["n_keys"])), i
    ids = np.random.default_rng(1).integers(0, a.n_symbols, (2, 300))
    assert np.array_equal(_states(model, ids), a.run(ids))
    default = compile_nfsm(a, layers="stacked", embedding="dense")
    assert np.array_equal(default.tensors[specs[1]["embedding"]], _haar(1, specs[1]["n_keys"]))
    plan, machine, readout = _first_realizing_plan(a, "auto", "stacked")
    direct = nfsm_model(a, machine, readout, construction="stacked", source="test", embedding="dense")
    assert all(np.array_equal(direct.tensors[k], v) for k, v in default.tensors.items())


def test_summary_width_is_a_number_for_one_layer_and_a_list_for_stacked_layers():
    """The summary's "width" is the one layer's Σ head sizes, or each stacked layer's (the T4 cascade: 4, 3, 2)."""
    assert compile_nfsm(automaton_named("T4"), heads="single", layers="single").summary["width"] == 4  # d = |Q|
    assert compile_nfsm(automaton_named("gridworld:3")).summary["width"] == 6  # two heads of 3
    assert compile_nfsm(automaton_named("T4"), layers="stacked").summary["width"] == [4, 3, 2]


def test_no_realizing_plan_is_one_construction_error_naming_each_plan(monkeypatch):
    """A plan whose start configuration reads out as another state is skipped; when none is left, one
    ConstructionError names every plan tried and why."""
    from fsa2rnn.compiler.targets.nfsm import automaton_to_nfsm
    from fsa2rnn.compiler.targets.nfsm.heads import single_head_plan

    a = automaton_named("Z3")
    wrong = single_head_plan(a.replace(initial=1))  # lifts the start to the configuration of state 1
    monkeypatch.setattr(automaton_to_nfsm, "candidate_plans", lambda *_: [wrong])
    with pytest.raises(ConstructionError) as err:
        compile_nfsm(a)
    assert str(err.value) == (
        "no NFSM plan realizes the automaton: single: the start configuration does not read out as the initial state"
    )
    monkeypatch.setattr(automaton_to_nfsm, "candidate_plans", lambda *_: [])
    with pytest.raises(ConstructionError, match=r"^no NFSM plan realizes the automaton: $"):
        compile_nfsm(a)
