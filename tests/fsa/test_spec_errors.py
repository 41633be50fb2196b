"""Bad specs: each gives exit code 2 and one line on stderr naming the problem, and no output file is left behind.

Run through the real CLI (click's CliRunner, plus one subprocess run of the installed `fsa2rnn` script)."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main

GOOD = {
    "format": "fsa2rnn.automaton/1",
    "states": ["q0", "q1"],
    "symbols": ["a", "b"],
    "transitions": {"a": [1, 0], "b": [0, 0]},
    "initial": "q0",
}


def _with(**changes):
    spec = json.loads(json.dumps(GOOD))
    for key, value in changes.items():
        if value is None:
            spec.pop(key)
        else:
            spec[key] = value
    return json.dumps(spec)


# (case id, file text or None for a spec string, spec string, words the message must contain)
BAD_FILES = [
    ("malformed-json", '{"states": [', ["malformed JSON"]),
    ("unknown-key", _with(colour="red"), ["unknown spec key", "'colour'"]),
    ("missing-symbol", _with(transitions={"a": [1, 0]}), ["no entry for symbol", "'b'"]),
    ("undeclared-symbol", _with(transitions={"a": [1, 0], "b": [0, 0], "c": [0, 0]}), ["unknown symbol", "'c'"]),
    ("out-of-range-image", _with(transitions={"a": [1, 2], "b": [0, 0]}), ["transitions['a'][1] = 2", "out of range"]),
    ("duplicate-state", _with(states=["q0", "q0"]), ["duplicate name", "'q0'"]),
    ("duplicate-symbol", _with(symbols=["a", "a"]), ["duplicate name", "'a'"]),
    ("empty-alphabet", _with(symbols=[], transitions={}), ["'symbols' is empty", "alphabet"]),
    ("short-row", _with(transitions={"a": [1], "b": [0, 0]}), ["transitions['a'] has 1 entries", "2 states"]),
    ("unknown-initial", _with(initial="q9"), ["'initial'", "'q9'"]),
    ("unknown-accepting", _with(accepting=["zz"]), ["'accepting'", "'zz'"]),
    ("missing-transitions", _with(transitions=None), ["missing the key", "'transitions'"]),
    ("wrong-format", _with(format="other/2"), ["'format'", "'other/2'"]),
]
BAD_STRINGS = [
    ("unknown-builtin", "S5:bogus", ["unknown builtin", "'S5:bogus'", "fsa2rnn list"]),
    ("bad-regex", "regex:(ab", ["bad regex", "'(ab'"]),
    ("missing-file", "no/such/file.json", ["no such file", "no/such/file.json"]),
    ("over-limit", "M11:all", ["7920", "limit of 5000"]),
]


def _check(result, words):
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    for w in words:
        assert w in lines[0], (w, lines[0])
    assert "Traceback" not in result.stderr and result.stdout == ""


@pytest.mark.parametrize("case", BAD_FILES, ids=[c[0] for c in BAD_FILES])
@pytest.mark.parametrize("json_flag", [[], ["--json"]])
def test_bad_spec_file(tmp_path, case, json_flag):
    _, text, words = case
    path = tmp_path / "spec.json"
    path.write_text(text)
    dot = tmp_path / "out.dot"
    result = CliRunner().invoke(main, ["show", str(path), "--dot", str(dot), *json_flag])
    _check(result, words)
    assert not dot.exists()  # no partial output file


@pytest.mark.parametrize("case", BAD_STRINGS, ids=[c[0] for c in BAD_STRINGS])
def test_bad_spec_string(tmp_path, case):
    _, spec, words = case
    result = CliRunner().invoke(main, ["show", spec])
    _check(result, words)


def test_good_spec_file_is_accepted(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(GOOD))
    result = CliRunner().invoke(main, ["show", str(path), "--json"])
    assert result.exit_code == 0
    assert json.loads(result.stdout)["states"] == ["q0", "q1"]


@pytest.mark.skipif(shutil.which("fsa2rnn") is None, reason="the console script is not on PATH")
def test_installed_script_exit_code(tmp_path):
    path = tmp_path / "spec.json"
    path.write_text(_with(colour="red"))
    proc = subprocess.run(["fsa2rnn", "show", str(path)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and "'colour'" in proc.stderr
