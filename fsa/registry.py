"""Open registries: the extension points of fsa2rnn (compile targets, layers, tasks, reproduction tables).

A :class:`Registry` maps names to entries. Entries come from the Python entry-point group of the registry (an
installed package declares ``[project.entry-points."fsa2rnn.targets"] mytarget = "mypkg.target:TARGET"``; fsa2rnn's
own built-ins are declared the same way in its pyproject.toml) and from :meth:`Registry.register` calls (scripts and
notebooks). An entry is held as a ``"module:attr"`` reference and imported only when it is first asked for, so
listing names never imports torch.

A plug-in that is malformed — it does not import, its attribute is missing, it fails the registry's check, or it
reuses a name — is reported by name (:class:`~fsa2rnn.fsa.errors.PluginError`, one line) when it is asked for, and
listed by :meth:`Registry.problems`; it never breaks the built-in entries. The one helper that turns a
``"module:attr"`` string into an object, :func:`resolve_ref`, serves the registries and the references to
higher-layer members (a target's torch module, its stepper) that the lower layers hold as strings.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import re
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .errors import PluginError, SpecError

T = TypeVar("T")

#: the distribution whose entry points are fsa2rnn's own built-ins
BUILTIN_DISTRIBUTION = "fsa2rnn"
_REF = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


#: fsa2rnn's optional dependencies (top-level module → the extra that installs it): a member that needs one of them
#: raises ModuleNotFoundError unchanged, so that the command says which extra to install
EXTRAS = {"torch": "nn", "matplotlib": "nn", "aalpy": "lstar", "triton": "triton"}


def resolve_ref(ref: str, *, what: str = "reference") -> Any:
    """The object named by ``"package.module:attr"`` (``attr`` may be dotted); a malformed string, a module that does
    not import or a missing attribute raise :class:`PluginError` naming ``what`` and the reference. A module that
    needs one of fsa2rnn's optional dependencies (:data:`EXTRAS`) where it is not installed raises that
    ModuleNotFoundError unchanged: the installation lacks an extra, the plug-in is not broken."""
    if not isinstance(ref, str) or not _REF.match(ref):
        raise PluginError(f"{what} {ref!r} is not of the form package.module:name")
    module_name, attr = ref.split(":")
    try:
        obj: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if (exc.name or "").split(".")[0] in EXTRAS:
            raise
        raise PluginError(
            f"{what} {ref!r}: module {module_name!r} does not import (ModuleNotFoundError: {exc})"
        ) from None
    except Exception as exc:  # any failure inside a plug-in's import is reported by name, never as a traceback
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise PluginError(
            f"{what} {ref!r}: module {module_name!r} does not import ({type(exc).__name__}: {first})"
        ) from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise PluginError(f"{what} {ref!r}: {module_name!r} has no attribute {attr!r}") from None
    return obj


@dataclass
class _Entry:
    name: str
    ref: str | None  # "module:attr" while not yet loaded
    obj: Any
    origin: str  # the distribution that declared it, or "register()"
    loaded: bool


class Registry(Generic[T]):
    """Names → entries of one extension point (a docstring per registry says what an entry must provide).

    ``group`` is the entry-point group (``"fsa2rnn.targets"``, …); ``kind`` names an entry in messages
    (``"target"``); ``check(name, obj)`` validates a loaded entry and raises ``PluginError`` (or returns a
    replacement object, e.g. an instance built from a class); ``unknown`` is the error class for a name that is not
    registered (a subclass of :class:`~fsa2rnn.fsa.errors.FsaError`)."""

    def __init__(
        self,
        group: str,
        kind: str,
        *,
        check: Callable[[str, Any], Any] | None = None,
        unknown: type[Exception] = SpecError,
    ) -> None:
        self.group = group
        self.kind = kind
        self._check = check
        self._unknown = unknown
        self._entries: dict[str, _Entry] = {}
        self._problems: dict[str, str] = {}
        self._discovered = False
        self._lock = threading.RLock()

    # -- filling ---------------------------------------------------------------------------------------------------
    def register(self, name: str, obj: T | str, *, replace: bool = False, origin: str = "register()") -> None:
        """Add ``obj`` (an entry, or a ``"module:attr"`` reference loaded on first use) under ``name``.

        A name already taken raises :class:`PluginError` unless ``replace`` (scripts that re-run a cell)."""
        if not isinstance(name, str) or not name or name != name.strip():
            raise PluginError(f"{self.kind} name {name!r} must be a non-empty string without surrounding spaces")
        with self._lock:
            self._discover()
            if name in self._entries and not replace:
                raise PluginError(
                    f"{self.kind} {name!r} is already registered (by {self._entries[name].origin}); "
                    "pass replace=True to override it"
                )
            if isinstance(obj, str):
                self._entries[name] = _Entry(name, obj, None, origin, False)
            else:
                self._entries[name] = _Entry(name, None, self._checked(name, obj, origin), origin, True)
            self._problems.pop(name, None)

    def unregister(self, name: str) -> None:
        """Remove ``name`` (a no-op when absent): for tests and notebooks."""
        with self._lock:
            self._entries.pop(name, None)
            self._problems.pop(name, None)

    def refresh(self) -> None:
        """Read the entry points again (after ``sys.path`` changed); ``register()`` entries are kept."""
        with self._lock:
            kept = {n: e for n, e in self._entries.items() if e.origin == "register()"}
            self._entries, self._problems, self._discovered = {}, {}, False
            self._discover()
            self._entries.update(kept)

    def _discover(self) -> None:
        if self._discovered:
            return
        self._discovered = True
        builtin: list[tuple[str, str, str]] = []
        others: list[tuple[str, str, str]] = []
        for ep in _entry_points(self.group):
            dist = ep.dist.name if ep.dist is not None else "an unnamed distribution"
            (builtin if dist == BUILTIN_DISTRIBUTION else others).append((ep.name, ep.value, dist))
        # built-ins first, so that a plug-in can never shadow one; the later duplicate is the problem
        for name, value, dist in builtin + others:
            origin = f"{dist} (entry point {self.group})"
            if name in self._entries:
                if self._entries[name].origin != origin:  # the same distribution seen twice on sys.path is harmless
                    self._problems[name] = (
                        f"{self.kind} plug-in {name!r} from {dist} is not used: the name is already registered by "
                        f"{self._entries[name].origin}"
                    )
                continue
            self._entries[name] = _Entry(name, value, None, origin, False)

    # -- reading ---------------------------------------------------------------------------------------------------
    def __contains__(self, name: object) -> bool:
        with self._lock:
            self._discover()
            return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self.names())

    def names(self) -> list[str]:
        """Every registered name: built-ins first (in the order of the installed entry points, which setuptools writes
        sorted by name), then plug-ins and ``register()``."""
        with self._lock:
            self._discover()
            return list(self._entries)

    def origin(self, name: str) -> str:
        """Who registered ``name``: ``"fsa2rnn (entry point …)"``, another distribution, or ``"register()"``."""
        return self._entry(name).origin

    def is_builtin(self, name: str) -> bool:
        return self._entry(name).origin.startswith(BUILTIN_DISTRIBUTION + " ")

    def problems(self) -> list[str]:
        """One line per plug-in that cannot be used (duplicate names; entries that failed to load when asked for)."""
        with self._lock:
            self._discover()
            return list(self._problems.values())

    def ref(self, name: str) -> str | None:
        """The ``"module:attr"`` reference of ``name`` (None for an object registered directly)."""
        entry = self._entry(name)
        return entry.ref

    def __getitem__(self, name: str) -> T:
        return self.get(name)

    def get(self, name: str) -> T:
        """The entry called ``name``, imported and checked on first use; an unknown name raises the registry's
        ``unknown`` error with the names to choose from and the closest ones; a broken plug-in raises
        :class:`PluginError` naming it."""
        entry = self._entry(name)
        if not entry.loaded:
            with self._lock:
                if not entry.loaded:
                    try:
                        obj = resolve_ref(entry.ref or "", what=f"{self.kind} plug-in {name!r} ({entry.origin})")
                        entry.obj = self._checked(name, obj, entry.origin)
                    except PluginError as exc:
                        self._problems[name] = str(exc)
                        raise
                    entry.loaded = True
        return entry.obj

    def _entry(self, name: str) -> _Entry:
        with self._lock:
            self._discover()
            if name not in self._entries:
                message = unknown_name_message(self.kind, name, self._entries)
                if not any(e.origin.startswith(BUILTIN_DISTRIBUTION + " ") for e in self._entries.values()):
                    message += f"; fsa2rnn's own {self.group} entry points were not found: is fsa2rnn installed?"
                raise self._unknown(message)
            return self._entries[name]

    def _checked(self, name: str, obj: Any, origin: str) -> Any:
        if self._check is None:
            return obj
        try:
            checked = self._check(name, obj)
        except PluginError as exc:
            raise PluginError(f"{self.kind} plug-in {name!r} ({origin}): {exc}") from None
        return obj if checked is None else checked


def unknown_name_message(kind: str, name: object, choices: Any) -> str:
    """``unknown KIND 'x' (choose from a, b, c; did you mean 'y'?)``: the one wording of an unknown name."""
    names = [str(c) for c in choices]
    return f"unknown {kind} {name!r} (choose from {', '.join(names)}{did_you_mean(name, names)})"


def did_you_mean(name: object, choices: Any) -> str:
    """``; did you mean 'y'?`` for the names of ``choices`` close to ``name`` (difflib), else ``""``."""
    close = difflib.get_close_matches(str(name), [str(c) for c in choices], n=2, cutoff=0.6)
    return f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


_EP_CACHE: dict[tuple[str, ...], list[importlib.metadata.EntryPoint]] = {}


def _entry_points(group: str) -> list[importlib.metadata.EntryPoint]:
    """The entry points of ``group`` on the current ``sys.path`` (read again when ``sys.path`` changes)."""
    key = (group, *sys.path)
    if key not in _EP_CACHE:
        _EP_CACHE[key] = list(importlib.metadata.entry_points(group=group))
    return _EP_CACHE[key]


__all__ = ["BUILTIN_DISTRIBUTION", "EXTRAS", "Registry", "did_you_mean", "resolve_ref", "unknown_name_message"]
