"""torch layers that run compiled weights (and, in the next wave, learn them).

:func:`load_model` builds a ``torch.nn.Module`` from a model file or a :class:`CompiledModel`; the module has
``predict_states(symbol_ids[B, T], lengths=None) -> LongTensor[B, T]`` and, when the automaton has accepting
states, ``predict_accept``. Each target registers a builder with :func:`register_builder`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.fsa.errors import ModelFileError

_BUILDERS: dict[str, Callable[[CompiledModel], Any]] = {}
# target -> module that registers its builder on import
_BUILDER_MODULES = {
    "householder": "fsa2rnn.nn.lrnn_model",
    "diagonal": "fsa2rnn.nn.lrnn_model",
    "nfsm": "fsa2rnn.nn.nfsm_model",
    "affine": "fsa2rnn.nn.affine_model",
    "pdssm": "fsa2rnn.nn.pdssm_model",
}


def register_builder(target: str) -> Callable[[Callable[[CompiledModel], Any]], Callable[[CompiledModel], Any]]:
    """Decorator: register ``builder(model: CompiledModel) -> nn.Module`` for a target."""

    def deco(fn: Callable[[CompiledModel], Any]) -> Callable[[CompiledModel], Any]:
        _BUILDERS[target] = fn
        return fn

    return deco


def load_model(source: str | Path | CompiledModel) -> Any:
    """Build the torch module for a model file or CompiledModel (never unpickles anything).

    A file must pass its integrity check (``CompiledModel.load``); a CompiledModel must match its hash if it has one
    (compilers seal what they return; call ``seal()`` after editing a model in Python)."""
    if isinstance(source, CompiledModel):
        model = source
        model.check_integrity()
    else:
        model = CompiledModel.load(source)
    target = model.target
    if target not in _BUILDERS and target in _BUILDER_MODULES:
        importlib.import_module(_BUILDER_MODULES[target])
    if target not in _BUILDERS:
        raise ModelFileError(f"unknown model target {target!r}")
    return _BUILDERS[target](model)


__all__ = ["load_model", "register_builder", "CompiledModel"]
