"""Lazy package attributes (PEP 562), the one mechanism of the package: a public name imports its submodule on first
use, keeping imports light (``fsa2rnn.nn`` without torch until a torch name is asked for, a Triton kernel without
triton). tests/contracts/test_layering.py reads these tables, so a lazy name counts as an import of its submodule."""

from __future__ import annotations

import importlib
import sys
import types
from collections.abc import Callable, Iterable
from typing import Any


def lazy_getattr(package: str, names: dict[str, tuple[str, str]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that resolves ``name`` to ``names[name] = (module, attribute)``;
    ``module`` is relative to ``package`` (``"config"``; ``".metrics"`` for a module of the parent package)."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = names[name]
        return getattr(importlib.import_module(f".{module}", package), attr)

    return __getattr__


class _Package(types.ModuleType):
    """A package module whose exported names keep their meaning when a submodule of the same name is imported."""

    _exported: frozenset[str] = frozenset()

    def __setattr__(self, name: str, value: Any) -> None:
        # The import system binds ``package.name`` to a submodule after loading it; for an exported name (say
        # ``fsa2rnn.realize.extract``, a function and a module) the export wins, and the module stays reachable
        # through ``sys.modules`` and ``from .extract import …``.
        if name in self._exported and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


def exports_win(package: str, names: Iterable[str]) -> None:
    """Make ``from package import name`` give the exported object, never the submodule that shares its name."""
    module = sys.modules[package]
    module.__class__ = type("Package", (_Package,), {"_exported": frozenset(names)})
    for name in module._exported:  # a submodule imported before this call already holds the name
        if isinstance(module.__dict__.get(name), types.ModuleType):
            del module.__dict__[name]
