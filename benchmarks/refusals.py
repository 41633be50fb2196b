"""The harness of the refusal benchmarks (bench_limits.py, bench_hostile.py) and of their tests: run the CLI in a
fresh grandchild process, optionally under an address-space limit, and measure its seconds and its own peak RSS.

A child spawned straight from a big process (a test run) would report that process's peak, since Linux keeps the
high-water mark across fork+exec; the small launcher's own fork starts the count afresh (``os.wait4``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

#: a refusal that has not come after this long is a hang (generous: the machine may be busy)
HANG_TIMEOUT = 120

_LAUNCHER = """
import os, resource, sys
out, limit = sys.argv[1], int(sys.argv[2])
pid = os.fork()
if pid == 0:
    if limit > 0:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    os.execv(sys.executable, [sys.executable, "-c", "from fsa2rnn.cli.main import main; main()", *sys.argv[3:]])
_, status, usage = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write(str(usage.ru_maxrss))
sys.exit(os.waitstatus_to_exitcode(status))
"""


@dataclass(frozen=True)
class Case:
    name: str
    args: tuple[str, ...]  #: CLI arguments; "{dir}" is replaced by the folder of the generated fixtures
    expect: str  #: a phrase the one-line error must contain
    absent: tuple[str, ...] = ()  #: paths under "{dir}" that must not exist afterwards


def run_cli(
    args: list[str], *, address_space: int = 0, timeout: float = HANG_TIMEOUT, env: dict[str, str] | None = None
) -> tuple[int, str, float, float]:
    """``fsa2rnn ARGS`` in a fresh process (under RLIMIT_AS = ``address_space`` bytes when > 0): (exit code,
    stderr, seconds, peak RSS in MiB of that process). A run past ``timeout`` is killed and raises TimeoutError."""
    with tempfile.TemporaryFile("w+") as err, tempfile.TemporaryDirectory() as d:
        rss_file = Path(d) / "maxrss"
        cmd = [sys.executable, "-c", _LAUNCHER, str(rss_file), str(address_space), *args]
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True, env={**os.environ, **(env or {})}
        )
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait()
            raise TimeoutError(f"fsa2rnn {' '.join(args)[:80]} did not finish in {timeout} s") from None
        seconds = time.perf_counter() - start
        err.seek(0)
        return rc, err.read(), seconds, int(rss_file.read_text()) / 1024


def report(
    cases: Iterable[Case], folder: Path, run, *, target_seconds: float, target_mib: float | None = None, width: int = 40
) -> bool:
    """Run every case (``run(args)`` → run_cli's tuple) with "{dir}" = ``folder`` and print one line each: seconds
    and peak beside the targets and the verdict. True when every case was refused in one line within the targets."""
    ok = True
    print(f"{'input':<{width}} {'seconds':>8} {'target':>7} {'peak MiB':>9}  result")
    for case in cases:
        rc, err, seconds, peak = run([a.replace("{dir}", str(folder)) for a in case.args])
        refused = rc == 2 and len(err.strip().splitlines()) == 1 and case.expect.replace("{dir}", str(folder)) in err
        good = refused and seconds <= target_seconds and (target_mib is None or peak < target_mib)
        ok &= good
        verdict = "ok" if good else ("SLOW/BIG" if refused else f"NOT REFUSED (exit {rc}): {err.strip()[:100]}")
        print(f"{case.name:<{width}} {seconds:8.2f} {target_seconds:7.1f} {peak:9.0f}  {verdict}")
    return ok
