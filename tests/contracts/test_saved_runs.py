"""Run directories, a compiled model and a reproduction folder written by an earlier build (tests/fixtures/) still
load, and `eval`, `compare` and `reproduce --table-only` give the figures recorded with that build
(tests/fixtures/expected.json; regenerate only on a deliberate change of the figures: ``python
tests/contracts/test_saved_runs.py``)."""

from __future__ import annotations

import json
import math
import shutil
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main

pytestmark = pytest.mark.usefixtures("one_torch_thread")

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RUNS = FIXTURES / "runs"
TABLE = FIXTURES / "reproduce" / "brandoit-table1-tiny"
EXPECTED = FIXTURES / "expected.json"
SMALL = ["--cap", "256", "--samples", "32"]

#: name → the command's arguments (RUN and DIR stand for the fixture's folder, or its copy)
COMMANDS: dict[str, list[str]] = {
    "eval parity-deltanet": ["eval", "RUNS/parity-deltanet", "--lmax", *SMALL],
    "eval z2-nfsm": ["eval", "RUNS/z2-nfsm", "--lmax", *SMALL],
    "compare parity-deltanet": [
        "compare", "RUNS/parity-deltanet", "--compiled", "RUNS/parity-householder.safetensors", "--words", "64", *SMALL,
    ],  # fmt: skip
    "compare z2-nfsm": ["compare", "RUNS/z2-nfsm", "--words", "64", *SMALL],
    "reproduce --table-only": [
        "reproduce", "brandoit-table1", "--scale", "tiny", "--tasks", "Z2", "--models", "nfsm,mamba", "--seeds", "42",
        "--out", "DIR", "--table-only",
    ],  # fmt: skip
}


def _output(name: str, tmp: Path) -> dict:
    table = tmp / "table"
    if not table.exists():
        shutil.copytree(TABLE, table)  # --table-only rewrites the table files in DIR
    args = [a.replace("RUNS", str(RUNS)).replace("DIR", str(table)) for a in COMMANDS[name]]
    res = CliRunner().invoke(main, [*args, "--json", "--quiet"])
    assert res.exit_code == 0, res.output
    return _plain(json.loads(res.stdout), (str(RUNS), str(table)))


def _plain(value, paths):
    """The output with the fixture folders' paths written as placeholders (they differ between checkouts)."""
    if isinstance(value, dict):
        return {k: _plain(v, paths) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v, paths) for v in value]
    if isinstance(value, str):
        return value.replace(paths[0], "RUNS").replace(paths[1], "DIR")
    return value


def _same(got, want, where="") -> None:
    if isinstance(want, float) and isinstance(got, (int, float)):
        # float32 figures (a margin is a difference of logits of size ~1) move by a few float32 ulps with the order in
        # which the kernels sum (thread count, the CPU's vector width): 8 ulps of 1 absolute, 1e-5 relative
        assert math.isclose(got, want, rel_tol=1e-5, abs_tol=1e-6), f"{where}: {got} != {want}"
    elif isinstance(want, dict):  # a later build may report more keys; the recorded ones keep their figures
        assert isinstance(got, dict) and set(want) <= set(got), f"{where}: keys {sorted(want)} not in {sorted(got)}"
        for k in want:
            _same(got[k], want[k], f"{where}.{k}")
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want), f"{where}: {got} != {want}"
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{where}[{i}]")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


@pytest.mark.parametrize("name", list(COMMANDS))
def test_saved_folders_give_the_recorded_figures(name, tmp_path):
    want = json.loads(EXPECTED.read_text())[name]
    _same(_output(name, tmp_path), want, name)


def test_the_reproduction_table_is_read_back_not_retrained(tmp_path, monkeypatch):
    import fsa2rnn.nn.train.trainer as trainer

    monkeypatch.setattr(trainer, "train", lambda *a, **k: pytest.fail("a finished run was re-run"))
    got = _output("reproduce --table-only", tmp_path)
    assert [c["aggregate"] for c in got["cells"]] == [c["aggregate"] for c in json.loads(EXPECTED.read_text())[
        "reproduce --table-only"]["cells"]]  # fmt: skip
    assert all(s["status"] == "done" for c in got["cells"] for s in c["seeds"])


if __name__ == "__main__":  # record the figures of this build
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        figures = {name: _output(name, Path(tmp)) for name in COMMANDS}
    EXPECTED.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n")
    print(f"wrote {EXPECTED}", file=sys.stderr)
