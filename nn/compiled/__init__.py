"""The torch executors of compiled models: frozen weights read from a :class:`~fsa2rnn.compiler.program.Program`,
symbol ids in, ``predict_states`` / ``predict_accept`` out, and the recurrent form (initial state, one step, readout)
that the steppers of fsa2rnn.realize perturb. These modules run a compiled network; they are not trainable layers
(those are nn/layers, and ``SequenceModel.from_compiled`` converts a compiled model into them).

:func:`load_model` builds the module of a model file or a CompiledModel. One row of :data:`BUILDERS` per target;
:func:`register_builder` adds one. :data:`RUN_SCAN` is the scan policy of ``fsa2rnn run``, ``verify``, ``compare``
and the probes: :func:`run_options` gives the keyword arguments that apply it to a module.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.fsa.errors import ModelFileError

from .affine_model import AffineModel, build_affine
from .lrnn_model import LinearRNNModel, build_linear_rnn
from .nfsm_model import NFSMModel, build_nfsm
from .pdssm_model import PDSSMModel, build_pdssm

#: target → builder of its torch module (one row per target)
BUILDERS: dict[str, Callable[[CompiledModel], Any]] = {
    "householder": build_linear_rnn,
    "diagonal": build_linear_rnn,
    "nfsm": build_nfsm,
    "affine": build_affine,
    "pdssm": build_pdssm,
}

#: the scan that `fsa2rnn run`, `verify`, `compare` and the probes run linear-RNN models with: the chunked scans of
#: nn/ops/lrnn_scan (``verify`` reports it; rotation and complex diagonal layers round differently from "sequential")
RUN_SCAN = "parallel"


def run_options(module: Any, mode: str = "fused") -> dict[str, str]:
    """The keyword arguments of ``predict_states`` that run ``module`` under the scan policy: RUN_SCAN for the
    fused transitions; ``mode="factors"`` (Householder factor by factor, ``verify --mode factors``) is the
    sequential recurrence by definition. None for targets without a choice of scan."""
    if not isinstance(module, LinearRNNModel):
        return {}
    return {"scan": RUN_SCAN if mode == "fused" else "sequential"}


def register_builder(target: str) -> Callable[[Callable[[CompiledModel], Any]], Callable[[CompiledModel], Any]]:
    """Decorator: register ``builder(model: CompiledModel) -> nn.Module`` for a target."""

    def deco(fn: Callable[[CompiledModel], Any]) -> Callable[[CompiledModel], Any]:
        BUILDERS[target] = fn
        return fn

    return deco


def load_model(source: str | Path | CompiledModel) -> Any:
    """Build the torch module for a model file or CompiledModel (never unpickles anything).

    A file must pass its integrity check (``CompiledModel.load``); a CompiledModel must match its hash if it has one
    (compilers seal what they return; call ``seal()`` after editing a model in Python)."""
    model = source if isinstance(source, CompiledModel) else CompiledModel.load(source)
    model.check_integrity()
    if model.target not in BUILDERS:
        raise ModelFileError(f"unknown model target {model.target!r}")
    return BUILDERS[model.target](model)


__all__ = [
    "BUILDERS",
    "RUN_SCAN",
    "AffineModel",
    "LinearRNNModel",
    "NFSMModel",
    "PDSSMModel",
    "load_model",
    "register_builder",
    "run_options",
]
