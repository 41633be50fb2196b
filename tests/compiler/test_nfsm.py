"""Compiled NFSM models track the state of every case automaton and of random automata, in float32, bfloat16 and
float16; the extracted tables match the target. Oracle: Automaton.run (the transition table read step by step)."""

import numpy as np
import pytest
import torch
from cases import CASES, automaton_named, case_automaton, random_automaton

from fsa2rnn.compiler import compile_nfsm
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.fsa import Automaton
from fsa2rnn.fsa.errors import LimitExceededError, SpecError, UnknownStateError, UnknownSymbolError
from fsa2rnn.nn import load_model
from fsa2rnn.realize.extract import extract_and_compare

DTYPES = (torch.float32, torch.bfloat16, torch.float16)
LENGTH = 1000


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _check_states(automaton: Automaton, model: CompiledModel, seed: int, bsz: int = 3, length: int = LENGTH) -> None:
    module = load_model(model)
    ids = np.random.default_rng(seed).integers(0, automaton.n_symbols, (bsz, length))
    expected = automaton.run(ids)
    for dtype in DTYPES:
        module.to(dtype)
        got = module.predict_states(torch.from_numpy(ids)).numpy()
        assert np.array_equal(got, expected), f"{automaton.name} at {dtype}"


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_automata(case):
    a = case_automaton(case)
    model = compile_nfsm(a)
    assert model.summary["verified"] is True
    _check_states(a, model, seed=len(case.name))
    for dtype in ("float32", "bfloat16", "float16"):
        report = extract_and_compare(model, a, dtype=dtype)
        assert report["match"], report["statement"]
        assert all(report["tables_equal_compiled"])


@pytest.mark.parametrize("case", [c for c in CASES if c.has_accepting], ids=lambda c: c.name)
def test_predict_accept(case):
    a = case_automaton(case)
    module = load_model(compile_nfsm(a))
    ids = np.random.default_rng(1).integers(0, a.n_symbols, (2, 200))
    expected = a.accepting[a.run(ids)]
    assert np.array_equal(module.predict_accept(torch.from_numpy(ids)).numpy(), expected)


def test_two_hundred_random_automata_single_head():
    for seed in range(200):
        n, k = 2 + seed % 11, 1 + seed % 4
        a = random_automaton(n, k, seed)
        model = compile_nfsm(a, heads="single", layers="single")
        # the single head's tables are δ itself (Prop. G.1), read back independently of the compiler's bookkeeping
        w, b = model.tensors["layers.0.weight"], model.tensors["layers.0.bias"]
        logits = (w.T + b).reshape(k, n, n)
        assert np.array_equal(logits.argmax(-1), a.transitions)
        _check_states(a, model, seed, bsz=2)
        for dtype in ("float32", "bfloat16", "float16"):
            assert extract_and_compare(model, a, dtype=dtype)["match"]


def test_random_automata_auto_plans():
    seen = set()
    for seed in range(12):
        a = random_automaton(3 + seed % 8, 2 + seed % 2, 1000 + seed)
        model = compile_nfsm(a)
        seen.add(model.construction)
        _check_states(a, model, seed, bsz=2, length=300)
        assert extract_and_compare(model, a, dtype="float16")["match"]
    assert seen <= {"single", "stacked"}


def test_lengths_and_padding():
    a = automaton_named("T4")
    module = load_model(compile_nfsm(a, layers="stacked"))
    ids = np.random.default_rng(2).integers(0, a.n_symbols, (3, 50))
    lengths = torch.tensor([50, 13, 0])
    full = a.run(ids)
    padded = ids.copy()
    padded[1, 13:] = -1  # padding values are never read
    padded[2, :] = a.n_symbols + 5
    got = module.predict_states(torch.from_numpy(padded), lengths).numpy()
    for b, n in enumerate([50, 13, 0]):
        assert np.array_equal(got[b, :n], full[b, :n])
        assert np.all(got[b, n:] == -1)


def test_save_load_round_trip(tmp_path):
    a = automaton_named("S5")
    model = compile_nfsm(a)
    path = tmp_path / "s5.safetensors"
    model.save(path)
    loaded = CompiledModel.load(path)
    assert loaded.header["layers"] == model.header["layers"]
    _check_states(a, loaded, seed=9, bsz=2, length=200)


def test_initial_state_option_and_errors():
    a = random_automaton(4, 2, 0, initial=False)
    with pytest.raises(UnknownStateError, match="initial"):
        compile_nfsm(a)
    model = compile_nfsm(a, initial="q2")
    assert model.initial == 2
    module = load_model(model)
    assert module.predict_states(torch.tensor([[0, 1, 1]])).tolist()[0] == a.run(np.array([0, 1, 1]), start=2).tolist()
    with pytest.raises(UnknownSymbolError, match="symbol id 2"):
        module.predict_states(torch.tensor([[0, 2]]))
    with pytest.raises(SpecError, match="heads"):
        compile_nfsm(a, initial=0, heads="many")
    with pytest.raises(SpecError, match="layers"):
        compile_nfsm(a, initial=0, layers="deep")
    with pytest.raises(SpecError, match="margin"):
        compile_nfsm(a, initial=0, margin=0.0)
    with pytest.raises(SpecError, match="margin"):
        compile_nfsm(a, initial=0, margin=float("nan"))


def test_single_head_limit_on_m11():
    m11 = automaton_named("M11")
    with pytest.raises(LimitExceededError, match="over the limit"):
        compile_nfsm(m11, heads="single", layers="single")


def test_sparse_readout_path(monkeypatch):
    """Large configuration spaces read out by binary search over the sorted codes; same states as the dense table."""
    import fsa2rnn.compiler.keys as keys

    a = automaton_named("A5")
    model = compile_nfsm(a)
    ids = np.random.default_rng(4).integers(0, a.n_symbols, (2, 300))
    monkeypatch.setattr(keys, "DENSE_KEYS", 0)
    module = load_model(model)
    assert module.readout.dense is None
    assert np.array_equal(module.predict_states(torch.from_numpy(ids)).numpy(), a.run(ids))
