"""``--launcher slurm``: every run a task of one SLURM array job, submitted through submitit (``pip install
'fsa2rnn[slurm]'``).

``--launcher-args`` (all optional): ``partition``, ``time`` (minutes per run; default 60), ``cpus_per_run``
(default 1; also the run's torch threads), ``gpus_per_run`` (default 0), ``mem_gb``, ``array_parallelism`` (runs at
once; default ``--jobs``, else submitit's), ``folder`` (submitit's logs and pickles; default ``DIR/slurm``), any of
submitit's ``slurm_*`` parameters as they are, and ``cluster``: ``slurm`` (default), ``local`` (submitit's local
executor: each run a process on this machine, at most ``array_parallelism`` at once — how the tests run this path)
or ``debug`` (in this process).

A run whose job dies (killed, pre-empted, past its time) is reported failed with the first line of submitit's
error; its run directory keeps its last checkpoint, and the next invocation resumes it.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .base import Board, Launcher, Outcome, Task, first_line, outcome, require, worker_call

#: seconds between looks at the jobs' states
POLL = 1.0


def executor(launcher: Launcher, folder: Path) -> tuple[Any, str, int | None]:
    """The submitit executor of ``--launcher-args`` (its cluster, the runs at once), its cluster name and the
    parallelism."""
    submitit = require("slurm")
    args = dict(launcher.args)
    cluster = args.pop("cluster", "slurm")
    where = Path(args.pop("folder", folder))
    ex = submitit.AutoExecutor(folder=where, cluster=cluster)
    parallel = args.pop("array_parallelism", None) or launcher.jobs
    params: dict[str, Any] = {
        "timeout_min": args.pop("time", 60),
        "cpus_per_task": args.pop("cpus_per_run", 1),
        "gpus_per_node": args.pop("gpus_per_run", 0),
        "tasks_per_node": 1,
        "nodes": 1,
        "name": "fsa2rnn",
    }
    if "partition" in args:
        params["slurm_partition"] = args.pop("partition")
    if "mem_gb" in args:
        params["mem_gb"] = args.pop("mem_gb")
    if parallel:
        params["slurm_array_parallelism"] = parallel
    params.update(args)  # the slurm_* parameters, as they are
    ex.update_parameters(**params)
    return ex, cluster, parallel


def run_slurm(launcher: Launcher, tasks: Sequence[Task], board: Board, folder: Path | None) -> list[Outcome]:
    ex, cluster, parallel = executor(launcher, (folder or Path(".")) / "slurm")
    threads = launcher.args.get("cpus_per_run", 1)
    board.width = parallel or len(tasks)
    if cluster == "slurm":  # one array job; SLURM keeps array_parallelism of them running
        with ex.batch():
            jobs = [ex.submit(worker_call, t.fn, t.args, threads) for t in tasks]
        return _collect(tasks, dict(enumerate(jobs)), board, lambda: None)
    # submitit's local executor starts every job it is given at once: hand it array_parallelism at a time
    width = parallel or 1
    queue = list(range(len(tasks)))
    jobs: dict[int, Any] = {}

    def top_up() -> None:
        while queue and sum(1 for i in jobs if not jobs[i].done()) < width:
            i = queue.pop(0)
            jobs[i] = ex.submit(worker_call, tasks[i].fn, tasks[i].args, threads)

    top_up()
    return _collect(tasks, jobs, board, top_up, waiting=queue)


def _collect(
    tasks: Sequence[Task], jobs: dict[int, Any], board: Board, top_up: Any, waiting: list[int] | None = None
) -> list[Outcome]:
    """Poll the jobs until every task has an outcome (``top_up`` submits more as jobs end)."""
    results: dict[int, Outcome] = {}
    try:
        while len(results) < len(tasks):
            for i, job in list(jobs.items()):
                if i in results or not job.done():
                    continue
                try:
                    results[i] = outcome(tasks[i].key, job.result())
                except Exception as exc:  # the job died: killed, pre-empted, past its time
                    results[i] = Outcome(tasks[i].key, error=f"SLURM job {job.job_id}: {first_line(exc)}")
                board.finished(results[i])
            top_up()
            board.set_running({tasks[i].key for i, j in jobs.items() if i not in results and _running(j)})
            if len(results) < len(tasks):
                time.sleep(POLL)
    except BaseException:
        for i, job in jobs.items():
            if i not in results:
                job.cancel(check=False)
        raise
    assert not waiting
    return [results[i] for i in range(len(tasks))]


def _running(job: Any) -> bool:
    try:
        return str(job.state).upper() in ("RUNNING", "COMPLETING")
    except Exception:  # noqa: BLE001 - a state that cannot be read counts as not running
        return False
