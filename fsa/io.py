"""Atomic file writes: a failed command leaves no partial output file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable
from pathlib import Path


def atomic_write(path: str | Path, write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary path beside ``path``, then rename it into place.

    If ``write`` raises, the temporary file is removed and ``path`` is untouched.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        write(tmp_path)
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write(path, lambda p: p.write_text(text))


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    atomic_write(path, lambda p: p.write_bytes(data))
