"""`fsa2rnn compile | run | verify` end to end, and bad input: exit code 2, one line, no file left behind."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main


@pytest.fixture
def runner():
    return CliRunner()


def _one_line_error(res, message: str) -> None:
    """Bad input: exit 2, nothing on stdout, one line on stderr naming the problem, no traceback."""
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], res.stderr
    assert res.stdout == "" and "Traceback" not in res.stderr


def _compile(runner, tmp_path, *args):
    out = tmp_path / "m.safetensors"
    res = runner.invoke(main, ["compile", *args, "-o", str(out), "--json"])
    return res, out


@pytest.mark.parametrize(
    "spec,target,extra",
    [
        ("S5", "householder", []),
        ("flipflop", "householder", []),
        ("Z60", "diagonal", []),
        ("Z5", "householder", ["--construction", "reflections2"]),
        ("T3", "householder", ["--construction", "cascade"]),
    ],
)
def test_compile_run_verify(runner, tmp_path, spec, target, extra):
    res, out = _compile(runner, tmp_path, spec, "--target", target, *extra)
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["verified"] is True and summary["target"] == target and out.exists()
    from fsa2rnn.fsa import resolve_spec

    a = resolve_spec(spec)
    words = [[a.symbols[(3 * i + j) % a.n_symbols] for j in range(5 + i)] for i in range(3)]
    res = runner.invoke(main, ["run", str(out)], input="\n".join(json.dumps(w) for w in words) + "\n")
    assert res.exit_code == 0, res.output
    lines = res.output.strip().splitlines()
    for w, line in zip(words, lines):
        assert json.loads(line) == [a.states[q] for q in a.run(w)]
    res = runner.invoke(main, ["verify", str(out), "--length", "300", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.output)
    assert rep["ok"] and rep["exact"]["ok"] and rep["first_failing_length"] is None


def test_verify_reports_first_failing_length(runner, tmp_path):
    res, out = _compile(runner, tmp_path, "Z60", "--target", "householder")
    assert res.exit_code == 0
    res = runner.invoke(
        main, ["verify", str(out), "--spec", "Z60", "--dtype", "bfloat16", "--length", "3000", "--json"]
    )
    rep = json.loads(res.output)
    assert res.exit_code == 1 and rep["exact"]["ok"] and not rep["ok"]
    assert isinstance(rep["first_failing_length"], int) and 1 <= rep["first_failing_length"] <= 3000


@pytest.mark.parametrize(
    "args,message",
    [
        (["S3", "--target", "diagonal", "--construction", "group"], "commute"),
        (["T3", "--target", "diagonal", "--construction", "cascade"], "non-abelian holonomy group"),
        (["S5", "--target", "diagonal"], "non-abelian simple composition factor A5"),
        (["S3", "--target", "householder", "--construction", "rotation"], "cyclic"),
        (["T3", "--target", "householder", "--construction", "permutation"], "does not permute"),
        (["S3", "--target", "householder", "--construction", "bogus"], "unknown construction"),
        (["nosuchbuiltin", "--target", "householder"], "unknown"),
    ],
)
def test_bad_input_exit_2_no_file(runner, tmp_path, args, message):
    res, out = _compile(runner, tmp_path, *args)
    _one_line_error(res, message)
    assert not out.exists() and not list(tmp_path.iterdir())


def test_beyond_limits(runner, tmp_path):
    # S16 on 16 points: the permutation construction's hash readout allows degree ≤ 15
    spec = {
        "states": 16,
        "symbols": ["c", "t"],
        "transitions": {"c": [(i + 1) % 16 for i in range(16)], "t": [1, 0] + list(range(2, 16))},
        "initial": "0",
    }
    path = tmp_path / "s16.json"
    path.write_text(json.dumps(spec))
    res = runner.invoke(
        main,
        [
            "compile",
            str(path),
            "--target",
            "householder",
            "--construction",
            "permutation",
            "-o",
            str(tmp_path / "m.safetensors"),
        ],
    )
    _one_line_error(res, "limit")
    assert not (tmp_path / "m.safetensors").exists()


def test_needs_initial(runner, tmp_path):
    path = tmp_path / "a.json"
    path.write_text(json.dumps({"states": 2, "symbols": ["a"], "transitions": {"a": [1, 0]}}))
    res, out = _compile(runner, tmp_path, str(path), "--target", "householder")
    assert res.exit_code == 2 and "--initial" in res.output and not out.exists()
    res, out = _compile(runner, tmp_path, str(path), "--target", "householder", "--initial", "1")
    assert res.exit_code == 0


def test_unreadable_and_tampered_model_files(runner, tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"not a model")
    for cmd in (["run", str(bad)], ["verify", str(bad)]):
        res = runner.invoke(main, cmd, input="[]\n")
        _one_line_error(res, str(bad))
    res, out = _compile(runner, tmp_path, "S5:swaps", "--target", "householder")
    from safetensors import safe_open
    from safetensors.numpy import load_file, save_file

    with safe_open(str(out), framework="numpy") as f:
        meta = f.metadata()
    tensors = load_file(str(out))
    tensors["L0.A"] = tensors["L0.A"][::-1].copy()
    save_file(tensors, str(out), metadata=meta)
    for cmd in (["run", str(out)], ["verify", str(out)]):
        res = runner.invoke(main, cmd, input='["e"]\n')
        _one_line_error(res, "modified")


def test_run_rejects_unknown_symbol(runner, tmp_path):
    res, out = _compile(runner, tmp_path, "parity", "--target", "householder")
    res = runner.invoke(main, ["run", str(out)], input='["0", "7"]\n')
    assert res.exit_code == 2 and "'7'" in res.output
    res = runner.invoke(main, ["run", str(out)], input="not json\n")
    assert res.exit_code == 2


def test_factor_by_factor_bfloat16_fails_where_fused_does_not(runner, tmp_path):
    res, out = _compile(runner, tmp_path, "M11", "--target", "householder")
    assert res.exit_code == 0
    res = runner.invoke(main, ["verify", str(out), "--dtype", "bfloat16", "--mode", "factors", "--json"])
    rep = json.loads(res.output)
    assert res.exit_code == 1 and rep["exact"]["ok"] and isinstance(rep["first_failing_length"], int)
    res = runner.invoke(main, ["verify", str(out), "--dtype", "bfloat16", "--json"])
    assert res.exit_code == 0 and json.loads(res.output)["first_failing_length"] is None


def test_verify_refuses_beyond_its_limit(runner, tmp_path):
    res, out = _compile(runner, tmp_path, "parity", "--target", "householder")
    res = runner.invoke(main, ["verify", str(out), "--length", "10000000", "--words", "16"])
    assert res.exit_code == 2 and "limit" in res.output


def test_output_directory_must_exist(runner, tmp_path):
    res = runner.invoke(
        main, ["compile", "S3", "--target", "householder", "-o", str(tmp_path / "no" / "m.safetensors")]
    )
    assert res.exit_code == 2 and "does not exist" in res.output
