"""Compilers: Automaton | Cascade → exact weights, as a torch-free :class:`CompiledModel`.

One ``compile_*`` function per target shows the whole path (DESIGN.md):
``compile_householder`` (Grazzi et al.), ``compile_diagonal``, ``compile_nfsm`` (Brandoit et al.).
"""

from __future__ import annotations

from typing import Any

from .model import MODEL_FORMAT, CompiledModel

__all__ = ["CompiledModel", "MODEL_FORMAT", "compile_householder", "compile_diagonal", "compile_nfsm"]

_LAZY = {
    "compile_householder": ("householder", "compile_householder"),
    "compile_diagonal": ("diagonal", "compile_diagonal"),
    "compile_nfsm": ("automaton_to_nfsm", "compile_nfsm"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(f".{module}", __name__), attr)
    raise AttributeError(name)
