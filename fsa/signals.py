"""SIGINT and SIGTERM as an exception, for the long commands (``train``, ``reproduce``): the command stops where it
is, says in one line what it kept and how to go on, and exits with the shell's status for the signal, 128 + its
number (130 for SIGINT, 143 for SIGTERM: :func:`exit_status`).

- :func:`stopping` makes both signals raise :class:`Stopped` in the main thread for its ``with`` block. Stopped is
  a KeyboardInterrupt, so the code that tidies up after Ctrl-C (a run that never reached a checkpoint removes its
  files, a lock is released) tidies up after SIGTERM too.
- :func:`deferred` holds both off over writes that belong together (a table and its Markdown) and raises Stopped
  when they are all done, so that no interruption leaves one new and the other stale.
- The trainer replaces these handlers while it trains, to finish the step under way and checkpoint
  (fsa2rnn.nn.train.trainer.StopRequest); they are back once it returns.

The named moments of a command — ``imports``, ``setup``, ``step``, ``evaluation``, ``table`` — are marked with
:func:`at`, which records the moment (:func:`moment`, for the message) and is the test hook: with
``FSA2RNN_TEST_SIGNAL_AT=MOMENT[:SIGNAL][@N]`` in the environment the process sends itself SIGNAL (SIGINT unless
``SIGTERM`` is named) the N-th time (the first unless N is given) MOMENT is reached, so that an interruption at each
moment is tested deterministically. Torch-free.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

#: the signals a long command turns into :class:`Stopped`
SIGNALS = (signal.SIGINT, signal.SIGTERM)
#: the environment variable of the test hook (module docstring)
TEST_HOOK = "FSA2RNN_TEST_SIGNAL_AT"
#: the moments :func:`at` marks, in the order a command reaches them
MOMENTS = ("imports", "setup", "step", "evaluation", "table")

_state: dict[str, Any] = {"moment": None, "seen": {}}


class Stopped(KeyboardInterrupt):
    """SIGINT or SIGTERM received under :func:`stopping` (``signum``)."""

    def __init__(self, signum: int = signal.SIGINT) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = int(signum)


def signal_of(exc: BaseException) -> int:
    """The signal an interruption stands for: its ``signum``, else SIGINT (a plain KeyboardInterrupt is Ctrl-C)."""
    return int(getattr(exc, "signum", signal.SIGINT))


def exit_status(exc: BaseException) -> int:
    """128 + the signal's number (the shell's convention): 130 for SIGINT, 143 for SIGTERM."""
    return 128 + signal_of(exc)


def signal_name(exc: BaseException) -> str:
    return signal.Signals(signal_of(exc)).name


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _install(handler: Any) -> dict[int, Any]:
    previous = {}
    for sig in SIGNALS:
        old = signal.signal(sig, handler)
        previous[sig] = signal.SIG_DFL if old is None else old  # None: a handler not installed from Python
    return previous


def _restore(previous: dict[int, Any]) -> None:
    for sig, handler in previous.items():
        signal.signal(sig, handler)


def _raise(signum: int, frame: Any) -> None:
    raise Stopped(signum)


@contextmanager
def stopping() -> Iterator[None]:
    """SIGINT and SIGTERM raise :class:`Stopped` in the ``with`` block (main thread only; elsewhere nothing
    changes); the previous handlers come back after it."""
    if not _main_thread():
        yield
        return
    previous = _install(_raise)
    try:
        yield
    finally:
        _restore(previous)


@contextmanager
def deferred() -> Iterator[None]:
    """SIGINT and SIGTERM received in the ``with`` block are held until it ends, then raised as :class:`Stopped`
    (the first one received); a block that fails raises its own error."""
    if not _main_thread():
        yield
        return
    got: list[int] = []
    previous = _install(lambda signum, frame: got.append(signum))
    try:
        yield
    finally:
        _restore(previous)
    if got:
        raise Stopped(got[0])


def moment() -> str | None:
    """The last moment :func:`at` marked in this process (None before the first)."""
    return _state["moment"]


def at(name: str) -> None:
    """Mark the moment ``name`` (one of :data:`MOMENTS`); the test hook raises its signal here (module docstring)."""
    _state["moment"] = name
    hook = os.environ.get(TEST_HOOK)
    if not hook:
        return
    what, _, count = hook.partition("@")
    where, _, sig = what.partition(":")
    if where != name:
        return
    seen = _state["seen"][name] = _state["seen"].get(name, 0) + 1
    if seen == int(count or 1):
        signal.raise_signal(signal.Signals[sig or "SIGINT"])


def reset() -> None:
    """Forget the moments marked (a new command in the same process: tests)."""
    _state["moment"] = None
    _state["seen"] = {}
