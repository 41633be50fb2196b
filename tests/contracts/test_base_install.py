"""The base install (``pip install fsa2rnn``, no torch) degrades cleanly: the symbolic commands and the compilers
work, `verify` checks a compiled model on the numpy executor and says what it skips, and every command that needs
the ``nn`` extra says so in one line. Tested in a child process where ``import torch`` fails (the sitecustomize
of benchmarks/bench_hostile.py on PYTHONPATH); the refusals are rows of bench_hostile ("… without torch")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_hostile  # noqa: E402


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    folder = tmp_path_factory.mktemp("base")
    (folder / "sitecustomize.py").write_text(bench_hostile.NO_TORCH)
    return folder


def _fsa2rnn(base: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(base)}
    code = "from fsa2rnn.cli.main import main; main()"
    return subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, env=env, timeout=120)


def test_torch_is_really_missing(base):
    res = subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, text=True,
                         env={**os.environ, "PYTHONPATH": str(base)}, timeout=60)  # fmt: skip
    assert res.returncode == 1 and "No module named 'torch'" in res.stderr


def test_compile_and_verify_run_without_torch(base, tmp_path):
    model = tmp_path / "p.safetensors"
    res = _fsa2rnn(base, "compile", "parity", "--target", "nfsm", "-o", str(model), "--json")
    assert res.returncode == 0, res.stderr
    skipped = json.loads(res.stdout)["skipped"]
    assert "compile report" in skipped and "pip install 'fsa2rnn[nn]'" in skipped and model.exists()
    res = _fsa2rnn(base, "verify", str(model), "--json")
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stdout)
    assert report["ok"] and report["agreement"] == 1.0 and report["scan"].startswith("numpy executor")
    assert "margin certificate" in report["skipped"][0] and "pip install 'fsa2rnn[nn]'" in report["skipped"][0]
    res = _fsa2rnn(base, "run", str(model))
    assert res.returncode == 0 and res.stdout == "", res.stderr  # stdin is empty: no words


def test_verify_without_torch_still_finds_a_broken_model(base, tmp_path):
    """The numpy path is a check, not a formality: a model whose readout was edited (and resealed) fails."""
    from fsa2rnn.compiler import compile_householder
    from fsa2rnn.fsa import resolve_spec

    m = compile_householder(resolve_spec("Z3"))
    m.tensors["readout.states"] = m.tensors["readout.states"][::-1].copy()  # code points read as the wrong states
    m.seal().save(tmp_path / "bad.safetensors")
    res = _fsa2rnn(base, "verify", str(tmp_path / "bad.safetensors"), "--json")
    assert res.returncode == 1, res.stderr
    assert json.loads(res.stdout)["ok"] is False
