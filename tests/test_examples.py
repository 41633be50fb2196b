"""Every examples/*.py runs to completion (in a subprocess, 120 s each) and prints what it shows. The README's
commands and examples/quickstart.sh are run by tests/test_readme.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
#: lines an example must print (its claims, checked)
CLAIMS = {
    "layers.py": ["states right on a word of length 10^4: True", "in chunks of 1024: True"],
    "robustness.py": [
        "S5 householder: not_robust (Theorem 4.1 (i))",
        "L_max(η=0.001) = 588 (r/η = 588)",
        "NFSM M11 at 0.9·η*: robust",
    ],
    "compare.py": ["extracted 2 states (exact tables), relation: isomorphic"],
}
#: arguments of the suite's run (training scripts take --quick)
ARGS = {"train_parity.py": ["--quick"], "train_nfsm.py": ["--quick"], "compare.py": ["--quick"]}


def test_there_are_examples():
    assert EXAMPLES, "no examples/*.py found"


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script, tmp_path):
    cmd = [sys.executable, str(script), *ARGS.get(script.name, [])]
    proc = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip(), "an example should print what it shows"
    for claim in CLAIMS.get(script.name, []):
        assert claim in proc.stdout, f"{script.name} should print {claim!r}"
