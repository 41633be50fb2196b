"""The torch executors of compiled models, one module per compile target (nn/compiled/<target>.py: frozen weights
read from the target's program, symbol ids in, ``predict_states`` / ``predict_accept`` out, and the recurrent form —
initial state, one step, readout — that the steppers of fsa2rnn.realize perturb; nn/compiled/base.py holds what
they share). These modules run a compiled network; they are not trainable layers (those are nn/layers, and
``SequenceModel.from_compiled`` converts a compiled model into them).

:func:`load_model` builds the module of a model file or a CompiledModel through the target registry
(compiler/registry.py: each target names its ``torch_module``). :data:`RUN_SCAN` is the scan policy of
``fsa2rnn run``, ``verify``, ``compare`` and the probes: :func:`run_options` gives the keyword arguments that apply
it to a module.
"""

from __future__ import annotations

from .affine import AffineModel
from .base import RUN_SCAN, CodeBlock, CompiledModule, load_model, run_options
from .lrnn import LinearRNNModel
from .nfsm import NFSMModel
from .pdssm import PDSSMModel

__all__ = [
    "RUN_SCAN",
    "AffineModel",
    "CodeBlock",
    "CompiledModule",
    "LinearRNNModel",
    "NFSMModel",
    "PDSSMModel",
    "load_model",
    "run_options",
]
