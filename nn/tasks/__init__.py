"""Tasks: every spec string is a task (its word problem), and named tasks come from the task registry.

``get_task("S5:swaps")`` is the word problem of the builtin (predict the state after each symbol, uniform symbols);
``get_task("regex:(a|b)*abb:accept")`` predicts acceptance; ``get_task("grazzi:parity")``, ``"brandoit:FF"``,
``"dlr:shift"``, … are the papers' tasks with their documented alphabets and distributions (``list_tasks()``).

:data:`TASKS` is the registry (fsa2rnn.fsa.registry): an entry is a function building a :class:`Task` (one name) or
a :class:`TaskFamily` (every name ``family:…``; the papers' ``grazzi``, ``brandoit`` and ``dlr`` families are
fsa2rnn's own ``fsa2rnn.tasks`` entry points). An installed package declares its tasks in that entry-point group;
a script or notebook calls :func:`register_task`. A registered name never shadows a builtin spec.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...fsa import resolve_spec
from ...fsa.errors import FsaError, PluginError, UnknownBuiltinError
from ...fsa.lazy import lazy_getattr
from ...fsa.library.builtins import builtin_names, is_builtin
from ...fsa.library.regex_syntax import parse as parse_regex
from ...fsa.registry import EXTRAS, Registry, did_you_mean
from .family import TaskFamily

# the tasks themselves load torch: imported on first use, so that the registry (and `fsa2rnn tasks`) does not
__getattr__ = lazy_getattr(
    __name__,
    {
        "AutomatonTask": ("automaton_task", "AutomatonTask"),
        "Batch": ("base", "Batch"),
        "PAPER_TASKS": ("papers", "PAPER_TASKS"),
        "Task": ("base", "Task"),
        "draw_lengths": ("base", "draw_lengths"),
        "parse_length_range": ("base", "parse_length_range"),
    },
)

#: spec-string prefixes that no task name may take
RESERVED = ("regex",)


def _check_task(name: str, obj: Any) -> None:
    """An entry is a TaskFamily named ``name`` whose tasks are all ``name:…``, or a function building a Task; its
    name is no builtin spec (it would shadow it)."""
    if _is_spec(name):
        raise PluginError(f"the name {name!r} is a builtin spec or a spec-string prefix, which it would shadow")
    if isinstance(obj, TaskFamily):
        stray = [n for n in obj.tasks if not n.startswith(f"{name}:")]
        if obj.name != name or stray:
            raise PluginError(f"a task family registered as {name!r} must name its tasks {name}:… (got "
                              f"{obj.name!r}{', ' + repr(stray[0]) if stray else ''})")  # fmt: skip
    elif not callable(obj):
        raise PluginError(f"{obj!r} is neither a TaskFamily nor a function building a Task")


#: name → a function building the task, or a TaskFamily (its tasks named ``name:…``)
TASKS: Registry[Any] = Registry("fsa2rnn.tasks", "task", check=_check_task, unknown=UnknownBuiltinError)


def register_task(name: str, task: Callable[[], Any] | TaskFamily | str, *, replace: bool = False) -> None:
    """Register ``task`` — a function building a Task, a TaskFamily named ``name``, or a ``"module:attr"``
    reference — under ``name``, for ``fsa2rnn train NAME`` in this process (scripts, notebooks); an installed
    package declares it in its ``fsa2rnn.tasks`` entry points instead. A taken name raises PluginError unless
    ``replace``."""
    TASKS.register(name, task, replace=replace)


def _is_spec(name: str) -> bool:
    """Whether ``name`` is a builtin spec or a spec-string prefix: a registered entry of that name is never used."""
    if name.split(":", 1)[0] in RESERVED or name.endswith(":accept"):
        return True
    try:
        resolve_spec(name)
    except FsaError:
        return False
    return True


def _registered(name: str) -> Any:
    """The registered task ``name`` (an entry, or a task of the family named by its prefix), or None."""
    if name in TASKS and not _is_spec(name):
        entry = TASKS.get(name)
        if isinstance(entry, TaskFamily):
            raise UnknownBuiltinError(f"{name!r} is a family of tasks: name one of them, e.g. {entry.names()[0]!r} "
                                      "(`fsa2rnn tasks` lists them)")  # fmt: skip
        return _built(name, entry)
    family = name.split(":", 1)[0]
    if ":" in name and family in TASKS and not _is_spec(family):
        entry = TASKS.get(family)
        if isinstance(entry, TaskFamily):
            return entry.get(name)
    return None


def _built(name: str, factory: Callable[[], Any]) -> Any:
    from .base import Task

    task = factory()
    if not isinstance(task, Task):
        raise PluginError(f"task plug-in {name!r} ({TASKS.origin(name)}): it built a {type(task).__name__}, "
                          "not a fsa2rnn.nn.tasks.Task")  # fmt: skip
    return task


def get_task(name: str) -> Any:
    """The task named ``name`` (a :class:`Task`): a registered one, ``SPEC:accept``, or any spec string (its word
    problem)."""
    from .automaton_task import AutomatonTask

    task = _registered(name)
    if task is not None:
        return task
    if name.endswith(":accept"):
        return AutomatonTask(resolve_spec(name[: -len(":accept")]), name=name, readout="accept")
    try:
        automaton = resolve_spec(name)
    except UnknownBuiltinError:
        raise UnknownBuiltinError(unknown_task_message(name)) from None
    return AutomatonTask(automaton, name=name)


def check_task_name(name: str) -> None:
    """What a task name decides without building the task (no torch), as :func:`get_task` reads it: a task of one
    of fsa2rnn's families must be one ``fsa2rnn tasks`` lists; a registered name (or a plug-in family's prefix) is
    left to the registry; a regex is read and measured (fsa.library.regex_syntax), so that a pattern that expands
    beyond its limit is refused before any setup; anything else must be a builtin's name or a file."""
    family = name.split(":", 1)[0]
    if name in TASKS and not _is_spec(name):
        return
    if ":" in name and family in TASKS and not _is_spec(family):
        if TASKS.is_builtin(family) and name not in builtin_task_names():
            raise UnknownBuiltinError(unknown_task_message(name))
        return
    spec = name.removesuffix(":accept")
    if spec.startswith(("regex:", "regex[")):
        parse_regex(spec)
    elif not (is_builtin(spec) or spec.lower().endswith(".json") or os.path.exists(spec)):
        raise UnknownBuiltinError(unknown_task_message(name))


def builtin_task_names() -> list[str]:
    """The names of fsa2rnn's own tasks, read from nn/task_catalog.json (no torch)."""
    catalog = Path(__file__).parent.parent / "task_catalog.json"
    return [row["name"] for row in json.loads(catalog.read_text())["tasks"]]


def unknown_task_message(name: str) -> str:
    """The one line of an unknown task name, with the registered tasks and builtins close to it."""
    close = did_you_mean(name, builtin_task_names() + [n for n in TASKS.names() if not TASKS.is_builtin(n)]
                         + builtin_names(name))  # fmt: skip
    return (f"unknown task {name!r}: not a registered task, builtin, regex or spec file (run `fsa2rnn tasks` and "
            f"`fsa2rnn list` for them{close})")  # fmt: skip


def task_rows(*, builtin: bool | None = None) -> tuple[list[dict[str, Any]], list[str]]:
    """(rows, problems): one row of ``fsa2rnn tasks`` per registered task — fsa2rnn's own only (``builtin``
    True), the plug-ins' only (False) or all (None) — and one line per plug-in that cannot be used."""
    rows: list[dict[str, Any]] = []
    problems: list[str] = []
    for name in TASKS.names():
        if builtin is not None and TASKS.is_builtin(name) != builtin:
            continue
        try:
            entry = TASKS.get(name)
            names = entry.names() if isinstance(entry, TaskFamily) else [name]
            rows += [get_task(n).describe() for n in names]
        except FsaError as exc:
            problems.append(str(exc))
        except ModuleNotFoundError as exc:  # a plug-in's task that needs an extra this installation lacks
            extra = EXTRAS.get((exc.name or "").split(".")[0])
            if extra is None:
                raise
            lacks = f"needs {exc.name}, which this installation lacks: pip install 'fsa2rnn[{extra}]'"
            problems.append(f"task {name!r} {lacks}")
    problems += [p for p in TASKS.problems() if p not in problems]
    return rows, problems


def list_tasks(*, builtin: bool | None = None) -> list[dict]:
    """One row per registered task that can be built (``fsa2rnn tasks``; ``builtin`` as in :func:`task_rows`);
    every spec string is a task too."""
    return task_rows(builtin=builtin)[0]


__all__ = [
    "AutomatonTask",
    "Batch",
    "FsaError",
    "PAPER_TASKS",
    "TASKS",
    "Task",
    "TaskFamily",
    "builtin_task_names",
    "check_task_name",
    "draw_lengths",
    "get_task",
    "list_tasks",
    "parse_length_range",
    "register_task",
    "task_rows",
    "unknown_task_message",
]
