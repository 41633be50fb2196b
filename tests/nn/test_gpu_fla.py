"""benchmarks/gpu_fla.py (fla's DeltaNet beside fsa2rnn's on parity at [−1, 1] and [0, 1]): its ``--dry-run`` plan,
and ``--device cpu``, the same four runs through the CPU stand-in of fla's signatures (a few steps: the pipeline, not
a result). The CUDA part needs fla and a GPU and is never run by the suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "gpu_fla.py"


def _run(*args: str) -> list[str]:
    res = subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return res.stdout.strip().splitlines()


def test_the_dry_run_plans_both_layers_at_both_ranges():
    lines = _run("--dry-run")
    names = [line.split(":")[0] for line in lines]
    assert names == ["fla DeltaNet [-1,1]", "fsa2rnn DeltaNet [-1,1]", "fla DeltaNet [0,1]", "fsa2rnn DeltaNet [0,1]"]
    assert all('"steps": 1500' in line and '"task"' not in line for line in lines)  # the GPU plan, parity's settings


def test_the_cpu_run_trains_the_stand_in_beside_fsa2rnn_deltanet():
    lines = _run("--device", "cpu")
    assert [line.split(":")[0] for line in lines] == [
        "fla DeltaNet [-1,1]", "fsa2rnn DeltaNet [-1,1]", "fla DeltaNet [0,1]", "fsa2rnn DeltaNet [0,1]"
    ]  # fmt: skip
    assert all(": L_max " in line for line in lines)
