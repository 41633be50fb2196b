"""`fsa2rnn compile --target nfsm | run | verify` end to end, and bad input: exit code 2, no file left behind."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.fsa import resolve_spec


@pytest.fixture
def runner():
    return CliRunner()


def _compile(runner, tmp_path, *args):
    out = tmp_path / "m.safetensors"
    res = runner.invoke(main, ["compile", *args, "--target", "nfsm", "-o", str(out), "--json"])
    return res, out


@pytest.mark.parametrize(
    "spec,extra,construction,head_dims",
    [
        ("M11", [], "multihead", [[11, 11, 11, 11]]),
        ("S5", [], "multihead", [[5, 5, 5, 5]]),
        ("gridworld:3", [], "product", [[3, 3]]),
        ("T4", ["--layers", "stacked"], "stacked", [[4], [3], [2]]),
        ("flipflop", ["--heads", "single"], "single", [[2]]),
    ],
)
def test_compile_run_verify(runner, tmp_path, spec, extra, construction, head_dims):
    res, out = _compile(runner, tmp_path, spec, *extra)
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["verified"] is True and summary["construction"] == construction
    assert summary["head_dims"] == head_dims and out.exists()
    assert all(summary["certificate"][d]["certified"] for d in ("float32", "bfloat16", "float16"))
    a = resolve_spec(spec)
    ids = np.random.default_rng(0).integers(0, a.n_symbols, (2, 30))
    words = "\n".join(json.dumps([a.symbols[x] for x in w]) for w in ids) + "\n"
    res = runner.invoke(main, ["run", str(out), "--dtype", "bfloat16"], input=words)
    assert res.exit_code == 0, res.output
    got = [json.loads(line) for line in res.output.strip().splitlines()]
    assert got == [[a.states[q] for q in row] for row in a.run(ids)]
    res = runner.invoke(main, ["verify", str(out), "--dtype", "float16", "--length", "300", "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.output)
    assert report["certificate"]["certified"] and report["extraction"]["match"]
    assert report["extraction"]["dtype"] == "float16"
    assert report["certificate"]["statement"].startswith("length-independent at dtype float16")


def test_small_margin_flagged_by_verify(runner, tmp_path):
    res, out = _compile(runner, tmp_path, "S5", "--margin", "0.001")
    assert res.exit_code == 0, res.output
    certificate = json.loads(res.output)["certificate"]
    assert certificate["float32"]["certified"] and not certificate["bfloat16"]["certified"]
    res = runner.invoke(main, ["verify", str(out), "--spec", "S5", "--dtype", "bfloat16", "--length", "100", "--json"])
    assert res.exit_code == 1, res.output
    cert = json.loads(res.output)["certificate"]
    assert not cert["certified"] and cert["failing_word"]
    assert cert["statement"].startswith("not length-independent at dtype bfloat16")


@pytest.mark.parametrize(
    "args,message",
    [
        (["S5", "--heads", "many"], "heads must be one of"),
        (["S5", "--layers", "deep"], "layers must be one of"),
        (["S5", "--margin", "-1"], "margin must be a positive"),
        (["T3", "--heads", "multi"], "no multi-head plan"),
        (["M11", "--heads", "single", "--layers", "single"], "over the limit"),
    ],
)
def test_bad_options_exit_2_without_file(runner, tmp_path, args, message):
    res, out = _compile(runner, tmp_path, *args)
    assert res.exit_code == 2
    assert message in res.output
    assert not out.exists()
