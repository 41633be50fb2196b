"""Bounded reading of an input file: a regular file, a device (``/dev/zero``, ``/dev/stdin``), a pipe or a FIFO.

:func:`read_bounded` never holds more than ``limit`` bytes and never waits forever: a regular file is refused by
its size before it is read; anything else is read in chunks without blocking, refused as soon as it passes the
limit, and refused when no byte arrives for :data:`IDLE_TIMEOUT` seconds (a FIFO that nobody writes, a terminal
left waiting). ``first`` names the bytes the content may start with (after whitespace, which is skipped without
being kept), so that ``/dev/zero`` or a binary file is refused at its first byte rather than at the limit.
"""

from __future__ import annotations

import errno
import io
import os
import re
import select
import stat
import time

from .errors import LimitExceededError, SpecError

#: seconds without a byte after which a pipe, FIFO or device is given up on
IDLE_TIMEOUT = 3.0
_CHUNK = 1 << 20
_WHITESPACE = b" \t\r\n"
_LEADING_WHITESPACE = re.compile(rb"[ \t\r\n]*")


def read_bounded(
    path: str | os.PathLike[str],
    limit: int,
    *,
    what: str = "file",
    first: bytes | None = None,
    timeout: float | None = None,
) -> bytearray:
    """The bytes of ``path``, at most ``limit`` of them (LimitExceededError beyond), or SpecError when it cannot
    be read (missing, a directory, a symbolic link loop, no permission), starts with a byte not in ``first``, or
    stays silent for ``timeout`` seconds (default :data:`IDLE_TIMEOUT`)."""
    raw = os.fspath(path)
    shown = f"{what} {raw!r}"
    try:
        fd = os.open(raw, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO without a writer opens at once
    except OSError as exc:
        raise SpecError(f"cannot read {shown}: {describe_os_error(exc)}") from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise SpecError(f"cannot read {shown}: it is a directory")
        if stat.S_ISREG(mode):
            size = os.fstat(fd).st_size
            if size > limit:
                raise LimitExceededError(f"{shown} has {size:,} bytes, over the limit of {limit:,}")
            return _read_file(fd, size, shown, first)
        return _read(fd, limit, shown, first, IDLE_TIMEOUT if timeout is None else timeout)
    except OSError as exc:
        raise SpecError(f"cannot read {shown}: {describe_os_error(exc)}") from None
    finally:
        os.close(fd)


def _read_file(fd: int, size: int, shown: str, first: bytes | None) -> bytearray:
    """A regular file of ``size`` bytes, read into one buffer (the file read once, not copied)."""
    os.set_blocking(fd, True)
    buf = bytearray(size)
    view = memoryview(buf)
    n = 0
    with io.FileIO(fd, closefd=False) as f:
        while n < size:
            got = f.readinto(view[n:])
            if not got:
                break
            n += got
    view.release()
    del buf[n:]  # a file that shrank meanwhile
    _check_start(buf, shown, first)
    return buf


def _check_start(data: bytes | bytearray, shown: str, first: bytes | None) -> None:
    """SpecError when the first byte after whitespace is not one of ``first``."""
    if first is None:
        return
    start = _LEADING_WHITESPACE.match(data).end()  # type: ignore[union-attr]
    if start < len(data) and data[start] not in first:
        byte = bytes(data[start : start + 1])
        raise SpecError(f"{shown} is not {_expected(first)}: it starts with the byte {byte!r}")


def _read(fd: int, limit: int, shown: str, first: bytes | None, timeout: float) -> bytearray:
    chunks = bytearray()
    total = 0  # bytes read, leading whitespace included
    started = first is None  # whether a byte other than leading whitespace has been seen
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while True:
        if not os.get_blocking(fd) and not poller.poll(int(timeout * 1000)):
            waited = "nothing arrived" if total == 0 else "nothing more arrived"
            raise SpecError(f"cannot read {shown}: {waited} for {timeout:g} s (a pipe or FIFO nobody writes?)")
        try:
            chunk = os.read(fd, min(_CHUNK, limit + 1 - total))
        except BlockingIOError:
            time.sleep(0.01)
            continue
        if not chunk:
            return chunks
        total += len(chunk)
        if total > limit:
            raise LimitExceededError(f"{shown} is longer than the limit of {limit:,} bytes")
        if not started:
            chunk = chunk.lstrip(_WHITESPACE)
            if not chunk:
                continue
            started = True
            _check_start(chunk, shown, first)
        chunks += chunk


def _expected(first: bytes) -> str:
    return "a JSON object" if first == b"{" else f"what it should be (it must start with one of {first!r})"


def describe_os_error(exc: OSError) -> str:
    """An OSError in words, the loop of symbolic links named as such."""
    if exc.errno == errno.ELOOP:
        return "a loop of symbolic links"
    if exc.errno == errno.ENOENT:
        return "no such file"
    return exc.strerror or str(exc)


def decode_utf8(data: bytes, shown: str) -> str:
    """``data`` as text; SpecError naming the byte offset of the first byte that is not UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        byte = bytes(data[exc.start : exc.start + 1])
        raise SpecError(f"{shown} is not UTF-8 text (byte {exc.start:,} is {byte!r})") from None


__all__ = ["IDLE_TIMEOUT", "decode_utf8", "describe_os_error", "read_bounded"]
