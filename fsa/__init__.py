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
from .lazy import exports_win, lazy_getattr
from .library import resolve_spec

__all__ = [
    "Automaton",
    "resolve_spec",
    "TransitionMonoid",
    "green_classes",
    "analyze",
    "holonomy_decomposition",
    "Cascade",
    "classify",
    "definite_degree",
    "realizability",
    "group_cascade",
    "word_problem",
    "transformation_automaton",
    "to_aalpy_dfa",
    "from_aalpy_dfa",
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
        "classify": ("classify", "classify"),
        "definite_degree": ("classify", "definite_degree"),
        "realizability": ("realizability", "realizability"),
        "group_cascade": ("group_series", "group_cascade"),
        "word_problem": ("library.word_problems", "word_problem"),
        "transformation_automaton": ("library.word_problems", "transformation_automaton"),
        "to_aalpy_dfa": ("aalpy_interop", "to_aalpy_dfa"),
        "from_aalpy_dfa": ("aalpy_interop", "from_aalpy_dfa"),
    },
)
exports_win(__name__, ("classify", "realizability"))
