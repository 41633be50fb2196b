"""Tasks: every spec string is a task (its word problem), and the papers' tasks carry a prefix.

``get_task("S5:swaps")`` is the word problem of the builtin (predict the state after each symbol, uniform symbols);
``get_task("regex:(a|b)*abb:accept")`` predicts acceptance; ``get_task("grazzi:parity")``, ``"brandoit:FF"``,
``"dlr:shift"``, … are the papers' tasks with their documented alphabets and distributions (``list_tasks()``).
"""

from __future__ import annotations

from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.errors import FsaError, UnknownBuiltinError

from .automaton_task import AutomatonTask
from .base import Batch, Task, draw_lengths, parse_length_range
from .papers import PAPER_TASKS, paper_task

PREFIXES = ("grazzi:", "brandoit:", "dlr:")


def get_task(name: str) -> Task:
    """The task named ``name``: a paper task (prefixed), ``SPEC:accept``, or any spec string (its word problem)."""
    if name.startswith(PREFIXES):
        return paper_task(name)
    if name.endswith(":accept"):
        return AutomatonTask(resolve_spec(name[: -len(":accept")]), name=name, readout="accept")
    try:
        automaton = resolve_spec(name)
    except UnknownBuiltinError:
        from ..limits import unknown_task_message

        raise UnknownBuiltinError(unknown_task_message(name)) from None
    return AutomatonTask(automaton, name=name)


def list_tasks() -> list[dict]:
    """One row per paper task (``fsa2rnn tasks``); every spec string is a task too."""
    return [PAPER_TASKS[n]().describe() for n in PAPER_TASKS]


__all__ = ["AutomatonTask", "Batch", "FsaError", "Task", "draw_lengths", "get_task", "list_tasks", "parse_length_range"]
