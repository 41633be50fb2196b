"""One writer per directory: an OS lock on ``DIR/.lock``.

:func:`directory_lock` takes an exclusive ``fcntl.flock`` on ``DIR/.lock`` without waiting. The kernel releases it
when its holder exits, however it exits (a SIGKILL, a crash, a lost machine's session), so a lock is never stale:
the file of a dead holder is simply taken over. While held, the file records the holder — pid, host and start time
— which a second process, refused at once with :class:`~fsa2rnn.fsa.errors.DirectoryLockedError`, names in its
one-line message. On release the file is removed, and the directories the lock created are removed again when they
are empty, so a directory that was only locked is left as it was found (a command interrupted before it wrote
anything leaves no empty folder behind). :func:`check_free` refuses in the same words without taking the lock, for
a command that checks a directory's contents before it takes it.

The lock is advisory (processes that do not take it are not stopped) and local to one machine's kernel for the
file systems whose flock is not shared (NFS exports it; some network file systems do not).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .errors import DirectoryLockedError, OutputFileError

LOCK_NAME = ".lock"


@contextmanager
def directory_lock(directory: str | os.PathLike[str], what: str = "directory") -> Iterator[Path]:
    """Hold the lock of ``directory`` (created if missing) for the ``with`` block; yields the lock file's path.

    DirectoryLockedError, naming the holder, when another process (or another ``directory_lock`` of this one)
    holds it; OutputFileError when the directory cannot be created or written."""
    folder = Path(directory)
    path = folder / LOCK_NAME
    created = _missing(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputFileError(f"cannot create the {what} {str(folder)!r}: {exc.strerror or exc}") from None
    fd = _acquire(path, folder, what)
    try:
        _record(fd)
        yield path
    finally:
        try:
            os.unlink(path)  # before the unlock: a waiting opener then finds a new file (see _acquire)
        except OSError:
            pass
        os.close(fd)
        for made in created:  # innermost first; one that holds anything stays, and so do those above it
            try:
                made.rmdir()
            except OSError:
                break


def _missing(folder: Path) -> list[Path]:
    """The directories of ``folder``'s path that do not exist yet, innermost first."""
    out = []
    for p in (folder, *folder.parents):
        if p.exists() or p.is_symlink():
            break
        out.append(p)
    return out


def check_free(directory: str | os.PathLike[str], what: str = "directory") -> None:
    """DirectoryLockedError, naming the holder, when another process holds ``directory``'s lock; nothing otherwise
    (nothing is created or taken)."""
    holder = lock_holder(directory)
    if holder is not None:
        path = Path(directory) / LOCK_NAME
        raise DirectoryLockedError(_refusal(what, Path(directory), path, _describe(holder)))


def _acquire(path: Path, folder: Path, what: str) -> int:
    """An fd of ``path`` holding its exclusive flock. The file may be unlinked by its last holder between our open
    and our flock; a lock on an unlinked file guards nothing, so the inode is checked after locking, and the open
    repeated until it is the file at ``path``."""
    while True:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except FileNotFoundError:  # the folder went away under us (its last holder removed it, empty): again
            try:
                folder.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise OutputFileError(f"cannot create the {what} {str(folder)!r}: {exc.strerror or exc}") from None
            continue
        except OSError as exc:
            raise OutputFileError(f"cannot write in the {what} {str(folder)!r}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _describe(_read_holder(fd))
            os.close(fd)
            raise DirectoryLockedError(_refusal(what, folder, path, holder)) from None
        except OSError as exc:
            os.close(fd)
            raise OutputFileError(f"cannot lock {str(path)!r}: {exc.strerror or exc}") from None
        try:
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            return fd
        os.close(fd)


def _record(fd: int) -> None:
    """Write who holds the lock into its file (read by a refused process for its message)."""
    info = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.strftime("%Y-%m-%d %H:%M:%S %z")}
    os.ftruncate(fd, 0)
    os.pwrite(fd, (json.dumps(info) + "\n").encode(), 0)


def lock_holder(directory: str | os.PathLike[str]) -> dict | None:
    """The holder recorded in ``directory``'s lock file while the lock is held, else None."""
    path = Path(directory) / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_holder(fd)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _read_holder(fd: int) -> dict:
    try:
        info = json.loads(os.pread(fd, 4096, 0).decode())
        return info if isinstance(info, dict) else {}
    except (OSError, ValueError):
        return {}


def _refusal(what: str, folder: Path, path: Path, holder: str) -> str:
    return (f"the {what} {str(folder)!r} is in use by {holder} (its lock {str(path)!r}); wait for it to finish or "
            "choose another")  # fmt: skip


def _describe(info: dict) -> str:
    if not info.get("pid"):
        return "another process"
    return f"process {info['pid']} on {info.get('host', '?')} (since {info.get('started', '?')})"
