"""Automata and their algebra: the Automaton core, spec strings and builtins, transition monoids, holonomy.

Public API (DESIGN.md): ``Automaton``, ``resolve_spec``, ``TransitionMonoid``, ``holonomy_decomposition``.
Names are imported lazily so that the core stays light.
"""

from __future__ import annotations

from typing import Any

from .automaton import Automaton
from .errors import (
    ConstructionError,
    FsaError,
    LimitExceededError,
    MissingTransitionError,
    ModelFileError,
    NotAGroupError,
    SpecError,
    UnknownBuiltinError,
    UnknownStateError,
    UnknownSymbolError,
)
from .library import resolve_spec

__all__ = [
    "Automaton",
    "resolve_spec",
    "TransitionMonoid",
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
]

_LAZY = {
    "TransitionMonoid": ("monoid", "TransitionMonoid"),
    "holonomy_decomposition": ("holonomy", "holonomy_decomposition"),
    "Cascade": ("cascade", "Cascade"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f".{module}", __name__), attr)
    raise AttributeError(name)
