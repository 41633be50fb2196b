"""Throughput of `fsa2rnn run`, the whole process as a user starts it: 10^5 stdin lines of length 10, and one word of
10^6 symbols, for each target — Householder in one layer (S5, Theorem 3), the Householder cascade (T4, Theorem 4),
diagonal (Z60), NFSM (S5: four heads of five points; T4: stacked layers). Target (issue 9): under 3 s each.

Each figure is one run of `fsa2rnn run MODEL < input > output` (at float64: the torch-free numpy executor),
wall clock, printed beside its target with the child's CPU time (wall ≫ CPU means the machine was busy), the fixed
cost of the process (the same command on an empty stdin: Python, the imports, the model file) and the CPU time
beyond it (parsing, the network, output); beside it, the same run with `--engine torch` (the torch modules, whose
start includes importing torch) and the ratio torch / numpy. Every output of both engines is then checked line by
line against the automaton (`Automaton.run`). Python's bytecode cache is
allowed in the child (a user's install has one), and one empty run per model warms it before the timed runs.

    python benchmarks/bench_run.py [--quick]     # --quick: 10^4 lines and a 10^5-symbol word
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from fsa2rnn.compiler import compile_diagonal, compile_householder, compile_nfsm
from fsa2rnn.fsa import resolve_spec

TARGET_S = 3.0
CASES = [
    ("householder S5 (one layer)", "S5", compile_householder, {}),
    ("householder T4 (cascade)", "T4", compile_householder, {}),
    ("diagonal Z60", "Z60", compile_diagonal, {}),
    ("nfsm S5 (4 heads of 5)", "S5", compile_nfsm, {}),
    ("nfsm T4 (stacked layers)", "T4", compile_nfsm, {"layers": "stacked"}),
]


def _command() -> list[str]:
    exe = Path(sys.executable).with_name("fsa2rnn")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "fsa2rnn.cli"]


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def _timed_run(model: Path, stdin: Path, stdout: Path, engine: str = "auto") -> tuple[float, float, int]:
    """(wall seconds, child CPU seconds, exit code) of one `fsa2rnn run` process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with stdin.open("rb") as fin, stdout.open("wb") as fout:
        t0 = time.perf_counter()
        command = [*_command(), "run", str(model), "--engine", engine]
        proc = subprocess.run(command, stdin=fin, stdout=fout, env=_child_env())
        wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode


def _write_words(path: Path, words: np.ndarray, symbols: list[str]) -> None:
    names = np.array([json.dumps(s) for s in symbols], dtype=object)
    with path.open("w") as f:
        for row in words:
            f.write("[" + ", ".join(names[row].tolist()) + "]\n")


def _check(path: Path, words: np.ndarray, automaton, initial: int) -> bool:
    want = automaton.run(words, start=np.full(len(words), initial))
    index = {s: i for i, s in enumerate(automaton.states)}
    lines = path.read_text().splitlines()
    if len(lines) != len(words):
        return False
    got = np.array([[index[s] for s in json.loads(line)] for line in lines])
    return bool(np.array_equal(got, want))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10^4 lines and a 10^5-symbol word")
    args = parser.parse_args()
    n_lines, long_len = (10**4, 10**5) if args.quick else (10**5, 10**6)
    tmp = Path(tempfile.mkdtemp(prefix="bench_run."))
    ok = True
    try:
        empty = tmp / "empty.txt"
        empty.write_text("")
        print(
            f"{'model':30s} {'input':28s} {'wall s':>7s} {'target':>7s} {'cpu s':>7s} {'cpu-fixed':>9s} "
            f"{'torch s':>8s} {'ratio':>6s}  result"
        )
        for label, spec, compile_fn, options in CASES:
            a = resolve_spec(spec)
            m = compile_fn(a, **options)
            model = tmp / "model.safetensors"
            m.save(model)
            _timed_run(model, empty, tmp / "out.txt")  # warms the bytecode cache and the model file
            _timed_run(model, empty, tmp / "out.txt", "torch")
            wall, fixed, code = _timed_run(model, empty, tmp / "out.txt")
            torch_wall = _timed_run(model, empty, tmp / "out.txt", "torch")[0]
            print(
                f"{label:30s} {'(empty stdin: fixed cost)':28s} {wall:7.2f} {'':>7s} {fixed:7.2f} {'':>9s} "
                f"{torch_wall:8.2f} {torch_wall / wall:6.1f}"
            )
            rng = np.random.default_rng(0)
            for name, words in (
                (f"{n_lines} lines x 10", rng.integers(0, a.n_symbols, size=(n_lines, 10))),
                (f"1 word x {long_len}", rng.integers(0, a.n_symbols, size=(1, long_len))),
            ):
                stdin, stdout = tmp / "in.txt", tmp / "out.txt"
                _write_words(stdin, words, list(a.symbols))
                wall, cpu, code = _timed_run(model, stdin, stdout)
                right = code == 0 and _check(stdout, words, a, m.initial)
                torch_wall, _, torch_code = _timed_run(model, stdin, stdout, "torch")
                right &= torch_code == 0 and _check(stdout, words, a, m.initial)
                fast = wall < TARGET_S
                ok &= right and (fast or args.quick)
                verdict = ("ok" if fast else "OVER TARGET") + ("" if right else ", WRONG OUTPUT")
                print(
                    f"{'':30s} {name:28s} {wall:7.2f} {TARGET_S:7.1f} {cpu:7.2f} {cpu - fixed:9.2f} "
                    f"{torch_wall:8.2f} {torch_wall / wall:6.1f}  {verdict}"
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
