"""The parts every launcher shares (fsa2rnn.nn.train.launch): the checked options, a task and its outcome, the
workers' common body, the progress line."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ....fsa.errors import FsaError, Interrupted, MissingDependencyError, SpecError
from ....fsa.progress import bar, quiet, set_quiet

LAUNCHERS = ("local", "slurm", "ray")
#: the extra that installs each launcher's engine (pyproject.toml)
EXTRAS = {"slurm": ("submitit", "slurm"), "ray": ("ray", "ray")}
#: --launcher-args keys per launcher → the type each value must have
ARG_TYPES: dict[str, dict[str, tuple[type, ...]]] = {
    "local": {"threads_per_run": (int,)},
    "slurm": {
        "partition": (str,),
        "time": (int,),
        "cpus_per_run": (int,),
        "gpus_per_run": (int,),
        "mem_gb": (int, float),
        "array_parallelism": (int,),
        "folder": (str,),
        "cluster": (str,),
    },
    "ray": {"address": (str,), "cpus_per_run": (int, float), "gpus_per_run": (int, float), "num_cpus": (int,)},
}
#: --launcher-args of --launcher slurm passed to submitit as they are (its ``slurm_*`` parameters)
SLURM_PASSTHROUGH = "slurm_"


@dataclass(frozen=True)
class Launcher:
    """Where the runs go: ``kind`` (local, slurm, ray), ``jobs`` (runs at once; None: the launcher's default) and
    the checked ``args`` of ``--launcher-args``."""

    kind: str = "local"
    jobs: int | None = None
    args: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def device(self) -> str | None:
        """The device of every run: ``cuda`` when ``--launcher-args`` grants each run a GPU (``gpus_per_run``),
        else None (the run's own setting: the CPU)."""
        return "cuda" if self.args.get("gpus_per_run", 0) >= 1 else None

    @property
    def sequential(self) -> bool:
        """Runs in this process, one after another (``--jobs 1`` locally: today's behaviour)."""
        return self.kind == "local" and (self.jobs or 1) == 1


@dataclass(frozen=True)
class Task:
    """One run: ``fn(*args)`` (``fn`` a module-level function or a functools.partial of one, so that it pickles by
    reference); ``key`` names it in the progress line and in a failure (its run directory)."""

    key: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]


@dataclass
class Outcome:
    """What became of a task: ``value`` (``fn``'s result) or ``error`` (the first line of its error; the whole
    traceback in ``detail``), and the run's wall time in its worker."""

    key: str
    value: Any = None
    error: str | None = None
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None


def parse_launcher(kind: str | None, jobs: int | None, args_text: str | None) -> Launcher:
    """``--launcher``, ``--jobs`` and ``--launcher-args`` checked (SpecError naming the bad one; a launcher whose
    engine is not installed: MissingDependencyError with the ``pip install`` line), before any run starts."""
    kind = kind or "local"
    if kind not in LAUNCHERS:
        raise SpecError(f"--launcher must be one of {', '.join(LAUNCHERS)}, got {kind!r}")
    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise SpecError(f"--jobs must be an integer >= 1, got {jobs!r}")
    args = _parse_args(kind, args_text)
    if kind in EXTRAS:
        require(kind)
    return Launcher(kind, jobs, args)


def _parse_args(kind: str, text: str | None) -> dict[str, Any]:
    if text is None:
        return {}
    try:
        args = json.loads(text)
    except ValueError as exc:
        raise SpecError(f'--launcher-args must be a JSON object, e.g. \'{{"partition": "gpu"}}\': {exc}') from None
    if not isinstance(args, dict):
        raise SpecError(f"--launcher-args must be a JSON object, got {type(args).__name__}")
    allowed = ARG_TYPES[kind]
    for key, value in args.items():
        if kind == "slurm" and key.startswith(SLURM_PASSTHROUGH):
            continue
        if key not in allowed:
            more = " or submitit's slurm_* parameters" if kind == "slurm" else ""
            raise SpecError(f"--launcher-args: unknown key {key!r} for --launcher {kind} (known: "
                            f"{', '.join(allowed)}{more})")  # fmt: skip
        types = allowed[key]
        if isinstance(value, bool) or not isinstance(value, types):
            want = " or ".join(t.__name__ for t in types)
            raise SpecError(f"--launcher-args: {key} must be {want}, got {json.dumps(value)}")
        if isinstance(value, (int, float)) and value < (0 if key.startswith("gpus") else 1):
            raise SpecError(f"--launcher-args: {key} must be >= {0 if key.startswith('gpus') else 1}, got {value}")
    return args


def require(kind: str) -> Any:
    """The engine module of launcher ``kind`` (submitit, ray), or MissingDependencyError with the extra to
    install."""
    module, extra = EXTRAS[kind]
    if importlib.util.find_spec(module) is None:
        raise MissingDependencyError(f"--launcher {kind} needs {module}, which is not installed: "
                                     f"pip install 'fsa2rnn[{extra}]'")  # fmt: skip
    return importlib.import_module(module)


def cores() -> int:
    """The cores this process may run on (its CPU affinity: what SLURM or a container grants)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def threads_per_run(jobs: int, given: int | None = None) -> int:
    """Torch threads of each of ``jobs`` runs sharing this machine: ``given`` (``threads_per_run`` of
    ``--launcher-args``), else the cores divided among the runs, ``max(1, cores // jobs)``, capped by an explicit
    ``OMP_NUM_THREADS``."""
    if given:
        return given
    n = max(1, cores() // max(1, jobs))
    env = os.environ.get("OMP_NUM_THREADS", "")
    return min(n, int(env)) if env.isdigit() and int(env) > 0 else n


def worker_call(
    fn: Callable[..., Any], args: tuple[Any, ...], threads: int | None, own_process: bool = True
) -> dict[str, Any]:
    """The body of every worker: set torch's threads (``threads``; None leaves them), turn progress bars off (in a
    worker process of its own: ``own_process``), call ``fn(*args)``. Returns ``{"value", "seconds"}`` or, for a run
    that raised, ``{"error", "detail", "seconds"}`` (never raises an ordinary exception, so that an exception that
    does not pickle cannot break the launcher)."""
    if threads:
        os.environ["OMP_NUM_THREADS"] = str(threads)
        import torch

        torch.set_num_threads(threads)
    if own_process:
        set_quiet(True)
    t0 = time.perf_counter()
    try:
        value = fn(*args)
    except Interrupted:
        raise
    except Exception as exc:  # a failed run is reported, the others go on
        return {"error": first_line(exc), "detail": traceback.format_exc(), "seconds": time.perf_counter() - t0}
    return {"value": value, "seconds": time.perf_counter() - t0}


def first_line(exc: BaseException) -> str:
    """The first line of an error as the report shows it (an FsaError's message alone, else ``Type: message``)."""
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    if isinstance(exc, FsaError):
        return text or type(exc).__name__
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def outcome(key: str, reply: dict[str, Any]) -> Outcome:
    """An :class:`Outcome` from :func:`worker_call`'s reply."""
    return Outcome(key, reply.get("value"), reply.get("error"), reply.get("detail", ""), reply.get("seconds", 0.0))


class Board:
    """The one progress line of a batch of runs: done/total, running, failed, and the time left — the mean measured
    run time × the runs left ÷ the runs at once. A failed run is written above the line as it happens:
    ``failed: KEY: first line of its error``."""

    def __init__(
        self, desc: str, total: int, done: int, seconds: Sequence[float], show: bool, launcher: Launcher
    ) -> None:
        self.total, self.failed, self.running = total, 0, set[str]()
        self.times = [float(s) for s in seconds if s]
        self.width = launcher.jobs or 1
        self.show = show and not quiet()
        fmt = "{desc}: {n}/{total} runs done{postfix} [{elapsed}]"
        self.bar = bar(total, desc, unit="run", initial=done, disable=not self.show, bar_format=fmt)
        self._refresh()

    def started(self, key: str) -> None:
        self.running.add(key)
        self._refresh()

    def set_running(self, keys: set[str]) -> None:
        if keys != self.running:
            self.running = set(keys)
            self._refresh()

    def finished(self, result: Outcome) -> None:
        self.running.discard(result.key)
        if result.ok:
            self.times.append(result.seconds)
            self._refresh(draw=False, finishing=1)
            self.bar.update(1)  # draws the line (at most every LOG_INTERVAL seconds in a log)
            return
        self.failed += 1
        line = f"failed: {result.key}: {result.error}"  # under --quiet too: a failure is not progress
        if self.show:
            self.bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr)
        self._refresh()

    def eta(self, finishing: int = 0) -> float | None:
        """Seconds left: the mean run time × the runs left ÷ the runs at once (None before any run time, or when
        none is left); ``finishing``: runs done but not yet counted on the line."""
        left = self.total - self.bar.n - self.failed - finishing
        if not self.times or left <= 0:
            return None
        return sum(self.times) / len(self.times) * left / max(1, min(self.width, max(1, left)))

    def _refresh(self, draw: bool = True, finishing: int = 0) -> None:
        """Set the counts of the line; redraw it on a terminal (in a log, the next update prints it)."""
        eta = self.eta(finishing)
        left = "" if eta is None else f", about {_duration(eta)} left"
        text = f"{len(self.running)} running, {self.failed} failed{left}"
        self.bar.set_postfix_str(text, refresh=draw and self.show and sys.stderr.isatty())

    def close(self) -> None:
        self.bar.close()


def _duration(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"
