"""torch: the executors of compiled models (nn/compiled) and the trainable sequence layers (nn/layers, model.py).

:func:`load_model` builds a ``torch.nn.Module`` from a model file or a :class:`CompiledModel`; the module has
``predict_states(symbol_ids, lengths=None)`` and ``predict_accept`` (nn/compiled). ``SequenceModel.from_compiled``
converts a compiled model into trainable layers (nn/from_compiled.py).

The names are loaded on first use, so that the torch-free modules of this package (limits.py, the option limits
every command checks before any work; train/runfiles.py) import without torch.
"""

from __future__ import annotations

from ..compiler.model import CompiledModel
from ..fsa.lazy import lazy_getattr

_NAMES = {
    "load_model": ("compiled", "load_model"),
    "run_options": ("compiled", "run_options"),
    "SequenceModel": ("model", "SequenceModel"),
    "ModelConfig": ("model", "ModelConfig"),
    "WRAPPERS": ("wrapper", "WRAPPERS"),
    "accuracy_at_lengths": ("metrics", "accuracy_at_lengths"),
    "failing_length": ("lmax", "failing_length"),
}
__getattr__ = lazy_getattr(__name__, _NAMES)
__all__ = ["CompiledModel", *sorted(_NAMES)]
