"""The nn layers and model of compiled linear RNNs: predict_states/accept, lengths, dtypes, trainable parameters."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fsa2rnn.compiler import compile_diagonal, compile_householder
from fsa2rnn.fsa import ModelFileError, resolve_spec
from fsa2rnn.nn import load_model
from fsa2rnn.nn.compiled.lrnn_layers import DiagonalLinearRNN, GHLinearRNN


@pytest.fixture(scope="module")
def s5():
    a = resolve_spec("S5")
    return a, load_model(compile_householder(a))


def test_layers_are_the_trainable_classes(s5):
    _, net = s5
    layer = net.layers[0]
    assert isinstance(layer, GHLinearRNN)
    assert isinstance(layer.v, torch.nn.Parameter) and not layer.v.requires_grad
    # with gradients on, the factor-by-factor path is differentiable
    layer.v.requires_grad_(True)
    rows = torch.randint(0, layer.v.shape[0], (2, 30), generator=torch.Generator().manual_seed(0))
    for scan in ("sequential", "parallel"):
        h = layer(rows, mode="factors", scan=scan)
        (h**2).sum().backward()
        assert layer.v.grad is not None and torch.isfinite(layer.v.grad).all()
        layer.v.grad = None
    layer.v.requires_grad_(False)
    d = load_model(compile_diagonal(resolve_spec("Z60")))
    assert isinstance(d.layers[0], DiagonalLinearRNN)


def test_lengths_mask_padding(s5):
    a, net = s5
    ids = torch.from_numpy(np.random.default_rng(0).integers(0, a.n_symbols, size=(3, 40)))
    lengths = torch.tensor([40, 17, 0])
    out = net.predict_states(ids, lengths)
    full = net.predict_states(ids)
    for b, n in enumerate(lengths.tolist()):
        assert torch.equal(out[b, :n], full[b, :n])
        assert (out[b, n:] == -1).all()
    assert np.array_equal(full.numpy(), a.run(ids.numpy()))
    # padding ids outside the alphabet do not disturb earlier positions
    padded = ids.clone()
    padded[1, 17:] = -1
    assert torch.equal(net.predict_states(padded, lengths), out)


def test_one_dimensional_input_and_dtypes(s5):
    a, net = s5
    w = torch.from_numpy(np.random.default_rng(1).integers(0, a.n_symbols, size=300))
    want = a.run(w.numpy())
    assert np.array_equal(net.predict_states(w).numpy(), want)
    for dt in (torch.float32, torch.bfloat16, torch.float16):
        low = load_model(net.compiled).to(dt)
        assert low.dtype == dt
        assert np.array_equal(low.predict_states(w).numpy(), want)  # fused 0/1 products: exact at every dtype


def test_predict_accept_parity():
    a = resolve_spec("parity")
    net = load_model(compile_householder(a))
    ids = torch.from_numpy(np.random.default_rng(2).integers(0, 2, size=(2, 100)))
    acc = net.predict_accept(ids)
    want = a.accepting[a.run(ids.numpy())]
    assert np.array_equal(acc.numpy(), want)


def test_rotation_drifts_in_bfloat16_but_not_float64():
    # irrational angles: exact in the negative-eigenvalues sense only up to rounding (docs/theory.md, "Two meanings of
    # finite precision")
    a = resolve_spec("Z60")
    m = compile_householder(a)
    ids = torch.from_numpy(np.random.default_rng(3).integers(0, 60, size=(2, 3000)))
    want = a.run(ids.numpy())
    assert np.array_equal(load_model(m).predict_states(ids).numpy(), want)
    low = load_model(m).to(torch.bfloat16).predict_states(ids).numpy()
    assert not np.array_equal(low, want)


def test_tampered_model_refused(tmp_path):
    m = compile_householder(resolve_spec("Z3"))
    m.tensors["L0.B"] = m.tensors["L0.B"] + 1
    with pytest.raises(ModelFileError, match="modified"):
        load_model(m)


@pytest.mark.parametrize("spec", ["S5", "T4", "flipflop", "parity"])
def test_auto_scan_is_the_sequential_recurrence_bit_for_bit(spec):
    """Permutation and reset layers run by the chunked scan of their monomial form (scan="auto", "parallel"):
    the same hidden states as the sequential recurrence, bit for bit, at every dtype, on long words."""
    a = resolve_spec(spec)
    m = compile_householder(a)
    ids = torch.from_numpy(np.random.default_rng(5).integers(0, a.n_symbols, size=(2, 1500)))
    want = a.run(ids.numpy(), start=np.full(2, m.initial))
    for dt in (torch.float64, torch.bfloat16):
        net = load_model(m).to(dt)
        ref_h, ref_s, _ = net.layer_states(ids, scan="sequential")
        for scan in ("auto", "parallel"):
            h, s, _ = net.layer_states(ids, scan=scan)
            assert all(torch.equal(x, y) for x, y in zip(h, ref_h)) and all(torch.equal(x, y) for x, y in zip(s, ref_s))
        assert np.array_equal(net.predict_states(ids).numpy(), want)


@pytest.mark.parametrize("compile_fn", [compile_householder, compile_diagonal])
def test_parallel_scan_of_rotations_and_diagonals_in_float64(compile_fn):
    a = resolve_spec("Z60")
    net = load_model(compile_fn(a))
    ids = torch.from_numpy(np.random.default_rng(6).integers(0, 60, size=(3, 20000)))
    assert np.array_equal(net.predict_states(ids, scan="parallel").numpy(), a.run(ids.numpy()))


def test_hash_readout_of_degree_15_is_exact():
    """Keys Σ (h_i − 1)·15^i reach 15^15 > 2^53: the readout hashes in integers where float64 would round."""
    from sympy.combinatorics import Permutation, PermutationGroup

    from fsa2rnn.fsa.library.word_problems import word_problem

    a = word_problem(PermutationGroup([Permutation(list(range(1, 15)) + [0])]))
    m = compile_householder(a, construction="permutation")
    assert m.header["layers"][0]["width"] == 15 and m.header["layers"][0]["readout"] == "hash"
    ids = np.random.default_rng(7).integers(0, a.n_symbols, size=(2, 300))
    assert np.array_equal(load_model(m).predict_states(ids).numpy(), a.run(ids))
