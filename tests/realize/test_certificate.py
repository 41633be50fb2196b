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
from fsa2rnn.realize.certificate import logit_error_bound, margin_certificate, smallest_normal, unit_roundoff

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
    # compile refuses margins that overflow a certified dtype; scale the weights by hand (float16 max is 65504)
    from fsa2rnn.compiler.model import CompiledModel

    one = compile_nfsm(a, margin=1.0, offset=0.0, heads="single", layers="single")
    t = dict(one.tensors, **{"layers.0.weight": one.tensors["layers.0.weight"] * 1e6})
    huge = CompiledModel(dict(one.header), t).seal()
    cert = margin_certificate(huge, "float16")
    assert not cert["certified"] and cert["bound"] == np.inf
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


# ---------------------------------------------------------------- flush-to-zero kernels and evaluation order


def _round(x: np.ndarray, tdt: torch.dtype) -> np.ndarray:
    """Correct rounding to ``tdt``, then flush-to-zero: anything below the smallest normal becomes 0."""
    y = torch.from_numpy(np.asarray(x, dtype=np.float64)).to(tdt).double().numpy()
    return np.where(np.abs(y) < torch.finfo(tdt).smallest_normal, 0.0, y)


def _ftz_linear(emb, w, b, tdt, *, acc, order, tree=False):
    """A flush-to-zero kernel, simulated independently of the certificate: stored inputs rounded to ``tdt`` and read
    as 0 when subnormal; every product and partial sum rounded to ``acc`` and flushed; terms summed in ``order``
    (indices into the embedding dimension, ``m`` = the bias), left to right or as a pairwise tree; the result
    rounded to ``tdt`` and flushed. Products of two ≤ 24-bit numbers are exact in float64."""
    e_, w_, b_ = _round(emb, tdt), _round(w, tdt), _round(b, tdt)
    m = e_.shape[1]
    terms = [
        np.broadcast_to(b_[None, :], (e_.shape[0], w_.shape[0]))
        if j == m
        else _round(e_[:, j, None] * w_[None, :, j], acc)
        for j in order
    ]
    if tree:
        while len(terms) > 1:
            terms = [
                _round(terms[i] + terms[i + 1], acc) if i + 1 < len(terms) else terms[i]
                for i in range(0, len(terms), 2)
            ]
        return _round(terms[0], tdt)
    s = np.zeros_like(terms[0])
    for t in terms:
        s = _round(s + t, acc)
    return _round(s, tdt)


def _exact_logits(emb, w, b):
    from fractions import Fraction

    fe = [[Fraction(float(v)) for v in row] for row in emb]
    fw = [[Fraction(float(v)) for v in row] for row in w]
    return [[sum((x * y for x, y in zip(er, wr)), Fraction(float(bi))) for wr, bi in zip(fw, b)] for er in fe]


_LOW = {"bfloat16": torch.bfloat16, "float16": torch.float16}


@given(
    seed=st.integers(0, 10**6),
    k=st.integers(1, 6),
    p=st.integers(1, 4),
    scale=st.sampled_from([2.0**-130, 2.0**-124, 2.0**-14, 2.0**-20, 1.0]),
    zeros=st.floats(0.0, 0.6),
)
def test_bound_is_sound_for_flush_to_zero_kernels_in_any_order(seed, k, p, scale, zeros):
    """|L̂ − L| ≤ β (exact rationals) for simulated flush-to-zero kernels — accumulating at the dtype or in float32,
    summing left to right in random orders or as a pairwise tree — on weights around the subnormal range."""
    g = np.random.default_rng(seed)
    emb = g.standard_normal((3, k)) * np.where(g.random((3, k)) < zeros, 0.0, 1.0) * g.choice([scale, 1.0], (3, k))
    w = g.standard_normal((p, k)) * scale * np.where(g.random((p, k)) < zeros, 0.0, 1.0)
    b = g.standard_normal(p) * scale * g.choice([0.0, 1.0], p)
    exact = _exact_logits(emb, w, b)
    from fractions import Fraction

    for name, tdt in _LOW.items():
        beta = logit_error_bound(emb, w, b, name)
        for acc in (tdt, torch.float32):
            for trial in range(3):
                order = list(g.permutation(k + 1))
                got = _ftz_linear(emb, w, b, tdt, acc=acc, order=order, tree=trial == 2)
                for i in range(3):
                    for j in range(p):
                        if np.isfinite(beta[i, j]):
                            assert abs(Fraction(float(got[i, j])) - exact[i][j]) <= Fraction(float(beta[i, j])), (
                                name,
                                acc,
                                trial,
                                i,
                                j,
                            )


def _two_state_64_symbol_model(scale_embedding: float, scale_weight: float):
    """The adversarial model: 2 states, 64 symbols (each a random map of the two states), one head of 2 indices.
    Logits are scale_embedding · scale_weight · (16 + 4·[chosen]): with one factor subnormal at bfloat16, a kernel
    that reads subnormal inputs as 0 computes all-zero logits, and every row's argmax becomes index 0."""
    from fsa2rnn.compiler.model import CompiledModel
    from fsa2rnn.fsa import Automaton

    rng = np.random.default_rng(7)
    a = Automaton(rng.integers(0, 2, (64, 2)), states=["p", "q"], symbols=[f"x{i}" for i in range(64)], initial=0)
    base = compile_nfsm(a, heads="single", layers="single")
    t = dict(base.tensors)
    chosen = t["layers.0.weight"] / base.header["margin"]  # one-hot of each row's chosen index, per key
    t["layers.0.embedding"] = np.eye(64) * scale_embedding
    t["layers.0.weight"] = (16.0 + 4.0 * chosen) * scale_weight
    t["layers.0.bias"] = np.zeros_like(t["layers.0.bias"])
    return a, CompiledModel(dict(base.header), t).seal()


@pytest.mark.parametrize(
    "scale_embedding,scale_weight",
    [
        (2.0**-130, 1.0),  # subnormal embedding, logits ≈ 1.2e-38 and 1.5e-38: margin 2.9e-39
        (2.0**10, 2.0**-133),  # subnormal weights, normal logits ≈ 9.4e-38 and 1.2e-37
    ],
)
def test_flush_to_zero_adversarial_model_not_certified_at_bfloat16(scale_embedding, scale_weight):
    a, model = _two_state_64_symbol_model(scale_embedding, scale_weight)
    emb, w, b = (model.tensors[f"layers.0.{n}"] for n in ("embedding", "weight", "bias"))
    exact = (emb @ w.T + b).reshape(64, 2, 2)
    want = np.stack([a.transitions[x] for x in range(64)])
    assert np.array_equal(exact.argmax(-1), want)  # the exact model realizes the automaton
    # correctly rounded bfloat16 logits keep every argmax: a naive check at bfloat16 finds nothing wrong
    rounded = torch.from_numpy(exact).to(torch.bfloat16).double().numpy()
    assert np.array_equal(rounded.argmax(-1), want)
    # ... but a kernel that reads subnormal inputs as 0 computes another table
    ftz = _ftz_linear(emb, w, b, torch.bfloat16, acc=torch.float32, order=list(range(65))).reshape(64, 2, 2)
    assert not np.array_equal(ftz.argmax(-1), want)
    cert = margin_certificate(model, "bfloat16")
    assert not cert["certified"] and cert["rows_below"] == 128, cert["statement"]
    assert cert["statement"].startswith("not ")
    assert margin_certificate(model, "float64")["certified"]


def test_subnormal_logits_are_never_certified():
    """Logits below the smallest normal may all be flushed to 0: a margin of 2^-128 (the logits themselves subnormal
    at bfloat16 and float32) is refused at both; the same model is certified in float64."""
    a = random_automaton(3, 2, 11)
    model = compile_nfsm(a, margin=2.0**-128, offset=0.0, heads="single", layers="single")
    for dt in ("bfloat16", "float32"):
        cert = margin_certificate(model, dt)
        assert not cert["certified"] and cert["bound"] > smallest_normal(dt), cert["statement"]
    assert margin_certificate(model, "float64")["certified"]


def test_margin_is_the_exact_models_not_one_computed_at_the_dtype():
    """A margin computed at the dtype may round up: at offset 1.09 a bfloat16 margin of 0.0390625 stands for an exact
    0.0355. Wherever the computed margin exceeds twice the bound but the exact one does not (m̂ > 2β would certify
    this one evaluation order only), the certificate refuses and reports the exact margin."""
    a = automaton_named("flipflop")
    hits = 0
    for margin in np.linspace(0.0350, 0.0360, 11):
        model = compile_nfsm(a, margin=float(margin), offset=1.09, heads="single")
        layer = load_model(model).layers[0]
        computed = layer.key_logits(dtype=torch.bfloat16).detach().double().numpy().reshape(-1, 2, 2)
        top = np.sort(computed, axis=-1)
        cert = margin_certificate(model, "bfloat16")
        assert cert["margin"] == pytest.approx(margin, rel=1e-9)
        if (top[..., 1] - top[..., 0]).min() > 2 * cert["bound"] >= margin:
            hits += 1
            assert not cert["certified"] and cert["rows_below"] > 0, cert["statement"]
    assert hits > 0


def test_row_margin_is_best_minus_second_best_not_best_minus_worst():
    from fsa2rnn.realize.certificate import row_margins

    # one key, one head of 3 indices: rows [1, 1 − 1e-4, −5], [2, 0, −1], [0, 3, 1] (unequal non-best logits)
    rows = np.array([[1.0, 1.0 - 1e-4, -5.0], [2.0, 0.0, -1.0], [0.0, 3.0, 1.0]])
    margins, bounds = row_margins(np.eye(1), rows.reshape(-1, 1), np.zeros(9), [3], "float32")
    assert margins == pytest.approx([1e-4, 2.0, 2.0], rel=1e-9) and bounds.shape == (3,)


def test_a_row_with_a_close_second_best_is_refused_though_its_worst_logit_is_far():
    """T4's compiled rows give every non-best logit one value; make one row's second best 4e-3 below its best (the
    argmax unchanged, the tables still right at float16): its margin 4e-3 is below twice the float16 rounding bound,
    so the model is not certified there, while its best − worst logit (1) would pass."""
    module, _ = _t4_with_second_best(4e-3)
    cert = margin_certificate(module, "float16")
    assert cert["tables_match"] and not cert["certified"] and cert["rows_below"] == 1, cert["statement"]
    assert cert["margin"] == pytest.approx(4e-3, rel=1e-9)
    assert margin_certificate(module, "float32")["certified"]  # 4e-3 is far above float32's bound


def _bound_by_the_formula(e, w, b, dtype):
    """β of the module docstring, one logit at a time in Python floats (the oracle of logit_error_bound)."""
    import math

    fi = torch.finfo(dtype)
    u, eta, tiny, big = fi.eps / 2, fi.smallest_normal * fi.eps / 2, fi.smallest_normal, fi.max

    def st(y):
        return float(torch.tensor(float(y), dtype=torch.float64).to(dtype).double())

    def err(y):
        out = abs(y) if st(y) != 0 and abs(st(y)) < tiny else 0.0
        return out + u * abs(y) + (eta if y != 0 else 0.0) if dtype != torch.float64 else out

    out = np.zeros((e.shape[0], w.shape[0]))
    for i, row in enumerate(e):
        k = sum(st(x) != 0 for x in row)
        g = (k + 2) * u / (1 - (k + 2) * u) if (k + 2) * u < 1 else math.inf
        for j, col in enumerate(w):
            mag = sum(abs(st(x)) * abs(st(y)) for x, y in zip(row, col)) + abs(st(b[j]))
            store = sum(err(x) * abs(y) + abs(st(x)) * err(y) for x, y in zip(row, col)) + err(b[j])
            with np.errstate(invalid="ignore", over="ignore"):
                total = (g * mag + 4 * (k + 1) * tiny * (1 + g) + store) * (1 + 1e-9) + 1e-300
                total = math.inf if (1 + g) * mag + total > big or math.isnan(total) else total
            out[i, j] = total
    return out


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32, torch.float64])
def test_logit_error_bound_is_the_docstrings_formula(dtype):
    """Entries not representable at the dtype (0.1, 0.3), subnormal ones (3e-6, 1e-7 at float16), one exactly the
    smallest normal N (not subnormal), one that rounds to zero (1e-9 at float16), zeros, a zero row (β = 4N(1 + γ) +
    1e-300 only), negative values, and logits near float16's largest number on both sides of the overflow rule
    ((1 + γ)·40000 + β fits, (1 + γ)·65408 + β does not)."""
    n = float(torch.finfo(dtype).smallest_normal)
    e = np.array([[0.1, 1.0, 0.0, 3e-6], [0.0, 0.0, 0.0, 0.0], [-2.0, 0.5, 1.0, 0.25], [1.0, 0.0, 0.0, 0.0]])
    w = np.array(
        [[0.3, -2.5, 1e-6, n], [0.0, 0.0, 0.0, 0.0], [1.0, 1.0, -1.0, 7.0], [n, 1e-9, 2.0, -0.1], [4e4, 0, 0, 0],
         [65400.0, 0, 0, 0]]
    )  # fmt: skip
    b = np.array([0.7, 0.0, -1e-7, 3.0, 0.0, 0.0])
    got = logit_error_bound(e, w, b, dtype)
    want = _bound_by_the_formula(e, w, b, dtype)
    assert np.allclose(got, want, rtol=1e-12, atol=0), (got, want)
    zero = logit_error_bound(np.zeros((1, 2)), np.zeros((1, 2)), np.zeros(1), dtype)
    assert 1e-300 < float(zero[0, 0]) < 1e-300 + 16 * n + 1e-310  # k = 0: 4N(1 + γ_2) on top of the 1e-300


def test_logit_error_bound_is_infinite_where_gamma_is():
    """γ_m = mu/(1 − mu) with mu = m·u is infinite from mu = 1 on: 2046 nonzero embedding entries at float16
    (m = 2048, u = 2^-11) give β = ∞ even for zero weights and bias."""
    e = np.ones((1, 2046))
    assert np.isinf(logit_error_bound(e, np.zeros((1, 2046)), np.zeros(1), torch.float16)).all()
    assert np.isfinite(logit_error_bound(e[:, :2045], np.zeros((1, 2045)), np.zeros(1), torch.float16)).all()


def test_row_margins_of_several_heads_and_their_bounds():
    """Heads of 2, 3 and 5 indices side by side in one layer (a head of 1 index has no margin): each row's margin is
    best − second best of its own head's block, and its bound the row's largest β_D + β₆₄."""
    from fsa2rnn.realize.certificate import row_margins

    rng = np.random.default_rng(0)
    heads = [2, 1, 3, 5]
    logits = rng.standard_normal((2, sum(d * d for d in heads)))
    e, w, b = np.eye(2), logits.T.copy(), rng.standard_normal(len(logits[0]))
    logits = logits + b
    margins, bounds = row_margins(e, w, b, heads, "bfloat16")
    beta = logit_error_bound(e, w, b, "bfloat16") + logit_error_bound(e, w, b, torch.float64)
    want_m, want_b, start = [], [], 0
    for d in heads:
        blk = logits[:, start : start + d * d].reshape(2, d, d)
        bb = beta[:, start : start + d * d].reshape(2, d, d)
        start += d * d
        if d > 1:
            srt = np.sort(blk, axis=-1)
            want_m += list((srt[..., -1] - srt[..., -2]).ravel())
            want_b += list(bb.max(axis=-1).ravel())
    assert np.array_equal(margins, np.array(want_m)) and np.array_equal(bounds, np.array(want_b))
    assert len(margins) == 2 * (2 + 3 + 5)
    none = row_margins(np.eye(1), np.ones((1, 1)), np.zeros(1), [1], "float16")  # single-index heads only
    assert [a.shape for a in none] == [(0,), (0,)]


def _t4_with_second_best(gap: float):
    """T4's compiled NFSM module with one row's second-best logit ``gap`` below its best (key 0, index 0 of the first
    head; the argmax unchanged) and that row's float16 bound max_j (β_D + β₆₄)[j]."""
    from fsa2rnn.realize.certificate import row_margins

    module = load_model(compile_nfsm(automaton_named("T4")))
    layer = module.layers[0]
    d = layer.heads[0]
    with torch.no_grad():
        logits = layer.logits.weight[:, 0] + layer.logits.bias
        best = int(logits[:d].argmax())
        other = (best + 1) % d
        layer.logits.weight[other, 0] += logits[best] - gap - logits[other]
    args = (layer.embedding.weight, layer.logits.weight, layer.logits.bias)
    _, bounds = row_margins(*(a.detach().double().numpy() for a in args), layer.heads, "float16")
    return module, float(bounds[0])


def test_the_certificate_threshold_is_twice_the_bound():
    """A row whose margin is 2.5 times its bound is certified (the threshold is 2·bound, not more); at 1.5 times it
    is refused, with the counts (no overflow: the statement says so)."""
    _, bound = _t4_with_second_best(4e-3)
    ok, _ = _t4_with_second_best(2.5 * bound)
    cert = margin_certificate(ok, "float16")
    assert cert["certified"] and cert["rows_below"] == 0 and cert["margin"] == pytest.approx(2.5 * bound)
    assert "every table row's exact logit margin" in cert["statement"]
    low, _ = _t4_with_second_best(1.5 * bound)
    cert = margin_certificate(low, "float16")
    assert not cert["certified"] and cert["rows_below"] == 1 and cert["tables_match"]
    assert (
        cert["statement"].startswith("not certified at dtype float16: 1 table rows")
        and "overflow" not in cert["statement"]
    )


def test_good_margins_against_the_wrong_automaton_say_the_tables_are_wrong():
    from fsa2rnn.fsa.automaton import Automaton

    a = automaton_named("T4")
    t = np.array(a.transitions, copy=True)
    t[0, a.initial] = (t[0, a.initial] + 1) % a.n_states
    cert = margin_certificate(compile_nfsm(a), "float16", automaton=Automaton(t, states=a.states,
                              symbols=a.symbols, initial=a.initial))  # fmt: skip
    assert not cert["certified"] and cert["rows_below"] == 0 and not cert["tables_match"]
    assert "the margins exceed the rounding bound but the tables do not realize the automaton" in cert["statement"]
    assert cert["failing_word"]


def test_single_index_heads_are_certified_without_a_margin():
    from fsa2rnn.fsa.automaton import Automaton

    one = Automaton(np.zeros((2, 1), dtype=np.int64), initial=0, name="one state")
    cert = margin_certificate(compile_nfsm(one), "float16")
    assert cert["certified"] and cert["margin"] is None
    assert "every head has a single index" in cert["statement"]


def test_verify_check_holds_only_when_both_the_certificate_and_the_extraction_do():
    """The nfsm target's check (``verify``): ok needs the margin certificate and the extracted tables. At margin 1e-3
    a random automaton's tables still realize it at float16 (the extraction matches) but the margins are below twice
    the rounding bound (no certificate), so the check fails; at float32 both hold."""
    from fsa2rnn.realize.certificate import verify_check

    a = random_automaton(7, 3, 5)
    model = compile_nfsm(a, margin=1e-3, heads="single", layers="single")
    report, ok = verify_check(model, a, dtype="float16")
    assert report["extraction"]["match"] and not report["certificate"]["certified"] and not ok
    report, ok = verify_check(model, a, dtype="float32")
    assert report["extraction"]["match"] and report["certificate"]["certified"] and ok
