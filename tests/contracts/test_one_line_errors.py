"""Every bad input the CLI meets is one line `error: …` on stderr with exit code 2 (issue 9, item 4): deeply nested
JSON, a negative seed, click's own usage errors, margins whose logits overflow, empty symbol names — and `run`
answers every stdin line with exactly one line."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.fsa import Automaton, resolve_spec
from fsa2rnn.fsa.errors import SpecError

DEEP = "[" * 100_000 + "]" * 100_000  # beyond Python's recursion limit for json


def _error_line(res, phrase: str) -> str:
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and phrase in lines[0], res.stderr
    assert "Traceback" not in res.output and "Usage:" not in res.output
    return lines[0]


@pytest.fixture(scope="module")
def parity_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("m") / "parity.safetensors"
    assert CliRunner().invoke(main, ["compile", "parity", "--target", "nfsm", "-o", str(path)]).exit_code == 0
    return path


def test_deeply_nested_json_spec(tmp_path):
    spec = tmp_path / "deep.json"
    spec.write_text('{"states": ' + DEEP + "}")
    _error_line(CliRunner().invoke(main, ["show", str(spec)]), "nested too deeply")
    spec.write_text(DEEP)  # not even an object: refused at its first byte
    _error_line(CliRunner().invoke(main, ["show", str(spec)]), "is not a JSON object: it starts with the byte b'['")
    with pytest.raises(SpecError, match="nested too deeply"):
        Automaton.from_json('{"states": ' + DEEP + "}")


def test_deeply_nested_stdin_line(parity_model):
    res = CliRunner().invoke(main, ["run", str(parity_model)], input='["1"]\n' + DEEP + "\n")
    _error_line(res, "stdin line 2: the JSON is nested too deeply")


def test_run_gives_one_output_line_per_input_line(parity_model):
    res = CliRunner().invoke(main, ["run", str(parity_model)], input='["1"]\n\n[]\n   \n["1", "1"]\n')
    assert res.exit_code == 0, res.output
    assert [json.loads(line) for line in res.stdout.splitlines()] == [["odd"], [], [], [], ["odd", "even"]]


@pytest.mark.parametrize(
    "args,phrase",
    [
        (["run", "{model}", "--dtype", "bogus"], "'bogus' is not one of"),
        (["verify", "{model}", "--length", "0"], "0 is outside its limit [1, 2^20]"),
        (["verify", "{model}", "--seed", "-1"], "--seed"),
        (["compile", "parity", "--target", "nfsm", "-o", "{dir}"], "is not a regular file (a directory)"),
        (["compile", "parity", "--target", "bogus", "-o", "{dir}/x"], "unknown target 'bogus'"),
        (["compile", "parity"], "Missing option"),
        (["show"], "Missing argument 'SPEC'"),
        (["no-such-command"], "No such command"),
        (["--no-such-option"], "No such option"),
    ],
)
def test_usage_errors_are_one_line(args, phrase, parity_model, tmp_path):
    args = [a.replace("{model}", str(parity_model)).replace("{dir}", str(tmp_path)) for a in args]
    line = _error_line(CliRunner().invoke(main, args), phrase)
    assert "--help" in line or "regular file" in line  # a usage error says where to look, on the same line


def test_margin_whose_logits_overflow_is_refused(tmp_path):
    out = tmp_path / "m.safetensors"
    res = CliRunner().invoke(main, ["compile", "parity", "--target", "nfsm", "--margin", "1e30", "-o", str(out)])
    _error_line(res, "above 65504, the largest finite float16")
    assert not out.exists()
    # the largest margin the message names is accepted, and float16 then runs without overflow
    res = CliRunner().invoke(main, ["compile", "parity", "--target", "nfsm", "--margin", "64000", "-o", str(out)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(main, ["run", str(out), "--dtype", "float16"], input='["1", "1", "0"]\n')
    assert res.exit_code == 0 and json.loads(res.stdout) == ["odd", "even", "even"], res.output


def test_dense_embedding_margin_bound():
    from fsa2rnn.compiler import compile_nfsm

    with pytest.raises(SpecError, match="largest finite float16"):
        compile_nfsm(resolve_spec("S3"), margin=60000, embedding="dense")  # partial sums reach ‖W_i‖ > margin
    compile_nfsm(resolve_spec("S3"), margin=1000, embedding="dense")


def test_empty_symbol_name_is_refused(tmp_path):
    spec = {"states": 1, "symbols": ["", "a"], "transitions": {"": [0], "a": [0]}}
    path = tmp_path / "empty.json"
    path.write_text(json.dumps(spec))
    _error_line(CliRunner().invoke(main, ["show", str(path)]), "a symbol name must not be empty")
    with pytest.raises(SpecError, match="must not be empty"):
        Automaton([[0], [0]], symbols=["a", ""])
