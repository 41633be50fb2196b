"""A one-layer NFSM read through its tables (nn/table_predict.py) against the per-position forward (the reference,
``predictor(read="logits")``): the same predictions chunk by chunk, the same carried state, the same L_max."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch

from fsa2rnn.fsa.errors import UnknownSymbolError
from fsa2rnn.nn.lmax import failing_length
from fsa2rnn.nn.model import SequenceModel
from fsa2rnn.nn.table_predict import NFSMTablePredictor, table_readable

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _model(seed: int, heads, mlp_ratio: float, vocab: int = 4, classes: int = 5, dtype=torch.float64):
    torch.manual_seed(seed)
    m = SequenceModel(vocab, classes, "nfsm", 1, 16, layer_args={"heads": heads}, mlp_ratio=mlp_ratio)
    return m.to(dtype)


CASES = [(0, [8], 0.0), (1, [4, 3], 2.0), (2, [5, 5, 2], 0.0), (3, [16], 1.0)]


@pytest.mark.parametrize("seed,heads,mlp", CASES)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_table_scan_predicts_what_the_forward_predicts(seed, heads, mlp, dtype):
    model = _model(seed, heads, mlp, dtype=dtype)
    assert table_readable(model)
    fast, ref = model.predictor(), model.predictor(read="logits")
    assert isinstance(fast, NFSMTablePredictor)
    rng = np.random.default_rng(seed)
    sf = sr = None
    for length in (7, 40, 1):  # chunks continue the same words
        ids = rng.integers(0, 4, (24, length))
        got, sf = fast(ids, sf)
        want, sr = ref(ids, sr)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(sf[0]["indices"].numpy(), sr[0]["indices"].numpy())
    ids = rng.integers(0, 4, (24, 9))  # the states are interchangeable
    np.testing.assert_array_equal(fast(ids, sr)[0], ref(ids, sf)[0])


def test_failing_length_is_the_same():
    model = _model(5, [6, 4], 0.0)

    def words(rng, n, length, carry):  # the "class" is a fixed function of the prefix: a mod-5 count
        start = np.zeros(n, dtype=np.int64) if carry is None else carry
        ids = rng.integers(0, 4, (n, length))
        states = (start[:, None] + np.cumsum(ids == 1, axis=1)) % 5
        return ids, states, states[:, -1]

    for threshold in (1.0, 0.05):
        kw = dict(start=2, cap=256, n_words=32, threshold=threshold, seed=1)
        want = failing_length(model.predictor(read="logits"), words, **kw)
        assert failing_length(model.predictor(), words, **kw) == want


def test_other_models_and_bad_ids():
    torch.manual_seed(0)
    two = SequenceModel(4, 3, "nfsm", 2, 16, layer_args={"heads": [4]})
    assert not table_readable(two) and not isinstance(two.predictor(), NFSMTablePredictor)
    assert not table_readable(SequenceModel(4, 3, "deltaproduct", 1, 16))
    with pytest.raises(UnknownSymbolError):
        _model(0, [4], 0.0).predictor()(np.array([[0, 4]]), None)


@pytest.mark.parametrize("eta", [0.0, 0.5, 1.5])
def test_perturbed_trajectories_through_the_tables_are_the_forward_ones(eta):
    """verify RUN --eta --lmax on a one-layer NFSM (realize/trained_robust.py): the same random η-trajectories by
    the table scan as by the per-step forward (the same draws; above η* = 1/√2 heads jump)."""
    from fsa2rnn.realize.trained_robust import perturbed_predictor

    model = _model(4, [5, 3], 1.0)
    fast, ref = perturbed_predictor(model, eta, seed=3), perturbed_predictor(model, eta, seed=3, read="logits")
    rng = np.random.default_rng(0)
    sf = sr = None
    for length in (9, 30):
        ids = rng.integers(0, 4, (16, length))
        got, sf = fast(ids, sf)
        want, sr = ref(ids, sr)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(sf[0]["indices"].numpy(), sr[0]["indices"].numpy())


@pytest.mark.parametrize("seed,heads,mlp", CASES[:3])
def test_extraction_labels_through_the_tables(monkeypatch, seed, heads, mlp):
    """realize/extract.py labels every reachable (configuration, last symbol) pair by one forward per pair; the
    same labels as the model's predictions at the end of each pair's shortest word."""
    from fsa2rnn.realize.extract import _trained_nfsm_machine

    ex = importlib.import_module("fsa2rnn.realize.extract")  # the module (fsa2rnn.realize.extract is the function)

    model = _model(seed, heads, mlp)
    symbols, classes = ("a", "b", "c", "d"), tuple("vwxyz")
    fast = _trained_nfsm_machine(model, symbols, classes)
    monkeypatch.setattr(ex, "table_readable", lambda m: False)
    slow = _trained_nfsm_machine(model, symbols, classes)
    assert fast.automaton.n_states == slow.automaton.n_states > 4
    np.testing.assert_array_equal(fast.labels, slow.labels)
