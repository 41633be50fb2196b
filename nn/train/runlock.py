"""One writer per training run: the lock of fsa2rnn.fsa.lock on ``RUN/.lock``, held while a run is written, under
torchrun too. Torch-free.

- :func:`run_lock` holds RUN's lock for its ``with`` block; it is re-entrant within a process (``fsa2rnn train``
  holds RUN for the whole command, and :func:`~fsa2rnn.nn.train.trainer.train` takes the lock of the run it writes,
  which is RUN itself or RUN/seed-S under it), and a second process is refused in one line naming the holder.
- ``fsa2rnn train --nproc N`` takes it in the launching process before torchrun starts and names itself to the
  workers in :data:`LAUNCHER_ENV` (:func:`launcher_env`); a worker trusts a lock held by that process and takes none,
  so that the workers never wait on their own launcher. Under a torchrun started by hand, rank 0 takes the lock and
  the other ranks (which write nothing) take none.
- :func:`check_run_free` refuses in the same words without taking anything: ``--out`` is checked with it before
  its contents are judged, so that a second process is told who holds the run rather than what it holds.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from ...fsa.lock import check_free, directory_lock, lock_holder

#: ``PID:RUN`` of the ``--nproc N`` launcher that holds RUN's lock for its torchrun workers
LAUNCHER_ENV = "FSA2RNN_RUN_LOCK"
WHAT = "run directory"

_held: set[Path] = set()


def _key(out: str | os.PathLike[str]) -> Path:
    return Path(os.path.abspath(out))


def _worker_covered(out: str | os.PathLike[str]) -> bool:
    """Whether this torchrun worker writes ``out`` under a lock held for it (module docstring)."""
    if "RANK" not in os.environ or int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return False
    pid, _, path = os.environ.get(LAUNCHER_ENV, "").partition(":")
    if path and _key(path) in (_key(out), *_key(out).parents):
        holder = lock_holder(path)
        return holder is not None and str(holder.get("pid")) == pid
    return os.environ["RANK"] != "0"


def _covered(out: str | os.PathLike[str]) -> bool:
    key = _key(out)
    return key in _held or _worker_covered(out)


@contextmanager
def run_lock(out: str | os.PathLike[str]) -> Iterator[None]:
    """Hold RUN's lock for the ``with`` block (nothing to take when this process already holds it, or holds it for
    its torchrun workers); DirectoryLockedError naming the holder when another process has it."""
    if _covered(out):
        yield
        return
    key = _key(out)
    with directory_lock(out, WHAT):
        _held.add(key)
        try:
            yield
        finally:
            _held.discard(key)


def check_run_free(out: str | os.PathLike[str]) -> None:
    """DirectoryLockedError naming the holder when another process holds RUN's lock (nothing taken)."""
    if not _covered(out):
        check_free(out, WHAT)


def launcher_env(out: str | os.PathLike[str]) -> dict[str, str]:
    """The environment entry by which the ``--nproc N`` launcher, holding RUN's lock, names itself to its workers."""
    return {LAUNCHER_ENV: f"{os.getpid()}:{_key(out)}"}
