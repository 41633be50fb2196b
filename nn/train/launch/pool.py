"""``--jobs N``: the runs on a local pool of N processes (concurrent.futures.ProcessPoolExecutor, spawned, so that
no worker inherits this process's torch threads or state).

Each worker sets torch's threads to :func:`~fsa2rnn.nn.train.launch.threads_per_run` (``max(1, cores // N)``) so
that N runs do not oversubscribe the cores, and says on a queue which run it has started (the progress line's
"running"). A worker that dies (killed, out of memory) breaks the pool, which stops every run under way: those are
reported failed (a rerun resumes them from their checkpoints), the runs not yet started go on in a fresh pool. When
the command itself is stopped (Ctrl-C, SIGTERM), no new run starts and the runs under way get SIGINT: each stops
where it is, resumable from its last checkpoint.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from .base import Board, Launcher, Outcome, Task, outcome, threads_per_run, worker_call

#: the worker's queue of started runs (set by _init in each worker process)
_STARTED: list[Any] = []
#: seconds between looks at the queue of started runs
POLL = 0.5


def _init(started: Any) -> None:
    _STARTED[:] = [started]


def _pool_call(key: str, fn: Any, args: tuple[Any, ...], threads: int) -> dict[str, Any]:
    """A pool worker's run: announce it, then :func:`~fsa2rnn.nn.train.launch.worker_call`."""
    if _STARTED:
        _STARTED[0].put((key, os.getpid()))
    return worker_call(fn, args, threads)


def run_pool(launcher: Launcher, tasks: Sequence[Task], board: Board) -> list[Outcome]:
    n = min(launcher.jobs or 1, len(tasks))
    threads = threads_per_run(launcher.jobs or 1, launcher.args.get("threads_per_run"))
    ctx = multiprocessing.get_context("spawn")
    results: dict[int, Outcome] = {}
    pending = list(range(len(tasks)))
    while pending:
        started = ctx.Queue()
        running: dict[str, int] = {}
        broken = False
        with ProcessPoolExecutor(max_workers=n, mp_context=ctx, initializer=_init, initargs=(started,)) as pool:
            futures: dict[Future[Any], int] = {
                pool.submit(_pool_call, tasks[i].key, tasks[i].fn, tasks[i].args, threads): i for i in pending
            }
            try:
                while futures and not broken:
                    finished, _ = wait(futures, timeout=POLL, return_when=FIRST_COMPLETED)
                    _drain(started, running)
                    for fut in finished:
                        i = futures.pop(fut)
                        try:
                            reply = fut.result()
                        except BrokenProcessPool:
                            broken = True  # decided below, with the other runs the broken pool held
                            continue
                        results[i] = outcome(tasks[i].key, reply)
                        board.finished(results[i])
                    board.set_running({k for k in running if k not in _keys(results, tasks)})
            except BaseException:  # Ctrl-C, SIGTERM: no new run starts, the runs under way are told to stop
                pool.shutdown(wait=False, cancel_futures=True)
                _drain(started, running)
                done = _keys(results, tasks)
                for pid in {pid for key, pid in running.items() if key not in done}:
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGINT)
                raise
        _drain(started, running)
        pending = [i for i in pending if i not in results]
        if broken:
            # a dead worker stops the pool's runs under way: they fail (a rerun resumes them from their
            # checkpoints); the runs not yet started go on in a fresh pool
            for i in [i for i in pending if tasks[i].key in running]:
                results[i] = Outcome(tasks[i].key, error="stopped: a worker process of the pool died (killed, or out "
                                                         "of memory)")  # fmt: skip
                board.finished(results[i])
            if not any(tasks[i].key in running for i in pending):  # nothing started: no culprit to drop
                for i in pending:
                    results[i] = Outcome(tasks[i].key, error="the worker pool broke before the run started")
                    board.finished(results[i])
            pending = [i for i in pending if i not in results]
            board.set_running(set())
    return [results[i] for i in range(len(tasks))]


def _keys(results: dict[int, Outcome], tasks: Sequence[Task]) -> set[str]:
    return {tasks[i].key for i in results}


def _drain(started: Any, running: dict[str, int]) -> None:
    while True:
        try:
            key, pid = started.get_nowait()
        except (queue.Empty, OSError, EOFError, ValueError):
            return
        running[key] = pid
