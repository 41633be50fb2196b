"""``--launcher ray``: every run a Ray task (``ray.remote``; ``pip install 'fsa2rnn[ray]'``).

``--launcher-args`` (all optional): ``address`` (a running cluster, e.g. ``"auto"`` or ``"ray://head:10001"``;
without it, and without a Ray instance already started in this process, a local instance is started with
``num_cpus`` CPUs and stopped at the end), ``cpus_per_run`` (default 1; also the run's torch threads),
``gpus_per_run`` (default 0). ``--jobs N`` caps the runs in flight (default: as many as the cluster's CPUs allow —
Ray schedules them). A task is not retried by Ray (``max_retries=0``): a run whose worker dies is reported failed,
and the next invocation resumes it from its checkpoint.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from .base import Board, Launcher, Outcome, Task, first_line, outcome, require, worker_call

#: seconds between looks at the tasks
POLL = 1.0


def run_ray(launcher: Launcher, tasks: Sequence[Task], board: Board) -> list[Outcome]:
    ray = require("ray")
    args = launcher.args
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=args.get("address"), num_cpus=args.get("num_cpus"), include_dashboard=False,
                 log_to_driver=False, configure_logging=False)  # fmt: skip
    try:
        cpus, gpus = args.get("cpus_per_run", 1), args.get("gpus_per_run", 0)
        threads = max(1, math.floor(cpus))
        remote = ray.remote(num_cpus=cpus, num_gpus=gpus, max_retries=0)(worker_call)
        capacity = max(1, int(ray.cluster_resources().get("CPU", 1) // cpus)) if cpus else len(tasks)
        width = min(launcher.jobs or capacity, len(tasks))
        board.width = min(width, capacity)
        queue = list(range(len(tasks)))
        refs: dict[Any, int] = {}
        results: dict[int, Outcome] = {}
        try:
            while queue or refs:
                while queue and len(refs) < width:
                    i = queue.pop(0)
                    refs[remote.remote(tasks[i].fn, tasks[i].args, threads)] = i
                board.set_running({tasks[i].key for i in list(refs.values())[: board.width]})
                done, _ = ray.wait(list(refs), num_returns=1, timeout=POLL)
                for ref in done:
                    i = refs.pop(ref)
                    try:
                        results[i] = outcome(tasks[i].key, ray.get(ref))
                    except Exception as exc:  # the worker died, or the task could not run
                        results[i] = Outcome(tasks[i].key, error=f"Ray task: {first_line(exc)}")
                    board.finished(results[i])
        except BaseException:
            for ref in refs:
                ray.cancel(ref, force=True)
            raise
        return [results[i] for i in range(len(tasks))]
    finally:
        if started_here:
            ray.shutdown()
