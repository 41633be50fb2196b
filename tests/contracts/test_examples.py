"""Every examples/*.py runs to completion (in a process of its own, 120 s each) and prints what it shows. The README's
commands and examples/quickstart.sh are run by tests/contracts/test_readme.py.

Examples that use torch run in processes forked from a server that has imported the heavy third-party libraries
once (multiprocessing's forkserver with preloaded modules): each is still a fresh process with its own exit code,
stdout, stderr and working folder that imports fsa2rnn itself and runs the script as ``__main__``, without paying
3–6 s of interpreter start and imports each. The others run as plain ``python examples/X.py`` subprocesses."""

from __future__ import annotations

import multiprocessing
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
#: lines an example must print (its claims, checked)
CLAIMS = {
    "layers.py": [
        "states right on a word of length 10^4: True",
        "in chunks of 1024: True",
        "wrapper fla: gated MLP of width 512, embedding std 0.02",
        "wrapper fsa2rnn: GELU MLP of width 512",
    ],
    "robustness.py": [
        "S5 householder: not_robust (Theorem 4.1 (i))",
        "L_max(η=0.001) = 588 (r/η = 588)",
        "NFSM M11 at 0.9·η*: robust",
    ],
    "compare.py": ["extracted 2 states (exact tables), relation: isomorphic"],
    "lstar.py": [
        "parity · deltanet [−1, 1]: learned 2 states, relation to the target: isomorphic, to the white-box "
        "extraction (2 states): isomorphic"
    ],
    "baselines.py": ["verified True; states right on words of length 1000: True", "states right on length 500: True"],
    "parallel_table.py": ["per-run figures equal: True"],
    "your_own_model.py": ["white-box extraction:", "token accuracy at 10, 40:"],
    "modarith_medium.py": ["contrast [-1, 1] - [0, 1] in the medians of 1 and 1 seed(s):", "| [0,1] |"],
}
#: arguments of the suite's run (training scripts, and examples whose default size only adds length, take --quick)
ARGS = {
    "train_parity.py": ["--quick"],
    "train_nfsm.py": ["--quick"],
    "compare.py": ["--quick"],
    "precision.py": ["--quick"],
    "lstar.py": ["--quick"],
    "baselines.py": ["--quick"],
    "modarith_medium.py": ["--quick"],
    "parallel_table.py": ["--quick"],
    "your_own_model.py": ["--quick"],
}
#: tiny tensors: one torch thread (as cli/run.py and the training scripts use) avoids thread-pool overhead and
#: oversubscription of a 2-core machine; the printed results do not depend on it
ENV = {**os.environ, "OMP_NUM_THREADS": "1"}
TIMEOUT = 120
#: examples without torch: plain subprocesses (a warm start saves them little)
PLAIN = {"automaton_basics.py", "analyze_monoid.py", "decompose.py"}
#: third-party modules the forkserver imports once (not fsa2rnn: every example imports the package afresh)
PRELOAD = ["numpy", "scipy", "sympy", "torch", "torch._dynamo", "matplotlib", "safetensors", "click"]


def test_there_are_examples():
    assert EXAMPLES, "no examples/*.py found"


@pytest.fixture(scope="module")
def warm() -> multiprocessing.context.BaseContext:
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    return ctx


def _as_main(script: str, args: list[str], cwd: str, out: str, err: str) -> None:
    """In the forked process: what `cd CWD; python SCRIPT ARGS >OUT 2>ERR` does, with the preloaded modules."""
    for fd, path in ((1, out), (2, err)):
        f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(f, fd)
        os.close(f)
    os.chdir(cwd)
    os.environ.update(ENV)
    import torch

    torch.set_num_threads(int(ENV["OMP_NUM_THREADS"]))  # torch read the variable when the server imported it
    sys.argv = [script, *args]
    sys.path.insert(0, os.path.dirname(script))
    runpy.run_path(script, run_name="__main__")  # an exception: traceback on stderr, exit code 1


def _run(script: Path, tmp_path: Path, warm) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of the example run in tmp_path/run."""
    args = ARGS.get(script.name, [])
    cwd = tmp_path / "run"
    cwd.mkdir()
    if script.name in PLAIN:
        cmd = [sys.executable, str(script), *args]
        proc = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=TIMEOUT)
        return proc.returncode, proc.stdout, proc.stderr
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    proc = warm.Process(target=_as_main, args=(str(script), args, str(cwd), str(out), str(err)))
    proc.start()
    proc.join(TIMEOUT)
    if proc.exitcode is None:
        proc.kill()
        proc.join()
        pytest.fail(f"{script.name} ran over {TIMEOUT} s")
    return proc.exitcode, out.read_text(), err.read_text()


@pytest.mark.parametrize("script", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(script, tmp_path, warm):
    code, stdout, stderr = _run(script, tmp_path, warm)
    assert code == 0, stderr[-2000:]
    assert stdout.strip(), "an example should print what it shows"
    for claim in CLAIMS.get(script.name, []):
        assert claim in stdout, f"{script.name} should print {claim!r}"
