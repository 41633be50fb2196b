"""The margin certificate: sufficient margins are certified and hold at every tested length; too-small margins are
flagged, with a word on which the model really errs; the rounding bound is sound."""

import numpy as np
import pytest
import torch
from cases import automaton_named, random_automaton
from hypothesis import given
from hypothesis import strategies as st

from fsa2rnn.compiler import compile_nfsm
from fsa2rnn.nn import load_model
from fsa2rnn.realize.certificate import logit_error_bound, margin_certificate, unit_roundoff

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.mark.parametrize("name,kw", [("S5", {}), ("T4", {"layers": "stacked"}), ("parity", {}), ("Z60", {})])
def test_default_margin_certified_and_holds(name, kw):
    a = automaton_named(name)
    model = compile_nfsm(a, **kw)
    module = load_model(model)
    ids = np.random.default_rng(0).integers(0, a.n_symbols, (2, 5000))
    for dt, tdt in DTYPES.items():
        cert = margin_certificate(model, dt)
        assert cert["certified"], cert["statement"]
        assert cert["statement"].startswith(f"length-independent at dtype {dt}")
        assert cert["margin"] > 2 * cert["bound"] and cert["failing_word"] is None
        module.to(tdt)
        assert np.array_equal(module.predict_states(torch.from_numpy(ids)).numpy(), a.run(ids))


@pytest.mark.parametrize("name,kw", [("S5", {}), ("T4", {}), ("T4", {"layers": "stacked"}), ("M11", {})])
def test_too_small_margin_flagged_and_model_really_errs(name, kw):
    a = automaton_named(name)
    model = compile_nfsm(a, margin=1e-3, **kw)  # 1 + 1e-3 rounds to 1 in bfloat16 (ulp 2^-7)
    cert = margin_certificate(model, "bfloat16")
    assert not cert["certified"] and cert["rows_below"] > 0
    assert cert["statement"].startswith("not length-independent at dtype bfloat16")
    word = np.array([a.symbol_index(x) for x in cert["failing_word"]])
    module = load_model(model).to(torch.bfloat16)
    got = module.predict_states(torch.from_numpy(word[None, :])).numpy()[0]
    want = a.run(word)
    assert got[-1] != want[-1]
    # the same margin is certified in float32 and holds there
    cert32 = margin_certificate(model, "float32")
    assert cert32["certified"], cert32["statement"]
    assert np.array_equal(load_model(model).to(torch.float32).predict_states(torch.from_numpy(word[None, :]))[0], want)


def test_insufficient_margin_without_error_is_not_certified_but_said_so():
    a = random_automaton(7, 3, 5)
    model = compile_nfsm(a, margin=1e-3, heads="single", layers="single")  # float16: 1 + 2^-10 survives, barely
    cert = margin_certificate(model, "float16")
    assert not cert["certified"] and cert["failing_word"] is None and cert["tables_match"]
    assert cert["statement"].startswith("not certified at dtype float16")
    ids = np.random.default_rng(1).integers(0, 3, (2, 2000))
    assert np.array_equal(load_model(model).to(torch.float16).predict_states(torch.from_numpy(ids)).numpy(), a.run(ids))


def test_underflow_and_overflow():
    a = random_automaton(4, 2, 9)
    tiny = compile_nfsm(a, margin=1e-30, offset=0.0, heads="single", layers="single")  # float16: flushes to 0
    cert = margin_certificate(tiny, "float16")
    assert not cert["certified"] and cert["failing_word"] is not None
    assert margin_certificate(tiny, "float32")["certified"]  # 1e-30 is a normal float32; η = 2^-150 is far below
    huge = compile_nfsm(a, margin=1e6, offset=0.0, heads="single", layers="single")  # float16 max is 65504
    assert not margin_certificate(huge, "float16")["certified"]
    assert margin_certificate(huge, "bfloat16")["certified"]


@given(seed=st.integers(0, 10**6), k=st.integers(1, 24), p=st.integers(1, 12), scale=st.sampled_from([1e-3, 1.0, 50.0]))
def test_bound_is_sound_for_dense_weights(seed, k, p, scale):
    """|L̂ − L| ≤ β for dense random embeddings and weights (an orthogonal embedding, as a trained model might use)."""
    g = np.random.default_rng(seed)
    emb, _ = np.linalg.qr(g.standard_normal((k, k)))
    w = g.standard_normal((p, k)) * scale
    b = g.standard_normal(p) * scale
    exact = emb @ w.T + b  # float64: its own error (~1e-16·scale) is far below the bounds at the tested dtypes
    for name, tdt in DTYPES.items():
        beta = logit_error_bound(emb, w, b, name)
        lin = torch.nn.functional.linear
        got = lin(torch.from_numpy(emb).to(tdt), torch.from_numpy(w).to(tdt), torch.from_numpy(b).to(tdt)).double()
        err = np.abs(got.numpy() - exact)
        assert np.all(err <= beta), (name, float((err - beta).max()))


def test_unit_roundoff_values():
    assert unit_roundoff("float32")[0] == 2.0**-24
    assert unit_roundoff("bfloat16")[0] == 2.0**-8
    assert unit_roundoff("float16") == (2.0**-11, 2.0**-25)


def test_certificate_summary_per_dtype():
    from fsa2rnn.realize.certificate import certificate_summary

    summary = certificate_summary(compile_nfsm(automaton_named("S5"), margin=1e-3))
    assert [summary[d]["certified"] for d in ("float32", "bfloat16", "float16")] == [True, False, False]


@pytest.mark.parametrize("name,kw", [("S5", {}), ("T4", {"layers": "stacked"}), ("A5", {"heads": "single"})])
def test_dense_embedding_certificate_is_consistent(name, kw):
    """With a dense orthogonal key embedding every logit is a K-term dot product. Whatever the certificate says at
    each dtype is borne out: certified ⇒ right on long random words; a failing word ⇒ the model errs on it."""
    a = automaton_named(name)
    seen = set()
    for margin in (1.0, 0.003):  # 0.003 < 2^-8: 1 + margin rounds to 1 in bfloat16
        model = compile_nfsm(a, embedding="dense", margin=margin, **kw)
        assert not np.allclose(model.tensors["layers.0.embedding"], np.eye(len(model.tensors["layers.0.embedding"])))
        module = load_model(model)
        ids = np.random.default_rng(3).integers(0, a.n_symbols, (2, 2000))
        for dt, tdt in DTYPES.items():
            cert = margin_certificate(model, dt)
            module.to(tdt)
            if cert["certified"]:
                seen.add("certified")
                assert np.array_equal(module.predict_states(torch.from_numpy(ids)).numpy(), a.run(ids))
            if cert["failing_word"] is not None:
                seen.add("fails")
                word = np.array([a.symbol_index(x) for x in cert["failing_word"]])
                assert module.predict_states(torch.from_numpy(word[None, :]))[0, -1] != a.final_state(word)
        assert margin_certificate(model, "float32")["certified"]
    assert seen == {"certified", "fails"}
