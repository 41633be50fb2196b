"""The torch-free executors (fsa2rnn.compiler.load_executor) against two independent references: the automaton itself
(``Automaton.run``) and the torch modules of fsa2rnn.nn on the same model; their chunked affine scan against the
sequential float64 recurrence on random, non-exact maps; `fsa2rnn run` on either engine."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from cases import automaton_named
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from fsa2rnn.cli.main import main
from fsa2rnn.compiler import compile_diagonal, compile_householder, compile_nfsm, load_executor
from fsa2rnn.compiler.scans.affine_scan import affine_scan
from fsa2rnn.compiler.targets.affine.definite_to_affine import compile_affine
from fsa2rnn.compiler.targets.pdssm.automaton_to_pdssm import compile_pdssm
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.automaton import Automaton
from fsa2rnn.nn import load_model

#: cases of tests/cases.py, one per kind of layer, run on long words (every case and executor: test_conformance.py)
MODELS = [
    (compile_householder, "S5", {}),  # one permutation layer, hash readout
    (compile_householder, "T4", {}),  # the cascade: three layers, nearest readouts
    (compile_householder, "Z60", {}),  # a rotation layer (floats that round)
    (compile_householder, "regex:(a|b)*a(a|b)(a|b)", {}),
    (compile_diagonal, "Z60", {}),  # complex roots of unity
    (compile_diagonal, "flipflop", {}),
    (compile_nfsm, "S5", {}),  # four heads
    (compile_nfsm, "T4", {"layers": "stacked"}),  # stacked layers: keys from the heads above
    (compile_affine, "regex:(a|b)*a(a|b)(a|b)", {}),
    (compile_pdssm, "T4", {}),  # P(x) = δ_x as index arrays
]
#: (batch, length): one step, the sequential bracketing (≤ 64 steps), one and two levels of chunks
SHAPES = [(7, 1), (5, 33), (3, 200), (2, 5000), (1, 70000)]


@pytest.fixture(scope="module", params=MODELS, ids=lambda p: f"{p[0].__name__}-{p[1]}")
def model(request):
    compile_, name, kw = request.param
    return compile_(automaton_named(name), **kw)


def test_executor_equals_the_automaton_and_the_torch_module(model):
    executor, net = load_executor(model), load_model(model)
    target = Automaton.from_spec(model.header["automaton"])
    rng = np.random.default_rng(0)
    options = {"scan": "parallel"} if model.target in ("householder", "diagonal") else {}
    for bsz, length in SHAPES:
        ids = rng.integers(0, len(model.symbols), (bsz, length))
        got = executor.predict_states(ids)
        assert got.dtype == np.int64 and got.shape == (bsz, length)
        np.testing.assert_array_equal(got, target.run(ids, start=np.full(bsz, model.header["initial"])))
        np.testing.assert_array_equal(got, net.predict_states(torch.from_numpy(ids), **options).numpy())
    assert executor.predict_states(np.zeros((3, 0), dtype=np.int64)).shape == (3, 0)


def _sequential(a_table, b_table, rows, h0):
    """The recurrence H_t = A(r_t) H_{t−1} + B(r_t), one step at a time."""
    out = np.empty((*rows.shape, *h0.shape), dtype=np.result_type(a_table, b_table, h0))
    for b, word in enumerate(rows):
        h = h0
        for t, r in enumerate(word):
            h = (a_table[r] * h if a_table.ndim == b_table.ndim else a_table[r] @ h) + b_table[r]
            out[b, t] = h
    return out


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(1, 4),
    n_rows=st.integers(1, 4),
    bsz=st.integers(1, 3),
    length=st.sampled_from([0, 1, 5, 64, 65, 200, 1100]),
    diagonal=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_affine_scan_matches_the_sequential_recurrence(n, n_rows, bsz, length, diagonal, seed):
    """Random contractions (dense real, or diagonal complex of modulus < 1): the chunked bracketing rounds
    differently from the sequential one, within a few ulps of the state's size."""
    rng = np.random.default_rng(seed)
    if diagonal:
        a = rng.uniform(0.2, 0.95, (n_rows, n)) * np.exp(2j * np.pi * rng.random((n_rows, n)))
        b = rng.normal(size=(n_rows, n)) + 1j * rng.normal(size=(n_rows, n))
        h0 = rng.normal(size=n) + 1j * rng.normal(size=n)
    else:
        a = rng.normal(size=(n_rows, n, n))
        a *= 0.9 / np.linalg.norm(a, 2, axis=(1, 2))[:, None, None]
        b, h0 = rng.normal(size=(n_rows, n)), rng.normal(size=n)
    rows = rng.integers(0, n_rows, (bsz, length))
    got, want = affine_scan(a, b, rows, h0), _sequential(a, b, rows, h0)
    assert got.shape == want.shape == (bsz, length, n)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_run_engines_print_the_same_lines(tmp_path):
    path = tmp_path / "t4.safetensors"
    compile_householder(resolve_spec("T4")).save(path)
    symbols = resolve_spec("T4").symbols
    rng = np.random.default_rng(1)
    words = [[symbols[i] for i in rng.integers(0, len(symbols), n)] for n in (0, 3, 70, 3, 300)]
    stdin = "".join(json.dumps(w) + "\n" for w in words)
    runner = CliRunner()
    outs = [runner.invoke(main, ["run", str(path), *extra], input=stdin) for extra in ([], ["--engine", "torch"])]
    assert [r.exit_code for r in outs] == [0, 0], [r.output for r in outs]
    assert outs[0].stdout == outs[1].stdout
    assert [len(json.loads(line)) for line in outs[0].stdout.splitlines()] == [len(w) for w in words]


def test_numpy_engine_runs_at_float64_only(tmp_path):
    path = tmp_path / "ff.safetensors"
    compile_householder(resolve_spec("flipflop")).save(path)
    res = CliRunner().invoke(main, ["run", str(path), "--engine", "numpy", "--dtype", "float32"], input="[]\n")
    assert res.exit_code == 2 and "float64 only" in res.stderr and "Traceback" not in res.stderr
    res = CliRunner().invoke(main, ["run", str(path), "--dtype", "float32"], input='["set"]\n')  # auto: torch
    assert res.exit_code == 0 and json.loads(res.stdout) == ["1"], res.output
