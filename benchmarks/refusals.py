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
from dataclasses import dataclass, replace
from pathlib import Path

#: a refusal that has not come after this long is a hang (generous: the machine may be busy)
HANG_TIMEOUT = 120

_LAUNCHER = """
import os, resource, signal, sys
out, limit, fsize, stdin, stdout = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
pid = os.fork()
if pid == 0:
    if limit > 0:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    if fsize > 0:  # a full disk: writes past fsize bytes fail (EFBIG) instead of killing the process
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    for fd, path, flags in ((0, stdin, os.O_RDONLY), (1, stdout, os.O_WRONLY)):
        if path == "closed":
            os.close(fd)
        elif path:
            os.dup2(os.open(path, flags), fd)
    os.execv(sys.executable, [sys.executable, "-c", "from fsa2rnn.cli.main import main; main()", *sys.argv[6:]])
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
    code: int = 2  #: the exit code (1: the output could not be written)
    mib: float = 500  #: the peak memory the refusal stays below
    seconds: float = 5.0  #: the time the benchmark compares with (printed, not asserted)
    stdin: str = ""  #: a path read as stdin ("closed": no stdin at all; "": /dev/null)
    stdout: str = ""  #: a path written as stdout ("closed": none; "": /dev/null)
    fsize: int = 0  #: > 0: files may grow to this many bytes (a full disk)
    env: tuple[tuple[str, str], ...] = ()  #: environment variables ("{dir}" replaced)
    kept: tuple[tuple[str, str], ...] = ()  #: (path under "{dir}", the text it must still hold)

    def resolved(self, folder: Path) -> Case:
        """The case with "{dir}" replaced by ``folder``."""
        sub = lambda v: v.replace("{dir}", str(folder))  # noqa: E731
        return replace(self, args=tuple(map(sub, self.args)), expect=sub(self.expect), stdin=sub(self.stdin),
                       stdout=sub(self.stdout), env=tuple((k, sub(v)) for k, v in self.env))  # fmt: skip


def run_cli(
    args: list[str],
    *,
    address_space: int = 0,
    timeout: float = HANG_TIMEOUT,
    env: dict[str, str] | None = None,
    stdin: str = "",
    stdout: str = "",
    fsize: int = 0,
) -> tuple[int, str, float, float]:
    """``fsa2rnn ARGS`` in a fresh process (under RLIMIT_AS = ``address_space`` bytes when > 0, RLIMIT_FSIZE =
    ``fsize`` when > 0; stdin and stdout from the given paths, or closed): (exit code, stderr, seconds, peak RSS in
    MiB of that process). A run past ``timeout`` is killed and raises TimeoutError."""
    with tempfile.TemporaryFile("w+") as err, tempfile.TemporaryDirectory() as d:
        rss_file = Path(d) / "maxrss"
        cmd = [sys.executable, "-c", _LAUNCHER, str(rss_file), str(address_space), str(fsize), stdin, stdout, *args]
        start = time.perf_counter()
        proc = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=err,
            start_new_session=True,
            env={**os.environ, **(env or {})},
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
    """Run every case (``run(case)`` → run_cli's tuple, the case resolved for ``folder``) and print one line each:
    seconds and peak beside the targets (the case's own where it states them) and the verdict. True when every case
    was refused in one line within the targets."""
    ok = True
    print(f"{'input':<{width}} {'seconds':>8} {'target':>7} {'peak MiB':>9} {'target':>7}  result")
    for case in cases:
        case = case.resolved(folder)
        rc, err, seconds, peak = run(case)
        secs, mib = max(target_seconds, case.seconds), max(target_mib or 0, case.mib)
        refused = rc == case.code and len(err.strip().splitlines()) == 1 and case.expect in err
        good = refused and seconds <= secs and (target_mib is None or peak < mib)
        ok &= good
        verdict = "ok" if good else ("SLOW/BIG" if refused else f"NOT REFUSED (exit {rc}): {err.strip()[:100]}")
        print(f"{case.name:<{width}} {seconds:8.2f} {secs:7.1f} {peak:9.0f} {mib:7.0f}  {verdict}")
    return ok
