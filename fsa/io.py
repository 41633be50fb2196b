"""Atomic file writes: a failed command leaves no partial output file."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary path beside ``path``, then rename it into place.

    If ``write`` raises, the temporary file is removed and ``path`` is untouched. The file gets the permissions a
    plain ``open(path, "w")`` would give it: those of the file it replaces, else 0o666 minus the umask (not the
    0o600 of ``mkstemp``).
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        write(tmp_path)
        os.chmod(tmp_path, _mode_of_plain_open(target))
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def _mode_of_plain_open(target: Path) -> int:
    """Permission bits ``open(target, "w")`` would leave: the existing file's, else 0o666 & ~umask."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write(path, lambda p: p.write_text(text))


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    atomic_write(path, lambda p: p.write_bytes(data))
