"""``fsa2rnn reproduce NAME``: a paper's table regenerated from ordinary training runs (docs/reproductions.md).

A reproduction is a :class:`~.base.Reproduction` subclass registered under its name in :data:`REPRODUCTIONS`, the
registry of tables (fsa2rnn.fsa.registry): fsa2rnn's own are its ``fsa2rnn.reproductions`` entry points
(pyproject.toml), an installed package declares its own there, and a script or notebook calls
:func:`register_reproduction`. The runner (runner.py) does the rest for every reproduction: it expands the (task,
model, arm, seed) grid with :meth:`Reproduction.jobs`, trains each job as an ordinary run under ``DIR/runs/``
(resumable: a finished run is read back, not re-run), and writes ``DIR/table.json``, ``DIR/table.md`` and
``DIR/plot.png`` from :meth:`Reproduction.cell` (the aggregate the paper reports per cell) beside the paper's
values (:attr:`Reproduction.paper`).
"""

from __future__ import annotations

from typing import Any

from ....fsa.errors import PluginError, SpecError
from ....fsa.lazy import lazy_getattr
from ....fsa.registry import Registry
from .base import Job, Reproduction

#: the methods a reproduction must define (the others have defaults in Reproduction)
REQUIRED = ("jobs", "result", "cell")


def _check_reproduction(name: str, obj: Any) -> None:
    if not (isinstance(obj, type) and issubclass(obj, Reproduction)):
        raise PluginError(f"{obj!r} is not a subclass of fsa2rnn.nn.train.reproduce.Reproduction")
    missing = [m for m in REQUIRED if getattr(obj, m) is getattr(Reproduction, m)]
    if missing:
        raise PluginError(f"{obj.__name__} does not define {', '.join(missing)}")


#: name → Reproduction subclass
REPRODUCTIONS: Registry[type[Reproduction]] = Registry(
    "fsa2rnn.reproductions", "reproduction", check=_check_reproduction, unknown=SpecError
)


def register_reproduction(name: str, reproduction: type[Reproduction] | str, *, replace: bool = False) -> None:
    """Register a Reproduction subclass (or a ``"module:Class"`` reference) as table ``name`` for ``fsa2rnn
    reproduce NAME`` in this process; an installed package declares it in its ``fsa2rnn.reproductions`` entry
    points instead. A taken name raises PluginError unless ``replace``."""
    REPRODUCTIONS.register(name, reproduction, replace=replace)


def get_reproduction(name: str) -> Reproduction:
    """The table ``name``; SpecError for an unknown name, PluginError for a broken plug-in (each naming it)."""
    return REPRODUCTIONS.get(name)()


#: the runner (training, the table) is loaded on first use: the registry stays light for `fsa2rnn reproduce --help`
__getattr__ = lazy_getattr(__name__, {"reproduce": ("runner", "reproduce"), "prepare": ("runner", "prepare")})

__all__ = ["REPRODUCTIONS", "Job", "Reproduction", "get_reproduction", "prepare", "register_reproduction", "reproduce"]
