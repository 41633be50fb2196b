"""Automata and their algebra: the Automaton core, spec strings and builtins, transition monoids, holonomy.

Public API (docs/architecture.md): ``Automaton``, ``resolve_spec``, ``TransitionMonoid``, ``green_classes``,
``analyze`` (what ``fsa2rnn analyze --json`` prints), ``holonomy_decomposition``.
Names are imported lazily so that the core stays light.
"""

from __future__ import annotations

from .automaton import Automaton
from .errors import (
    ConstructionError,
    FsaError,
    LimitExceededError,
    MissingTransitionError,
    ModelFileError,
    NotAGroupError,
    OutputFileError,
    SpecError,
    UnknownBuiltinError,
    UnknownStateError,
    UnknownSymbolError,
)
from .lazy import lazy_getattr
from .library import resolve_spec

__all__ = [
    "Automaton",
    "resolve_spec",
    "TransitionMonoid",
    "green_classes",
    "analyze",
    "holonomy_decomposition",
    "Cascade",
    "FsaError",
    "SpecError",
    "UnknownSymbolError",
    "UnknownStateError",
    "MissingTransitionError",
    "UnknownBuiltinError",
    "LimitExceededError",
    "NotAGroupError",
    "ConstructionError",
    "ModelFileError",
    "OutputFileError",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "TransitionMonoid": ("monoid", "TransitionMonoid"),
        "green_classes": ("dclasses", "green_classes"),
        "analyze": ("analysis", "analyze"),
        "holonomy_decomposition": ("holonomy", "holonomy_decomposition"),
        "Cascade": ("cascade", "Cascade"),
    },
)
