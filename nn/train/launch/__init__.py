"""Independent runs on more than one process or machine: ``--jobs N`` and ``--launcher local|slurm|ray`` with
``--launcher-args JSON`` (docs/cluster.md).

A :class:`Task` is one call ``fn(*args)`` of a module-level function, named by its run directory (``key``): for
``fsa2rnn reproduce``, :func:`fsa2rnn.nn.train.reproduce.runner.run_job` of one (task, model, arm, seed) job. The
function runs in a worker — this process (``--jobs 1``, today's behaviour), a process of a local pool (pool.py), a
SLURM job through submitit (slurm.py) or a Ray task (raytasks.py) — and writes its own run directory, so a table
can be finished by any mix of launchers. :func:`run_tasks` returns one :class:`Outcome` per task, in the tasks'
order: the value, or the first line of the error of a run that failed (the others go on; the caller reruns only
what failed or never ran). One progress line counts the runs done, running and failed, with the time left estimated
from the measured run times.

Determinism: every worker calls :func:`worker_call`, which sets torch's threads for the run and turns progress bars
off; the run itself draws all its randomness from its own seed (trainer.py: ``stream_seed(seed, stream, step)``),
never from state a process carries, so its figures do not depend on the process, the order, or the launcher.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .base import (
    LAUNCHERS,
    Board,
    Launcher,
    Outcome,
    Task,
    outcome,
    parse_launcher,
    threads_per_run,
    worker_call,
)
from .pool import run_pool
from .raytasks import run_ray
from .slurm import run_slurm


def run_tasks(
    launcher: Launcher,
    tasks: Sequence[Task],
    *,
    desc: str,
    done: int = 0,
    total: int | None = None,
    seconds: Sequence[float] = (),
    progress: bool = True,
    folder: Path | None = None,
) -> list[Outcome]:
    """Run every task on ``launcher``; one :class:`Outcome` per task, in order. The progress line (on stderr,
    off under ``--quiet``) counts ``done`` runs finished before (of ``total``), and estimates the time left from
    the run times measured now and the ``seconds`` of those read back. ``folder``: where a launcher keeps its own
    files (submitit's logs: ``folder/slurm``)."""
    board = Board(desc, total if total is not None else done + len(tasks), done, seconds, progress, launcher)
    try:
        if not tasks:
            return []
        if launcher.sequential:
            return _sequential(tasks, board)
        if launcher.kind == "local":
            return run_pool(launcher, tasks, board)
        if launcher.kind == "slurm":
            return run_slurm(launcher, tasks, board, folder)
        return run_ray(launcher, tasks, board)
    finally:
        board.close()


def _sequential(tasks: Sequence[Task], board: Board) -> list[Outcome]:
    """``--jobs 1``: in this process, in order (torch's threads as they are)."""
    out = []
    for task in tasks:
        board.started(task.key)
        result = outcome(task.key, worker_call(task.fn, task.args, None, own_process=False))
        board.finished(result)
        out.append(result)
    return out


__all__ = ["LAUNCHERS", "Launcher", "Outcome", "Task", "parse_launcher", "run_tasks", "threads_per_run"]
