"""Output files and JSON input: atomic writes that never replace anything but a regular file, and JSON parsing
whose every failure is a SpecError.

Every writer of the project (``compile -o``, ``show --dot``, ``decompose --dot``, ``Automaton.save``) goes through
:func:`atomic_write`: the data goes to a temporary file beside the target, which is renamed into place, so a failed
command leaves no partial file. :func:`output_target` decides what the target is, and is called by the CLI before
any work so that a bad path is refused at once: a symlink is followed to the file it names (the link survives and
points at the new file); a device, FIFO, socket or directory is never replaced; an empty path, a missing directory
and a directory without write permission are refused with one OutputFileError naming the path.
"""

from __future__ import annotations

import json
import os
import re
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import OutputFileError, SpecError

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
)


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a plain file")


def output_target(path: str | os.PathLike[str]) -> Path:
    """The regular file that writing ``path`` creates or replaces (symlinks followed), checked writable.

    Raises OutputFileError when the path is empty, names (or links to) something that is not a regular file, lies
    in a directory that does not exist, or that directory cannot be written.
    """
    raw = os.fspath(path)
    if raw == "":
        raise OutputFileError("the output path is empty")
    target = Path(os.path.realpath(raw))  # a dangling link resolves to the file it would create
    via = f" (a link to {str(target)!r})" if os.path.islink(raw) else ""
    try:
        mode = os.stat(target).st_mode
    except (FileNotFoundError, NotADirectoryError):
        mode = None  # the directory check below says why
    except OSError as exc:
        raise OutputFileError(f"cannot write {raw!r}: {exc.strerror or exc}") from None
    if mode is not None and not stat.S_ISREG(mode):
        raise OutputFileError(f"cannot write {raw!r}{via}: it is not a regular file ({_kind(mode)})")
    directory = target.parent
    if not directory.is_dir():
        what = "is not a directory" if directory.exists() else "does not exist"
        raise OutputFileError(f"cannot write {raw!r}: the directory {str(directory)!r} {what}")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise OutputFileError(f"cannot write {raw!r}: no permission to create files in {str(directory)!r}")
    return target


def output_directory(path: str | os.PathLike[str], option: str = "--out") -> Path:
    """The directory ``path`` that a command will create or fill, checked before any work: not empty, not a file
    or under one, and in a place this process may write (its nearest existing ancestor writable). OutputFileError
    naming the path and ``option`` otherwise."""
    raw = os.fspath(path)
    if raw.strip() == "":
        raise OutputFileError(f"{option} is empty: give a directory")
    out = Path(raw)
    if out.exists() and not out.is_dir():
        raise OutputFileError(f"{option} {raw!r} exists and is not a directory")
    anc = out
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise OutputFileError(f"{option} {raw!r}: {str(anc)!r} is a file, not a directory")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise OutputFileError(f"{option} {raw!r}: cannot write in {str(anc)!r} (read-only or no permission)")
    return out


def atomic_write(path: str | os.PathLike[str], write: Callable[[Path], None]) -> None:
    """Call ``write(tmp)`` on a temporary path beside the target of ``path``, then rename it into place.

    The target is :func:`output_target`'s (OutputFileError as it says). If ``write`` raises, the temporary file is
    removed and the target is untouched; an error of the file system (an OSError, or a safetensors write that
    failed: a full disk) becomes an OutputFileError naming the path. The file gets the permissions a plain
    ``open(path, "w")`` would give it: those of the file it replaces, else 0o666 minus the umask (not the 0o600
    of ``mkstemp``).
    """
    with staged_write(path, write):
        pass


@contextmanager
def staged_write(path: str | os.PathLike[str], write: Callable[[Path], None]) -> Iterator[Path]:
    """:func:`atomic_write` in two steps: ``write(tmp)`` on entering, the rename into place on leaving the ``with``
    block normally. If the block raises (the report that goes with the file could not be printed, say), the
    temporary file is removed and nothing is replaced. Yields the target."""
    raw = os.fspath(path)
    target = output_target(raw)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise OutputFileError(f"cannot write {raw!r}: {exc.strerror or exc}") from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        try:
            write(tmp_path)
        except Exception as exc:
            reason = _write_failure(exc)
            if reason is None:
                raise
            raise OutputFileError(f"cannot write {raw!r}: {reason}") from None
        yield target  # an exception of the block leaves the target as it was
        try:
            os.chmod(tmp_path, _mode_of_plain_open(target))
            os.replace(tmp_path, target)
        except OSError as exc:
            raise OutputFileError(f"cannot write {raw!r}: {exc.strerror or exc}") from None
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


#: the OS error a safetensors write reports in its message (``… I/O error: No space left on device (os error 28)``,
#: or ``… message: "No space left on device" …``)
_RUST_IO = re.compile(r'I/O error: (.*?) \(os error \d+\)|message: "([^"]*)"')


_STAGED = re.compile(r"\.(?P<target>.+)\.[a-z0-9_]{8}\.tmp")


def staged_leftover(name: str) -> str | None:
    """The target's name if ``name`` is the temporary file of a :func:`staged_write` into the same folder, else None.

    Such a file outlives its write only when the process was killed outright (SIGKILL, power loss) between the
    write and the rename; the target is then as it was before, and the file is debris that the next writer of the
    folder may remove (:func:`remove_staged_leftovers`)."""
    match = _STAGED.fullmatch(name)
    return match["target"] if match else None


def remove_staged_leftovers(folder: str | os.PathLike[str], targets: Iterable[str]) -> list[str]:
    """Remove the leftover temporary files of staged writes of ``targets`` in ``folder`` (a killed writer's debris,
    :func:`staged_leftover`); the names removed. Call it only while no other process writes the folder."""
    wanted, removed = set(targets), []
    for entry in sorted(Path(folder).iterdir()) if Path(folder).is_dir() else ():
        if staged_leftover(entry.name) in wanted and entry.is_file() and not entry.is_symlink():
            entry.unlink(missing_ok=True)
            removed.append(entry.name)
    return removed


def _write_failure(exc: Exception) -> str | None:
    """Why a write failed, for an error of the file system (an OSError; a safetensors write error), else None."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    if type(exc).__name__ == "SafetensorError":
        found = _RUST_IO.search(str(exc))
        return (found.group(1) or found.group(2)) if found else " ".join(str(exc).split())
    return None


def _mode_of_plain_open(target: Path) -> int:
    """Permission bits ``open(target, "w")`` would leave: the existing file's, else 0o666 & ~umask."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    atomic_write(path, lambda p: p.write_text(text))


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    atomic_write(path, lambda p: p.write_bytes(data))


def parse_json(text: str | bytes, what: str = "") -> Any:
    """``json.loads`` whose failures — malformed text, or nesting deeper than Python's recursion limit — raise
    SpecError, its message prefixed by ``what`` (e.g. "stdin line 3") when given."""
    prefix = f"{what}: " if what else ""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"{prefix}malformed JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise SpecError(f"{prefix}the JSON is nested too deeply to parse") from None


def safetensors_problem(path: str | os.PathLike[str]) -> str | None:
    """Why a file cannot be a safetensors file, read from its first bytes alone, or None: empty, shorter than the
    8-byte header length, or a header length beyond the file's end (a text file, a truncated download)."""
    p = Path(path)
    try:
        size = p.stat().st_size
        with p.open("rb") as f:
            head = f.read(9)
    except OSError as exc:
        return f"cannot be read ({exc.strerror or exc})"
    if size == 0:
        return "is empty (0 bytes)"
    if size < 8:
        return f"is {size} bytes long, too short for a safetensors file"
    n = int.from_bytes(head[:8], "little")
    if n > size - 8 or head[8:9] != b"{":
        return "is not a safetensors file (its first bytes are no safetensors header; a text file?)"
    return None
