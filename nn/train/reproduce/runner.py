"""Run a reproduction: every job as an ordinary training run under DIR/runs/, then DIR/table.json, DIR/table.md and
DIR/plot.png. Resumable: a job whose run holds DIR/runs/NAME/reproduce.json is read back, an interrupted one resumed
from its checkpoint; ``--table-only`` writes the table of the finished runs and trains nothing.

Every record already in DIR is read and checked before anything is trained or written (:func:`read_record`: a
damaged one is refused in one line naming its file), the table and its Markdown are made in memory before either is
written, and SIGINT/SIGTERM are held off while the three files are written (fsa2rnn.fsa.signals.deferred), so that
DIR never holds a table.json and a table.md that disagree.

The runs still to train go to a launcher (nn/train/launch: this process, a local pool, SLURM or Ray); one that fails
is recorded as failed and retried by the next invocation."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

from .... import __version__
from ....fsa import signals
from ....fsa.errors import SpecError
from ....fsa.io import atomic_write_text, output_directory
from ....fsa.progress import quiet
from ..launch import Launcher, Task, run_tasks
from ..runfiles import EVAL, read_json
from . import walltimes
from .base import Job, Reproduction, train_command

RECORD = "reproduce.json"
TABLE_FORMAT = "fsa2rnn.reproduction/1"
#: DIR/failed/NAME.txt: the traceback of a run that failed (removed when it finishes)
FAILED = "failed"


def prepare(rep: Reproduction, scale: str, out: Path, jobs: list[Job], *, table_only: bool = False) -> None:
    """Every check before any run starts: the output directory and every job's configuration (``table_only``: that
    DIR holds runs to read back). The records are read before torch is imported."""
    output_directory(out)
    signals.at("imports")
    if table_only and not (out / "runs").is_dir():
        raise SpecError(f"--table-only: {str(out)!r} holds no runs (DIR/runs/ is missing)")
    for job in jobs:  # every record, before anything is trained or rewritten
        if (out / "runs" / job.name / RECORD).is_file():
            read_record(rep, scale, job, out / "runs" / job.name / RECORD)
    if table_only:
        return
    from ..config import TrainConfig
    from ..trainer import Prepared

    for job in jobs:
        if rep.unavailable(job) is None:
            Prepared(TrainConfig(**job.config, seed=job.seed, progress=False), out / "runs" / job.name, resume=True,
                     plugins=_named(job))  # fmt: skip


def read_record(rep: Reproduction, scale: str | None, job: Job, path: Path) -> dict[str, Any]:
    """The record of a finished job read back from ``path``, checked: a JSON object of this job, done, whose figures
    make a table cell and its Markdown (at ``scale``; None: any of the table's, whose notes do not depend on the
    record); SpecError naming the file otherwise (damaged, not UTF-8, another job's)."""
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("job"), dict) or data.get("status") != "done":
        problem = "not the record of a finished run"
    elif data["job"] != _job_dict(job):
        problem = f"the record of another run ({', '.join(f'{k} {v}' for k, v in data['job'].items())})"
    else:
        try:
            rep.markdown(build_table(rep, scale or rep.scales[-1], [job], [data]))
            problem = None
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            problem = "its figures are missing or malformed"
    if problem:
        raise SpecError(f"{str(path)!r} is damaged: {problem}; remove it to run the job again")
    return data


def finished(
    rep: Reproduction, job: Job, out: Path, *, train_missing: bool = True, scale: str | None = None
) -> dict[str, Any] | None:
    """The record of a job that needs no training — finished (its reproduce.json read back and checked),
    unavailable in this build, or not run under ``--table-only`` — or None: it must train."""
    run = out / "runs" / job.name
    if (run / RECORD).is_file():
        return read_record(rep, scale, job, run / RECORD)
    why = rep.unavailable(job)
    if why is None and not train_missing:
        why = "not finished in DIR (--table-only trains nothing)"
    if why is not None:
        return {"job": _job_dict(job), "status": "not run", "reason": why, **_lr(job)}
    return None


def run_job(
    rep: Reproduction,
    job: Job,
    out: Path,
    *,
    train_missing: bool = True,
    scale: str | None = None,
    device: str | None = None,
) -> dict[str, Any]:
    """The job's record (figures of :meth:`Reproduction.result`, wall time); trains it unless it is finished (or,
    with ``train_missing`` False, records it as not run). Any launcher's worker calls this (nn/train/launch);
    ``device``: where the run trains, for a launcher that grants each run a GPU (default: the job's, the CPU)."""
    from ..config import TrainConfig
    from ..trainer import train

    known = finished(rep, job, out, train_missing=train_missing, scale=scale)
    if known is not None:
        return known
    run = out / "runs" / job.name
    t0 = time.perf_counter()
    config = {**job.config, **({"device": device} if device else {})}
    summary = train(TrainConfig(**config, seed=job.seed, progress=False), run, resume=True, plugins=_named(job))
    seconds = time.perf_counter() - t0
    evaluation = json.loads((run / EVAL).read_text())
    record = {
        "job": _job_dict(job),
        "status": "done",
        "run": str(Path("runs") / job.name),
        "seconds": round(seconds, 1),
        **rep.result(job, summary, evaluation),
    }
    atomic_write_text(run / RECORD, json.dumps(record, indent=1))
    return record


def reproduce(
    rep: Reproduction,
    scale: str,
    jobs: list[Job],
    out: Path,
    *,
    progress: bool = True,
    table_only: bool = False,
    launcher: Launcher | None = None,
) -> dict[str, Any]:
    """Run (or read back) every job and write the table; the table's JSON object. ``progress``: first one line with
    the number of runs to train and their estimated time (walltimes.py), then one line over the runs, on stderr
    (fsa2rnn.fsa.progress: both off under ``--quiet``); the wall times of the runs finished here go to
    walltimes.json. ``table_only``: train nothing, the table of the runs already finished in ``out`` (the others "not
    run"). ``launcher``: where the runs train (nn/train/launch;
    default: this process, in turn). A run that fails is reported (``failed: DIR/runs/NAME: …``, its traceback in
    DIR/failed/NAME.txt) and recorded with status "failed"; the others go on, and the next invocation retries it."""
    out.mkdir(parents=True, exist_ok=True)
    records = [finished(rep, job, out, train_missing=not table_only, scale=scale) for job in jobs]
    todo = [i for i, r in enumerate(records) if r is None]
    launcher = launcher or Launcher()
    work = partial(run_job, scale=scale, device=launcher.device)
    tasks = [Task(str(out / "runs" / jobs[i].name), work, (rep, jobs[i], out)) for i in todo]
    times = [r.get("seconds", 0.0) for r in records if r is not None and r.get("status") == "done"]
    if progress and not table_only and not quiet():
        print(walltimes.plan_line(rep.name, scale, [jobs[i] for i in todo], len(jobs)), file=sys.stderr, flush=True)
    outcomes = run_tasks(launcher, tasks, desc=rep.name, done=len(jobs) - len(todo), total=len(jobs),
                         seconds=times, progress=progress and not table_only, folder=out)  # fmt: skip
    measured = []
    for i, result in zip(todo, outcomes):
        trace = out / FAILED / f"{jobs[i].name}.txt"
        if result.ok:
            records[i] = result.value
            trace.unlink(missing_ok=True)
            if result.value.get("status") == "done" and result.value.get("seconds"):
                measured.append((jobs[i], float(result.value["seconds"])))
        else:
            records[i] = {"job": _job_dict(jobs[i]), "status": "failed", "run": str(Path("runs") / jobs[i].name),
                          "reason": result.error, **_lr(jobs[i])}  # fmt: skip
            trace.parent.mkdir(exist_ok=True)
            atomic_write_text(trace, result.detail or result.error or "")
    walltimes.record(rep.name, scale, measured)
    table = build_table(rep, scale, jobs, [r for r in records if r is not None])
    text, markdown = json.dumps(table, indent=1), rep.markdown(table)
    with signals.deferred():  # the three files together, or (killed) the old ones
        atomic_write_text(out / "table.json", text)
        signals.at("table")
        atomic_write_text(out / "table.md", markdown)
        rep.plot(table, out / "plot.png")
    return table


def failed_runs(table: dict[str, Any]) -> list[dict[str, Any]]:
    """The records of the table's runs that failed (status "failed")."""
    return [r for c in table["cells"] for r in c["seeds"] if r.get("status") == "failed"]


def _named(job: Job) -> tuple[str, ...]:
    """A plug-in job's import path: named on the command line (``--models``), so its runs may import it."""
    return (job.model,) if ":" in job.model else ()


def _lr(job: Job) -> dict[str, Any]:
    """A grid job's rate, kept in the record of a run that did not finish (the table places it by its rate)."""
    return {"lr": job.lr} if hasattr(job, "lr") else {}


@functools.cache
def version() -> dict[str, Any]:
    """The fsa2rnn that made a table: its version and, where the package is a git checkout, the commit (with
    ``dirty`` where the checkout has changes)."""
    info: dict[str, Any] = {"version": __version__, "commit": None}  # (cached: one look per process)
    root = Path(__file__).resolve().parents[3]
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              timeout=10, check=True).stdout.strip()  # fmt: skip
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=10, check=True).stdout  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return info
    return {**info, "commit": head or None, "dirty": bool(status.strip())}


def _cell_preset(jobs: list[Job]) -> dict[str, Any] | None:
    """The preset a cell's runs come from, its scale, the train flags beside them and the command line of its first
    seed (a learning-rate grid's rates apart, as ``lr_grid``: one run per rate)."""
    job = jobs[0]
    if not job.preset:
        return None
    rates = list(dict.fromkeys(j.flags["lr"] for j in jobs if "lr" in j.flags))
    flags = {k: v for k, v in job.flags.items() if k != "lr" or len(rates) < 2}
    out = {"name": job.preset, "scale": job.config.get("scale"), "flags": flags,
           "command": train_command(job.preset, job.config.get("scale"), flags, job.seed)}  # fmt: skip
    return {**out, "lr_grid": rates} if len(rates) > 1 else out


def _job_dict(job: Job) -> dict[str, Any]:
    return {"task": job.task, "model": job.model, "arm": job.arm, "seed": job.seed}


def build_table(rep: Reproduction, scale: str, jobs: list[Job], records: list[dict[str, Any]]) -> dict[str, Any]:
    cells: dict[tuple[str, str, str], list[tuple[Job, dict[str, Any]]]] = {}
    for job, rec in zip(jobs, records):
        cells.setdefault(job.cell, []).append((job, rec))
    rows = []
    for (task, model, arm), items in cells.items():
        done = [r for _, r in items if r.get("status") == "done"]
        agg = rep.cell(items[0][0], done) if done else {"aggregate": "not run"}
        rows.append(
            {
                "task": task,
                "model": model,
                "arm": arm,
                **agg,
                "paper": rep.paper_cell(task, model, arm),
                "preset": _cell_preset([j for j, _ in items]),
                "seeds": [r for _, r in items],
                "seconds": round(sum(r.get("seconds", 0.0) for r in done), 1),
            }
        )
    return {
        "format": TABLE_FORMAT,
        "reproduction": rep.name,
        "title": rep.title,
        "source": rep.source,
        "scale": scale,
        "fsa2rnn": version(),
        "notes": rep.notes(scale),
        "cells": rows,
    }
