"""Progress of long work on stderr (tqdm): training, evaluation, L_max searches, comparisons, the theorem registry.

On a terminal the bar redraws in place (at most 10 times a second); otherwise (a log file, CI, a pipe) it prints a
plain line at most every :data:`LOG_INTERVAL` seconds, the first after that long (work done sooner prints nothing),
and a last one when work that printed ends. ``--quiet`` (or
:func:`set_quiet`) turns every bar off. Importing this module never imports torch or tqdm.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

#: seconds between progress lines when stderr is not a terminal
LOG_INTERVAL = 30.0
_quiet = [False]


def set_quiet(quiet: bool) -> None:
    """Turn every progress bar of this process off (``--quiet``) or back on."""
    _quiet[0] = bool(quiet)


def quiet() -> bool:
    return _quiet[0]


class _Lines:
    """A file for tqdm that turns its in-place redraws into whole lines (for logs and pipes)."""

    def __init__(self, stream: Any) -> None:
        self.stream, self.start, self.printed = stream, time.monotonic(), False

    def write(self, text: str) -> None:
        text = text.replace("\r", "").replace("\x1b[A", "").strip()
        if text and (self.printed or time.monotonic() - self.start >= LOG_INTERVAL):
            self.stream.write(text + "\n")
            self.printed = True

    def flush(self) -> None:
        self.stream.flush()


def bar(total: float | None, desc: str, *, unit: str = "it", initial: float = 0, **kw: Any) -> Any:
    """A tqdm bar on stderr (see the module docstring); a disabled one under ``--quiet``."""
    from tqdm import tqdm

    tty = sys.stderr.isatty()
    options: dict[str, Any] = dict(total=total, desc=desc, unit=unit, initial=initial, disable=quiet())
    if tty:
        options.update(file=sys.stderr, leave=False, mininterval=0.1)
    else:
        options.update(file=_Lines(sys.stderr), leave=True, mininterval=LOG_INTERVAL, ncols=100, ascii=True)
    options.update(kw)
    return tqdm(**options)


def counting(predict: Callable[..., Any], progress: Any) -> Callable[..., Any]:
    """``predict(inputs, state)`` of the chunked L_max protocol (nn/lmax.py), advancing ``progress`` by the
    symbols it reads (a numpy array or a torch tensor)."""

    def wrapped(inputs: Any, state: Any) -> Any:
        out = predict(inputs, state)
        progress.update(int(getattr(inputs, "size", 0) if not callable(getattr(inputs, "numel", None))
                            else inputs.numel()))  # fmt: skip
        return out

    return wrapped


@contextmanager
def stages(command: str, total: int) -> Iterator[Callable[[str], None]]:
    """Yield ``step(name)``: call it as each stage starts; the bar names the running stage and counts the done ones."""
    fmt = "{desc}: {n}/{total} stages done [{elapsed}]{postfix}"  # stages differ in cost: no rate, no ETA
    with bar(total, command, bar_format=fmt) as b:
        started = [False]

        def step(name: str) -> None:
            if started[0]:
                b.update(1)
            started[0] = True
            b.set_postfix_str(f"now: {name}", refresh=True)

        yield step
        if started[0]:
            b.update(1)


__all__ = ["LOG_INTERVAL", "bar", "counting", "quiet", "set_quiet", "stages"]
