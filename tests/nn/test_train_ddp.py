"""Data parallel training under torchrun (gloo on CPU): `fsa2rnn train --nproc 2` launches `torchrun
--nproc-per-node 2 -m fsa2rnn.cli.train ARGS`, trains, writes one set of files, and its losses equal those of one
process with the same global batch (Gumbel noise and dropout drawn per global batch, not per rank)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ARGS = [
    "brandoit:FF",
    "--model",
    "nfsm",
    "--d-model",
    "16",
    "--mlp-ratio",
    "2",
    "--dropout",
    "0.1",
    "--steps",
    "10",
    "--batch",
    "8",
    "--log-every",
    "1",
    "--samples",
    "16",
    "--eval-lengths",
    "64",
    "--no-lmax",
]


def _losses(run) -> list[float]:
    return [json.loads(line)["loss"] for line in (run / "metrics.jsonl").read_text().splitlines()]


def test_two_gloo_processes_match_one_process(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    assert CliRunner().invoke(main, ["train", *ARGS, "--out", str(one)]).exit_code == 0
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, "-m", "fsa2rnn.cli", "train", *ARGS, "--nproc", "2", "--out", str(two), "--json"]
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.strip().splitlines()[-1])  # rank 0 alone prints
    assert result["steps"] == 10 and proc.stdout.count('"run"') == 1
    assert sorted(os.listdir(two)) == sorted(os.listdir(one))  # one set of files
    a, b = _losses(one), _losses(two)
    assert len(a) == len(b) == 10
    assert max(abs(x - y) for x, y in zip(a, b)) < 1e-4
    cfg = json.loads((two / "config.json").read_text())["train"]
    assert cfg["batch"] == 8  # the global batch


def test_the_torchrun_entry_point_refuses_bad_input_in_one_line(tmp_path):
    cmd = [sys.executable, "-m", "fsa2rnn.cli.train", "no-such-task", "--out", str(tmp_path / "r")]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stderr.startswith("error: unknown task") and proc.stderr.count("\n") == 1
    assert not (tmp_path / "r").exists()
