"""Every code block of README.md and docs/ runs, and prints what the page says it prints (tests/docs_blocks.py has
the conventions: commands and their exit codes, ``# →`` result comments, ```text output blocks, doctests, the skip
marker). One test per page; a page's blocks run in order in one scratch folder (a model compiled in one block is
there for the next), with `examples/` linked in.

Budget: the pages' blocks use small examples (tiny training runs, a few hundred steps at most). All pages together
take about 35 s of CPU — measured 110 s of wall time on a 2-core machine at load 7.6 — the README (the tour, with a
training run) and the compare, training and precision pages the longest (15–25 s each there). The quickstart
script (`make demo`) runs too."""

from __future__ import annotations

import contextlib
import doctest
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from docs_blocks import ROOT, Block, matches, pages, read_blocks, shell_commands

from fsa2rnn.cli.main import main

pytestmark = pytest.mark.usefixtures("one_torch_thread")  # the in-process commands (training included)

PAGES = pages()
#: blocks kept from running (the skip marker) at most: each is listed by test_skipped_blocks_are_few_and_listed
MAX_SKIPS = 8


def _run_page(path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Run every block of the page; the number of commands and Python blocks run."""
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    namespace: dict = {"__name__": "__docs__"}
    ran = 0
    for block in read_blocks(path):
        if block.skip:
            continue
        if block.lang in ("sh", "bash"):
            ran += _run_shell(block, runner, tmp_path)
        elif block.lang == "python":
            _run_python(block, namespace)
            ran += 1
    return ran


def _run_shell(block: Block, runner: CliRunner, tmp_path: Path) -> int:
    printed = []
    commands = shell_commands(block)
    for cmd in commands:
        if cmd.mkdir:
            for folder in cmd.argv:
                (tmp_path / folder).mkdir(parents=True, exist_ok=True)
            continue
        result = runner.invoke(main, cmd.argv, input=cmd.stdin)
        shown = f"{block.where}: fsa2rnn {' '.join(cmd.argv)}"
        assert result.exit_code == cmd.exit_code, (
            f"{shown}: exit {result.exit_code}, the page says {cmd.exit_code}\n{result.output}"
            + ("" if result.exc_info is None or result.exit_code in (0, 1, 2) else repr(result.exception))
        )
        if cmd.result is not None:
            said = f"{shown}: printed\n{result.output}\nthe page: {cmd.result}"
            assert matches(cmd.result, result.output.strip()), said
        if cmd.output is not None:
            said = f"{shown}: printed\n{result.output}\nthe page's transcript:\n{cmd.output}"
            assert matches(cmd.output, result.output), said
        printed.append(result.output)
    if block.output is not None:
        got = "".join(printed)
        assert matches(block.output, got), f"{block.where}: printed\n{got}\nthe page's output block:\n{block.output}"
    return sum(not c.mkdir for c in commands)


def _run_python(block: Block, namespace: dict) -> None:
    if ">>> " in block.code:
        test = doctest.DocTestParser().get_doctest(block.code, namespace, block.where, str(block.path), block.line)
        out = io.StringIO()
        flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
        res = doctest.DocTestRunner(optionflags=flags).run(test, out=out.write, clear_globs=False)
        assert res.failed == 0, out.getvalue()
        return
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(block.code, block.where, "exec"), namespace)
    if block.output is not None:
        assert matches(block.output, buf.getvalue()), (
            f"{block.where}: printed\n{buf.getvalue()}\nthe page's output block:\n{block.output}"
        )


@pytest.mark.parametrize("path", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_page_blocks_run_and_print_what_the_page_says(path, tmp_path, monkeypatch):
    _run_page(path, tmp_path, monkeypatch)


def test_readme_and_docs_have_runnable_blocks():
    blocks = [b for p in PAGES for b in read_blocks(p)]
    commands = sum(len(shell_commands(b)) for b in blocks if b.lang in ("sh", "bash"))
    compared = [b for b in blocks if b.output is not None or ">>> " in b.code]
    assert commands >= 20 and len(compared) >= 10, (commands, len(compared))


def test_skipped_blocks_are_few_and_listed():
    skipped = [f"{b.where}: {b.skip}" for p in PAGES for b in read_blocks(p) if b.skip]
    print("\n".join(skipped))
    assert len(skipped) <= MAX_SKIPS, skipped


def test_the_matcher_can_fail():
    """The output matcher rejects what differs (a matcher that accepts everything would pass every page)."""
    assert matches("a …\n...\nz", "a b c\nx\ny\nz")
    assert not matches("a 1", "a 2") and not matches("a\nb", "a") and not matches("...\nz", "z\ny")


def test_blocks_and_output_blocks_are_read():
    text = (
        "x\n```sh\nfsa2rnn list  # → a…\n```\n\n```text\nout\n```\n"
        "<!-- docs-test: skip too slow -->\n```python\n1\n```\n"
    )
    p = ROOT / "tests" / "_docs_blocks_sample.md"
    p.write_text(text)
    try:
        sh, py = read_blocks(p)
    finally:
        p.unlink()
    assert sh.output == "out" and shell_commands(sh)[0].result == "a…" and py.skip == "too slow"


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
