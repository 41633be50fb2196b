"""Seconds (and peak RSS) to refuse each out-of-memory-class input, beside the target: refused in ≤ 2 s, exit 2,
one line, far below the memory it would have taken.

Each input once ate all memory or ran for minutes before this check existed: a spec declaring 10^9 states, the
textbook exponential regexes (a|b)*a(a|b)^20 and ^24, analyze on a 200,000-state spec, compile of a regex whose
cascade has 300 levels, the word problem of S12. Every case runs the CLI in a fresh child process, so that the
time includes start-up and the peak RSS is the child's own (``os.wait4``).

    python benchmarks/bench_limits.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import numpy as np
from refusals import HANG_TIMEOUT, Case, report, run_cli

TARGET_SECONDS = 2.0


def regex_power(k: int) -> str:
    """(a|b)*a(a|b)^k written out: the k-th-letter-from-the-end language, 2^(k+1) DFA states."""
    return "regex:(a|b)*a" + "(a|b)" * k


CASES = (
    Case("spec: 10^9 states, no transitions", ("show", "{dir}/huge_states.json"), "1,000,000,000 states"),
    Case("spec: 10^9 states, short rows", ("show", "{dir}/huge_rows.json"), "over the limit of 10,000,000"),
    Case("spec: 10^9 symbols", ("show", "{dir}/huge_symbols.json"), "1,000,000,000 symbols"),
    Case("regex (a|b)*a(a|b)^20", ("show", regex_power(20)), "over the limit of 100,000 states"),
    Case("regex (a|b)*a(a|b)^24", ("show", regex_power(24)), "over the limit of 100,000 states"),
    Case("analyze: 200,000-state spec", ("analyze", "{dir}/states200k.json"), "memory limit of 0.375 GiB"),
    Case(
        "compile: regex of 300 levels",
        ("compile", "regex:" + "(a|b)" * 300 + "a", "--target", "householder", "-o", "{dir}/m.safetensors"),
        "2^62",
    ),
    Case("show S12:gens", ("show", "S12:gens"), "order 479001600"),
)


def write_specs(folder: Path) -> None:
    """The generated spec files the cases name."""
    n = 200_000
    rng = np.random.default_rng(0)
    specs = {
        "huge_states.json": {"states": 10**9, "symbols": ["a"], "transitions": {}},
        "huge_rows.json": {"states": 10**9, "symbols": ["a", "b"], "transitions": {"a": [0], "b": [0]}},
        "huge_symbols.json": {"states": ["q"], "symbols": 10**9, "transitions": {}},
        "states200k.json": {
            "states": n,
            "symbols": ["a", "b"],
            "transitions": {"a": ((np.arange(n) + 1) % n).tolist(), "b": rng.integers(0, n, n).tolist()},
            "initial": "0",
        },
    }
    for name, spec in specs.items():
        (folder / name).write_text(json.dumps(spec))


def run_measured(args: list[str], timeout: float = HANG_TIMEOUT) -> tuple[int, str, float, float]:
    """Run ``fsa2rnn ARGS`` in a fresh process: (exit code, stderr, seconds, peak RSS in MiB of that process)."""
    return run_cli(args, timeout=timeout)


def main() -> int:
    with tempfile.TemporaryDirectory() as d:
        write_specs(Path(d))
        ok = report(CASES, Path(d), lambda case: run_measured(list(case.args)), target_seconds=TARGET_SECONDS, width=36)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
