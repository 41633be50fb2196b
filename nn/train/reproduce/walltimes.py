"""The measured wall time of one run of each table cell, per table and scale: ``walltimes.json`` beside this module
(tracked; ``FSA2RNN_WALLTIMES`` names another file), read for the estimate ``fsa2rnn reproduce`` prints before it
trains (:func:`plan_line`) and updated from the runs it finishes (:func:`record`).

The file: ``{table: {scale: {cell: {"seconds": mean seconds per run, "runs": n}}}}``, ``cell`` the run directory's
name without its seed (``Z16__nfsm__anchored``; a learning-rate grid's rate included)."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any

from ....fsa.io import atomic_write_text
from .base import Job

#: the environment variable naming another wall-time file (the tests' own)
ENV = "FSA2RNN_WALLTIMES"
DEFAULT = Path(__file__).with_name("walltimes.json")


def path() -> Path:
    """The wall-time file in use."""
    return Path(os.environ.get(ENV) or DEFAULT)


def load() -> dict[str, Any]:
    """The wall times ({} where the file is missing or unreadable: every estimate is then "unknown")."""
    try:
        data = json.loads(path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def cell_key(job: Job) -> str:
    """A job's cell in the file: its run directory's name without the seed."""
    return job.name.rsplit("__", 1)[0]


def estimate(table: str, scale: str, jobs: list[Job]) -> tuple[float, int]:
    """The estimated seconds of ``jobs`` from the measured cells, and how many jobs have no measurement."""
    cells = load().get(table, {}).get(scale, {})
    seconds, unknown = 0.0, 0
    for job in jobs:
        entry = cells.get(cell_key(job))
        if isinstance(entry, dict) and isinstance(entry.get("seconds"), (int, float)):
            seconds += float(entry["seconds"])
        else:
            unknown += 1
    return seconds, unknown


def duration(seconds: float) -> str:
    """``42 s``, ``12 min``, ``3 h 05 min``."""
    if seconds < 90:
        return f"{seconds:.0f} s"
    minutes = round(seconds / 60)
    return f"{minutes} min" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def plan_line(table: str, scale: str, todo: list[Job], total: int) -> str:
    """The line printed before training: how many runs, and their estimated time."""
    head = f"{table} --scale {scale}: {len(todo)} run{'s' if len(todo) != 1 else ''} to do"
    if total != len(todo):
        head += f" ({total - len(todo)} of {total} finished already)"
    if not todo:
        return head
    seconds, unknown = estimate(table, scale, todo)
    if unknown == len(todo):
        return f"{head}; estimated time unknown (no wall time measured for these cells in {path().name})"
    known = f"estimated {duration(seconds)} on one process"
    if unknown:
        known += f" for {len(todo) - unknown} of them, {unknown} unknown (not measured)"
    return f"{head}; {known} (per-run wall times measured here, {path().name})"


def record(table: str, scale: str, done: list[tuple[Job, float]]) -> None:
    """Fold the wall times of runs just finished into the file (running means per cell). A file that cannot be
    written is left as it is: the estimate is a convenience."""
    if not done:
        return
    data = load()
    cells = data.setdefault(table, {}).setdefault(scale, {})
    for job, seconds in done:
        entry = cells.get(cell_key(job))
        n, mean = (int(entry["runs"]), float(entry["seconds"])) if isinstance(entry, dict) else (0, 0.0)
        cells[cell_key(job)] = {"seconds": round((mean * n + seconds) / (n + 1), 1), "runs": n + 1}
    text = json.dumps(data, indent=1, sort_keys=True) + "\n"
    with contextlib.suppress(OSError):
        atomic_write_text(path(), text)
