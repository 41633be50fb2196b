"""The Python API takes what users hand it (issue 9, item 5): Python ints are symbol ids and strings are names,
``predict_states`` takes numpy arrays and lists and refuses out-of-range ids, ``verify_model`` takes a loaded
module as well as a CompiledModel."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.errors import UnknownSymbolError
from fsa2rnn.nn import load_model
from fsa2rnn.realize.verify import verify_model


def test_run_ints_are_ids_strings_are_names():
    a = resolve_spec("parity")  # symbols named "0" and "1": the two readings must not be confused
    want = [a.state_index(s) for s in ("even", "odd", "odd")]
    assert a.run([0, 1, 0]).tolist() == want
    assert a.run(["0", "1", "0"]).tolist() == want
    assert a.run(np.array([0, 1, 0])).tolist() == want and a.run([np.int64(0), 1, 0]).tolist() == want
    assert a.run([[0, 1, 0], [1, 1, 1]]).tolist() == [want, [1, 0, 1]]
    assert a.final_state([1, 1, 1]) == 1 and a.accepts([1]) and not a.accepts(["1", "1"])
    with pytest.raises(UnknownSymbolError, match="symbol id 2 is out of range .*names are given as strings"):
        a.run([0, 2])
    with pytest.raises(UnknownSymbolError, match="unknown symbol name '2' .*ids 0..1 are given as ints"):
        a.run(["0", "2"])
    with pytest.raises(UnknownSymbolError, match="mixes symbol names"):
        a.run([0, "1"])
    with pytest.raises(UnknownSymbolError, match="got float"):
        a.run([0.0])


@pytest.fixture(scope="module", params=["householder", "diagonal", "nfsm"])
def compiled(request):
    from fsa2rnn import compiler

    a = resolve_spec("Z5")
    build = {"householder": compiler.compile_householder, "diagonal": compiler.compile_diagonal}
    return a, build.get(request.param, compiler.compile_nfsm)(a)


def test_predict_states_takes_numpy_and_lists(compiled):
    a, model = compiled
    net = load_model(model)
    ids = np.random.default_rng(0).integers(0, a.n_symbols, size=(3, 20))
    want = a.run(ids)
    assert np.array_equal(net.predict_states(torch.from_numpy(ids)).numpy(), want)
    assert np.array_equal(net.predict_states(ids).numpy(), want)
    assert np.array_equal(net.predict_states(ids.tolist()).numpy(), want)
    assert np.array_equal(net.predict_states(ids[0]).numpy(), want[0])


def test_predict_states_refuses_out_of_range_ids(compiled):
    a, model = compiled
    net = load_model(model)
    for bad in (a.n_symbols, -1):
        ids = np.zeros((2, 6), dtype=np.int64)
        ids[1, 4] = bad
        with pytest.raises(UnknownSymbolError, match=f"symbol id {bad} is out of range"):
            net.predict_states(ids)
        # past a word's length the entries are padding: anything goes there, and the answer is −1
        out = net.predict_states(ids, lengths=np.array([6, 4]))
        assert out[1, 4:].tolist() == [-1, -1] and out[0].tolist() == a.run(ids[0]).tolist()
    with pytest.raises(UnknownSymbolError, match="must be integers"):
        net.predict_states(np.zeros((1, 3)))


def test_verify_model_takes_what_load_model_returns(compiled):
    _, model = compiled
    direct = verify_model(model, length=50, n_words=4)
    loaded = verify_model(load_model(model), length=50, n_words=4)
    assert direct["ok"] and loaded["ok"]
    assert {k: v for k, v in direct.items()} == loaded
