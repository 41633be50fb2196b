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
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TARGET_SECONDS = 2.0
#: a refusal that has not come after this long is a hang (generous: the machine may be busy)
HANG_TIMEOUT = 120


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]  #: CLI arguments; "{dir}" is replaced by the folder holding the generated spec files
    expect: str  #: a phrase the one-line error must contain


def regex_power(k: int) -> str:
    """(a|b)*a(a|b)^k written out: the k-th-letter-from-the-end language, 2^(k+1) DFA states."""
    return "regex:(a|b)*a" + "(a|b)" * k


CASES = (
    Case("spec: 10^9 states, no transitions", ("show", "{dir}/huge_states.json"), "1,000,000,000 states"),
    Case("spec: 10^9 states, short rows", ("show", "{dir}/huge_rows.json"), "over the limit of 10,000,000"),
    Case("spec: 10^9 symbols", ("show", "{dir}/huge_symbols.json"), "1,000,000,000 symbols"),
    Case("regex (a|b)*a(a|b)^20", ("show", regex_power(20)), "over the limit of 100,000 states"),
    Case("regex (a|b)*a(a|b)^24", ("show", regex_power(24)), "over the limit of 100,000 states"),
    Case("analyze: 200,000-state spec", ("analyze", "{dir}/states200k.json"), "memory limit of 6 GiB"),
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


#: Runs the CLI in a grandchild and reports its ru_maxrss. A child spawned straight from a big process (a test run)
#: would report that process's peak, since Linux keeps the high-water mark across fork+exec; the small launcher's
#: own fork starts the count afresh.
_LAUNCHER = """
import os, sys
out = sys.argv[1]
pid = os.fork()
if pid == 0:
    os.execv(sys.executable, [sys.executable, "-c", "from fsa2rnn.cli.main import main; main()", *sys.argv[2:]])
_, status, usage = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_measured(args: list[str], timeout: float = HANG_TIMEOUT) -> tuple[int, str, float, float]:
    """Run ``fsa2rnn ARGS`` in a fresh process: (exit code, stderr, seconds, peak RSS in MiB of that process)."""
    with tempfile.TemporaryFile("w+") as err, tempfile.TemporaryDirectory() as d:
        rss_file = Path(d) / "maxrss"
        cmd = [sys.executable, "-c", _LAUNCHER, str(rss_file), *args]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            raise TimeoutError(f"fsa2rnn {' '.join(args)[:80]} did not finish in {timeout} s") from None
        seconds = time.perf_counter() - start
        err.seek(0)
        return rc, err.read(), seconds, int(rss_file.read_text()) / 1024


def main() -> int:
    ok = True
    with tempfile.TemporaryDirectory() as d:
        write_specs(Path(d))
        print(f"{'input':<36} {'seconds':>8} {'target':>7} {'peak MiB':>9}  result")
        for case in CASES:
            rc, err, seconds, peak = run_measured([a.replace("{dir}", d) for a in case.args])
            refused = rc == 2 and len(err.strip().splitlines()) == 1 and case.expect in err
            good = refused and seconds <= TARGET_SECONDS
            ok &= good
            verdict = "ok" if good else ("SLOW" if refused else f"NOT REFUSED (exit {rc}): {err.strip()[:100]}")
            print(f"{case.name:<36} {seconds:8.2f} {TARGET_SECONDS:7.1f} {peak:9.0f}  {verdict}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
