"""Every examples/*.py runs to completion (in a subprocess, 120 s each), and the CLI lines of
examples/quickstart.sh that need no model file work (the whole script is run by `make demo`)."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from fsa2rnn.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))


def test_there_are_examples():
    assert EXAMPLES, "no examples/*.py found"


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script, tmp_path):
    proc = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip(), "an example should print what it shows"


def _quickstart_commands() -> list[list[str]]:
    """`fsa2rnn show|list …` lines of the quickstart script (commands on model files are checked by `make demo`)."""
    out = []
    for line in (ROOT / "examples" / "quickstart.sh").read_text().splitlines():
        words = shlex.split(line, comments=True)
        if len(words) >= 2 and words[0] == "fsa2rnn" and words[1] in ("show", "list"):
            if not any(w in ("|", ">", "<", ">>") or "$" in w for w in words):
                out.append(words[1:])
    return out


def test_quickstart_has_show_commands():
    assert _quickstart_commands()


@pytest.mark.parametrize("args", _quickstart_commands(), ids=lambda a: " ".join(a))
def test_quickstart_command_works(args, monkeypatch):
    monkeypatch.chdir(ROOT)  # spec paths in the script are relative to the repository root
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output


def _readme_commands() -> list[list[str]]:
    """`fsa2rnn show|list …` lines in the README's shell blocks (other commands are tested by their owners)."""
    import re

    text = (ROOT / "README.md").read_text()
    out = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.removeprefix("$ ")
            if not line.startswith("fsa2rnn "):
                continue  # output lines
            words = shlex.split(line, comments=True)
            if len(words) >= 2 and words[0] == "fsa2rnn" and words[1] in ("show", "list", "--version"):
                out.append(words[1:])
    return out


@pytest.mark.parametrize("args", _readme_commands(), ids=lambda a: " ".join(a))
def test_readme_command_works(args, tmp_path, monkeypatch):
    """Each README command exits 0 (or 2, for the lines that illustrate errors) — run in a scratch folder."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, args)
    expected_error = any(a in ("S5:bogus", "M11:all") for a in args)
    assert result.exit_code == (2 if expected_error else 0), result.output
