"""Run a reproduction: every job as an ordinary training run under DIR/runs/, then DIR/table.json, DIR/table.md and
DIR/plot.png. Resumable: a job whose run holds DIR/runs/NAME/reproduce.json is read back, an interrupted one resumed
from its checkpoint; ``--table-only`` writes the table of the finished runs and trains nothing."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from ....fsa.errors import SpecError
from ....fsa.io import atomic_write_text, output_directory
from ....fsa.progress import bar as progress_bar
from ....fsa.progress import quiet
from ..runfiles import EVAL
from .base import Job, Reproduction

RECORD = "reproduce.json"
TABLE_FORMAT = "fsa2rnn.reproduction/1"


def prepare(rep: Reproduction, scale: str, out: Path, jobs: list[Job], *, table_only: bool = False) -> None:
    """Every check before any run starts: the output directory and every job's configuration (``table_only``: that
    DIR holds runs to read back)."""
    from ..config import TrainConfig
    from ..trainer import Prepared

    output_directory(out)
    if table_only:
        if not (out / "runs").is_dir():
            raise SpecError(f"--table-only: {str(out)!r} holds no runs (DIR/runs/ is missing)")
        return
    for job in jobs:
        if rep.unavailable(job) is None:
            Prepared(TrainConfig(**job.config, seed=job.seed, progress=False), out / "runs" / job.name, resume=True,
                     plugins=_named(job))  # fmt: skip


def run_job(rep: Reproduction, job: Job, out: Path, *, train_missing: bool = True) -> dict[str, Any]:
    """The job's record (figures of :meth:`Reproduction.result`, wall time); trains it unless it is finished (or,
    with ``train_missing`` False, records it as not run)."""
    from ..config import TrainConfig
    from ..trainer import train

    run = out / "runs" / job.name
    if (run / RECORD).is_file():
        return json.loads((run / RECORD).read_text())
    why = rep.unavailable(job)
    if why is None and not train_missing:
        why = "not finished in DIR (--table-only trains nothing)"
    if why is not None:
        return {"job": _job_dict(job), "status": "not run", "reason": why}
    t0 = time.perf_counter()
    summary = train(TrainConfig(**job.config, seed=job.seed, progress=False), run, resume=True, plugins=_named(job))
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
    rep: Reproduction, scale: str, jobs: list[Job], out: Path, *, progress: bool = True, table_only: bool = False
) -> dict[str, Any]:
    """Run (or read back) every job and write the table; the table's JSON object. ``progress``: a bar over the
    runs on stderr (fsa2rnn.fsa.progress: also off under ``--quiet``). ``table_only``: train nothing, the table of
    the runs already finished in ``out`` (the others "not run")."""
    out.mkdir(parents=True, exist_ok=True)
    records = []
    show = progress and not quiet() and not table_only
    with progress_bar(len(jobs), rep.name, unit="run", disable=not show) as bar:
        for job in jobs:
            bar.set_postfix_str(job.name, refresh=True)
            records.append(run_job(rep, job, out, train_missing=not table_only))
            bar.update(1)
    table = build_table(rep, scale, jobs, records)
    atomic_write_text(out / "table.json", json.dumps(table, indent=1))
    atomic_write_text(out / "table.md", rep.markdown(table))
    rep.plot(table, out / "plot.png")
    return table


def _named(job: Job) -> tuple[str, ...]:
    """A plug-in job's import path: named on the command line (``--models``), so its runs may import it."""
    return (job.model,) if ":" in job.model else ()


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
        "notes": rep.notes(scale),
        "cells": rows,
    }
