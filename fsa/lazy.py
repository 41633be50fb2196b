"""Lazy package attributes (PEP 562): a public name imports its submodule on first use, keeping imports light."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, names: dict[str, tuple[str, str]]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that resolves ``name`` to ``names[name] = (submodule, attribute)``."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module, attr = names[name]
        return getattr(importlib.import_module(f".{module}", package), attr)

    return __getattr__
