"""`compile --target pdssm` (P(x) = δ_x as index arrays, D = I, one-hot readout): the exact check on every case of
tests/cases.py and on broken models, the numpy executor and the torch module against the automaton, the CLI (compile,
run, verify, bad input), the from_compiled bridge to a trainable PD-SSM layer and `train --init-from`."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from cases import CASES, case_automaton
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.compiler import compile_pdssm, load_executor
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.targets.pdssm.automaton_to_pdssm import check_pdssm
from fsa2rnn.compiler.targets.pdssm.executor import pd_step
from fsa2rnn.compiler.targets.pdssm.program import pd_spectrum
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.errors import LimitExceededError
from fsa2rnn.nn import load_model
from fsa2rnn.nn.layers import PDSSM
from fsa2rnn.nn.model import SequenceModel
from fsa2rnn.realize.compare import spectrum_distance

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _compile(a):
    return compile_pdssm(a, initial=None if a.initial is not None else 0)


def _words(a, n=6, length=60, seed=0):
    ids = np.random.default_rng(seed).integers(0, a.n_symbols, size=(n, length))
    return ids, a.run(ids, start=np.full(n, a.initial if a.initial is not None else 0))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_every_case_compiles_verifies_and_runs_exactly(case):
    a = case_automaton(case)
    m = _compile(a)
    assert m.summary["verified"] is True and m.summary["width"] == a.n_states
    assert m.tensors["pd.P"].shape == (a.n_symbols, a.n_states)  # index arrays: |Σ|·N entries (M11: 15,840)
    ids, want = _words(a)
    assert np.array_equal(load_executor(m).predict_states(ids), want)
    assert np.array_equal(load_model(m).to(torch.float32).predict_states(torch.from_numpy(ids)).numpy(), want)


def _mutant(m: CompiledModel, name: str, edit) -> CompiledModel:
    t = {k: v.copy() for k, v in m.tensors.items()}
    edit(t[name])
    return CompiledModel(dict(m.header), t)


def _random_weights(m: CompiledModel, seed: int, h0: str) -> CompiledModel:
    """The model's tensors replaced by random ones: P any index arrays, D of random signs and magnitudes around 1
    (a few zeros, and a few tiny entries that underflow), h0 one coordinate (``"one"``) or several (``"dense"``)."""
    rng = np.random.default_rng(seed)
    t = {k: v.copy() for k, v in m.tensors.items()}
    s, n = t["pd.P"].shape
    t["pd.P"] = rng.integers(0, n, (s, n))
    t["pd.D"] = rng.choice([-1.0, 1.0], size=(s, n)) * np.exp(rng.normal(scale=0.5, size=(s, n)))
    t["pd.D"].flat[rng.choice(s * n, size=3, replace=False)] = [0.0, 1e-200, -1e-200]
    t["pd.h0"] = np.zeros(n)
    t["pd.h0"][rng.choice(n, size=1 if h0 == "one" else 3, replace=False)] = rng.normal(size=1 if h0 == "one" else 3)
    return CompiledModel(dict(m.header), t).seal()


@pytest.mark.parametrize("h0", ["one", "dense"])
@pytest.mark.parametrize("seed", range(4))
def test_executors_run_the_weights_as_the_step_by_step_recurrence(seed, h0):
    """The fast paths (one nonzero coordinate: a table scan and a running product) equal h_t = P(x_t) D(x_t) h_{t−1}
    run one step at a time on random P, D and h0 at float64, read by argmax — not the automaton's states. (A dense
    h0 runs the recurrence itself in numpy, and the chunked PD scan in torch, which may round differently.)"""
    m = _random_weights(compile_pdssm(resolve_spec("S4")), seed, h0)
    P, D, h = m.tensors["pd.P"], m.tensors["pd.D"], np.tile(m.tensors["pd.h0"], (5, 1))
    ids = np.random.default_rng(seed).integers(0, P.shape[0], size=(5, 400))
    want = np.empty(ids.shape, dtype=np.int64)
    for t in range(ids.shape[1]):
        h = pd_step(P[ids[:, t]], D[ids[:, t]], h)
        want[:, t] = m.tensors["readout.states"][h.argmax(-1)]
    assert not np.array_equal(want, _words(resolve_spec("S4"), n=5, length=400, seed=seed)[1])
    assert len(np.unique(want)) > 2
    assert np.array_equal(load_executor(m).predict_states(ids), want)
    if h0 == "one":
        assert np.array_equal(load_model(m).predict_states(torch.from_numpy(ids)).numpy(), want)


@pytest.mark.parametrize(
    "name, edit, match",
    [
        ("pd.P", lambda p: p.__setitem__((0, 1), (p[0, 1] + 1) % p.shape[1]), "reads as"),
        ("pd.D", lambda d: d.__setitem__((1, 2), 0.5), "identity"),
        ("pd.D", lambda d: d.__setitem__((0, 0), -1.0), "identity"),
        ("pd.h0", lambda h: h.__setitem__(slice(None), np.roll(h, 1)), "not the initial"),
        ("pd.h0", lambda h: h.__setitem__(slice(None), 0.0), "one-hot"),
        ("readout.states", lambda s: s.__setitem__(slice(None), np.roll(s, 1)), ""),
        ("pd.P", lambda p: p.__setitem__((0, 0), 99), "lie in"),
    ],
)
def test_the_exact_check_refuses_broken_models(name, edit, match):
    a = resolve_spec("S3")
    m = compile_pdssm(a)
    assert check_pdssm(m, a)["ok"]
    report = check_pdssm(_mutant(m, name, edit), a)
    assert not report["ok"] and match in report["failure"]


def test_cli_compile_run_verify_and_bad_input(tmp_path):
    runner = CliRunner()
    out = tmp_path / "m.safetensors"
    res = runner.invoke(main, ["compile", "T3", "--target", "pdssm", "--initial", "0", "-o", str(out), "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["verified"] is True and summary["target"] == "pdssm" and summary["width"] == 3
    a = resolve_spec("T3")
    words = [[a.symbols[(3 * i + j) % a.n_symbols] for j in range(5 + i)] for i in range(3)]
    for engine in ([], ["--dtype", "float32"]):
        res = runner.invoke(main, ["run", str(out), *engine], input="\n".join(json.dumps(w) for w in words) + "\n")
        assert res.exit_code == 0, res.output
        for w, line in zip(words, res.output.strip().splitlines()):
            assert json.loads(line) == [a.states[q] for q in a.run(w, start=0)]
    res = runner.invoke(main, ["verify", str(out), "--length", "300", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert rep["ok"] and rep["exact"]["ok"] and rep["exact"]["checked"] == 9 and rep["first_failing_length"] is None
    bad = tmp_path / "bad.safetensors"
    res = runner.invoke(main, ["compile", "S3", "--target", "pdssm", "--construction", "rotation", "-o", str(bad)])
    assert res.exit_code == 2 and "one_hot" in res.stderr and not bad.exists()


@pytest.mark.parametrize("spec", ["parity", "S3", "flipflop:3", "T3", "regex:(ab)*", "A5:gens"])
def test_from_compiled_round_trip(spec):
    a = resolve_spec(spec)
    m = _compile(a)
    net = SequenceModel.from_compiled(m)
    assert isinstance(net.blocks[0].layer, PDSSM) and net.config.layer == "pdssm"
    ids, want = _words(a, n=5, length=300, seed=1)
    assert np.array_equal(net.predict_states(torch.from_numpy(ids)).numpy(), want)
    net32 = SequenceModel.from_compiled(m, dtype=torch.float32)
    assert np.array_equal(net32.predict_states(torch.from_numpy(ids)).numpy(), want)
    # the layer's transition of each symbol is the compiled P(x) D(x): δ_x as a column one-hot matrix, D = 1
    with torch.no_grad():
        mats = net.symbol_transitions()
    n = a.n_states
    want_mats = np.zeros((a.n_symbols, n, n))
    for x in range(a.n_symbols):
        want_mats[x, a.transitions[x], np.arange(n)] = 1
    assert np.allclose(mats.numpy(), want_mats, atol=1e-15)
    # trainable: the straight-through path gives the same states and finite gradients
    net.train()
    logits = net(torch.from_numpy(ids))
    assert np.array_equal(logits.argmax(-1).numpy(), want)
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), torch.from_numpy(want).reshape(-1))
    loss.backward()
    assert all(p.grad is None or torch.isfinite(p.grad).all() for p in net.parameters())


def test_the_bridge_refuses_a_dictionary_over_its_limit():
    m = compile_pdssm(resolve_spec("M11"))
    with pytest.raises(LimitExceededError, match="dictionary"):
        SequenceModel.from_compiled(m)


def test_train_init_from_a_compiled_pdssm(tmp_path):
    runner = CliRunner()
    model = tmp_path / "p.safetensors"
    assert runner.invoke(main, ["compile", "S3", "--target", "pdssm", "-o", str(model)]).exit_code == 0
    args = ["train", "S3", "--init-from", str(model), "--steps", "2", "--batch", "8", "--samples", "16",
            "--lr", "1e-4", "--no-lmax", "--eval-lengths", "64", "--out", str(tmp_path / "run"), "--json"]  # fmt: skip
    res = runner.invoke(main, args)
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["eval"]["sequence_accuracy"] == [1.0]
    cfg = json.loads((tmp_path / "run" / "config.json").read_text())
    assert cfg["model"]["layer"] == "pdssm" and cfg["train"]["state_size"] == 6
    # compiled and trained PD-SSMs compare: the same machine, the same spectra of P(x)D(x)
    compare = ["compare", str(tmp_path / "run"), "--compiled", str(model), "--no-lmax", "--words", "64", "--json"]
    res = runner.invoke(main, compare)
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["compiled"]["target"] == "pdssm" and rep["extracted"]["relation"] == "isomorphic"
    assert len(rep["spectra"]) == 6 and all(r["distance"] < 1e-6 for r in rep["spectra"])


@pytest.mark.parametrize("n", [1, 2, 7, 16])
def test_pd_spectrum_equals_the_eigenvalues_of_the_dense_matrix(n):
    rng = np.random.default_rng(n)
    for _ in range(10):
        idx = rng.integers(0, n, n)
        diag = np.exp(1j * rng.uniform(0, 2 * np.pi, n)) * rng.uniform(0.5, 1, n)
        dense = np.zeros((n, n), dtype=np.complex128)
        dense[idx, np.arange(n)] = diag
        assert spectrum_distance(pd_spectrum(idx, diag), np.linalg.eigvals(dense)) < 1e-5
    perm = np.array([1, 2, 0, 4, 3, 5])  # cycles (0 1 2)(3 4)(5): cube roots, ±1, 1
    got = np.sort_complex(pd_spectrum(perm, np.ones(6)))
    want = np.sort_complex(np.concatenate([np.exp(2j * np.pi * np.arange(3) / 3), [1, -1], [1]]))
    assert np.allclose(got, want)
