"""The README's commands work as written: every `fsa2rnn …` line of its sh/bash blocks runs, in order, in one
scratch folder (so a model compiled in one block is there for `run` and `verify` in the next), with the exit code
the README states ("exit 2", "exit 1" in the line's comment, or 2 when an `error:` line follows in a transcript;
otherwise 0). The whole quickstart script runs too."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.usefixtures("one_torch_thread")  # the in-process commands (training included)


def _readme_lines() -> list[tuple[list[str], str | None, int]]:
    """(argv after `fsa2rnn`, stdin text or None, expected exit code) for each command line of the README; a
    `mkdir -p DIR` line is kept as its own argv (["mkdir", "-p", DIR, …])."""
    text = (ROOT / "README.md").read_text()
    out = []
    for block in re.findall(r"```(?:sh|bash)\n(.*?)```", text, re.S):
        lines = block.splitlines()
        for i, line in enumerate(lines):
            shows_error = i + 1 < len(lines) and lines[i + 1].startswith("error:")  # a transcript of a bad input
            line = line.removeprefix("$ ").strip()
            stdin = None
            piped = re.match(r"(?:echo|printf '%s\\n') ('(?:[^']*)'(?: '[^']*')*) \| (fsa2rnn .*)", line)
            if piped:
                stdin = "\n".join(shlex.split(piped.group(1))) + "\n"
                line = piped.group(2)
            if line.startswith("mkdir -p "):
                out.append((shlex.split(line, comments=True), None, 0))  # a folder later lines write into
                continue
            if not line.startswith("fsa2rnn "):
                continue  # `make …` lines and printed output
            comment = line.split("#", 1)[1] if "#" in line else ""
            code = re.search(r"exit (\d)", comment)
            words = shlex.split(line, comments=True)
            out.append((words[1:], stdin, int(code.group(1)) if code else 2 if shows_error else 0))
    return out


README_LINES = _readme_lines()


def test_readme_has_commands():
    assert len(README_LINES) >= 10


def test_readme_commands_work(tmp_path, monkeypatch):
    """All lines in order in one folder: later lines use the model files earlier lines wrote."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    for args, stdin, expected in README_LINES:
        if args[0] == "mkdir":
            for folder in args[2:]:
                (tmp_path / folder).mkdir(parents=True, exist_ok=True)
            continue
        result = runner.invoke(main, args, input=stdin)
        shown = "fsa2rnn " + " ".join(args)
        assert result.exit_code == expected, (
            f"{shown}: exit {result.exit_code}, README says {expected}\n{result.output}"
        )
        if expected == 0 and args[0] == "run":
            assert result.output.strip().startswith("["), shown


@pytest.mark.slow
def test_quickstart_script_runs(tmp_path):
    """`make demo`'s script, as a user runs it (the fsa2rnn on PATH is this environment's)."""
    env = dict(os.environ, OUT_DIR=str(tmp_path / "out"), OMP_NUM_THREADS="1")  # one torch thread, as in process
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env["PATH"]
    proc = subprocess.run(
        ["bash", str(ROOT / "examples" / "quickstart.sh")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "out" / "T4.nfsm.safetensors").is_file()
    assert "ok: True" in proc.stdout
