"""Lazy package attributes (PEP 562), the one mechanism of the package: a public name imports its submodule on first
use, keeping imports light (``fsa2rnn.nn`` without torch until a torch name is asked for, a Triton kernel without
triton). tests/test_layering.py reads these tables, so a lazy name counts as an import of its submodule."""

from __future__ import annotations

import importlib
from collections.abc import Callable
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
