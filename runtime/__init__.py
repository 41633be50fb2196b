"""Torch-free executors of compiled models: the network of every target run in numpy at float64.

:func:`load_executor` builds one from a model file or a :class:`CompiledModel` (checked against its integrity hash,
as ``nn.load_model`` does); its ``predict_states(ids)`` takes symbol ids (B, T) of words of one length and returns
the automaton state after each symbol, (B, T) int64 ((T,) for one word), −1 past a word's ``lengths`` or where the
model's state left its readout; ``predict_accept`` reads the accepting set. Bad ids raise SymbolIdError, as on
every executor (compiler/inputs.py). It computes what
the torch modules of fsa2rnn.nn compute at float64 — the stored fused transition matrices and offsets, the logits
and their argmax tables, the readouts — with the same chunked scans, and it starts in a fraction of a second
because it never imports torch: `fsa2rnn run` uses it at float64 (`--engine numpy`, the default there), the torch
modules for the other dtypes. tests/test_runtime.py checks every target against both the torch modules and the
automaton.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.fsa.errors import ModelFileError

from .affine import AffineExecutor
from .lrnn import LinearRNNExecutor
from .nfsm import NFSMExecutor
from .pdssm import PDSSMExecutor

EXECUTORS: dict[str, Any] = {
    "householder": LinearRNNExecutor,
    "diagonal": LinearRNNExecutor,
    "nfsm": NFSMExecutor,
    "affine": AffineExecutor,
    "pdssm": PDSSMExecutor,
}


def load_executor(
    source: str | Path | CompiledModel,
) -> LinearRNNExecutor | NFSMExecutor | AffineExecutor | PDSSMExecutor:
    """The numpy executor of a model file or CompiledModel (a file must pass ``CompiledModel.load``'s checks)."""
    model = source if isinstance(source, CompiledModel) else CompiledModel.load(source)
    model.check_integrity()
    if model.target not in EXECUTORS:
        raise ModelFileError(f"unknown model target {model.target!r}")
    return EXECUTORS[model.target](model)


__all__ = ["EXECUTORS", "load_executor", "AffineExecutor", "LinearRNNExecutor", "NFSMExecutor", "PDSSMExecutor"]
