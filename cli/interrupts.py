"""The one line of ``train`` or ``reproduce`` stopped by SIGINT or SIGTERM (fsa2rnn.fsa.signals): the signal, the
moment it came, what was kept on disk and the command that goes on; the exit status 128 + the signal's number (130
for SIGINT, 143 for SIGTERM). What is kept is read from the disk, so the line is right whatever the moment."""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path
from typing import Any, NoReturn

import click

from ..fsa import signals
from ..fsa.errors import Interrupted
from ..nn.train.reproduce.runner import RECORD
from ..nn.train.runfiles import MODEL, has_checkpoint
from .errors import printable

#: how each moment of fsa2rnn.fsa.signals.MOMENTS reads in the line
_DURING = {
    "imports": "the imports",
    "setup": "setup",
    "step": "training",
    "evaluation": "the evaluation",
    "table": "the table's writing",
}


def stop(exc: BaseException, what: str, go_on: str, status: int | None = None) -> NoReturn:
    """Print ``interrupted (SIG) during MOMENT: WHAT; GO_ON`` on stderr and exit with ``status`` (default 128 + the
    signal)."""
    during = _DURING.get(signals.moment() or "", "start-up")
    if isinstance(exc, Interrupted):
        during = "training" if during == "start-up" else during
    click.echo(printable(f"interrupted ({signals.signal_name(exc)}) during {during}: {what}; {go_on}"), err=True)
    sys.exit(signals.exit_status(exc) if status is None else status)


def train_stopped(exc: BaseException, plan: Any, params: dict[str, Any], status: int | None = None) -> NoReturn:
    """``fsa2rnn train`` stopped (``plan``: its Plan, None when it was stopped before its checks were done); a
    torchrun worker exits with ``status`` 0 (its launcher exits with the signal's)."""
    runs = [path for _, path in plan.configs] if plan is not None else []
    kept = [r for r in runs if has_checkpoint(r)]
    parts = [str(exc)] if isinstance(exc, Interrupted) else []
    if not (isinstance(exc, Interrupted) and len(runs) == 1):
        if not kept:
            parts.append("nothing was kept")
        elif len(runs) == 1:
            parts.append(f"the checkpoint {str(kept[0] / MODEL)!r} is kept")
        else:
            parts.append(f"{len(kept)} of {len(runs)} runs kept under {str(plan.out)!r}")
    go_on = f"continue with: {plan.resume_command(params)}" if kept else "run the same command to start again"
    stop(exc, "; ".join(parts), go_on, status)


def reproduce_stopped(exc: BaseException, folder: Path, jobs: list[Any], command: str, since: float) -> NoReturn:
    """``fsa2rnn reproduce`` stopped: the runs finished, the table if it was written (at or after ``since``, a
    time.time()), and the same command, which goes on from there."""
    done = sum((folder / "runs" / job.name / RECORD).is_file() for job in jobs)
    parts = [str(exc)] if isinstance(exc, Interrupted) else []
    parts.append(f"{done} of {len(jobs)} runs finished, kept under {str(folder / 'runs')!r}" if done else
                 "no run had finished")  # fmt: skip
    table = folder / "table.md"
    if table.is_file() and os.stat(table).st_mtime >= since - 1:
        parts.append(f"the table is written ({str(table)!r})")
        stop(exc, "; ".join(parts), "nothing is left to do")
    stop(exc, "; ".join(parts), f"continue with: {command}")


def reproduce_command_line(name: str, scale: str, options: dict[str, str | None], out: str, table_only: bool) -> str:
    """The ``fsa2rnn reproduce`` command of these choices (what goes on after an interruption)."""
    words = ["fsa2rnn", "reproduce", name, "--scale", scale]
    for flag, value in options.items():
        if value is not None:
            words += [flag, value]
    words += ["--out", out] + (["--table-only"] if table_only else [])
    return shlex.join(words)
