"""Training and evaluation of SequenceModels on tasks (``fsa2rnn train``, ``fsa2rnn eval``).

- config.py: :class:`TrainConfig` (a run's settings, RUN/config.json) and the model it builds;
- trainer.py: :func:`train` — AdamW, cosine schedule, clipping, masked loss, checkpoints, resume, early stop;
- distributed.py: data parallel under torchrun (``torchrun --nproc-per-node N -m fsa2rnn.nn.train ARGS``);
- evaluate.py: accuracy against length, the paper's range score, L_max, the NFSM's exact-table check;
- checkpoint.py, plots.py, presets.py, args.py (the CLI's arguments) and run.py (seeds, presets, launching).

Names are loaded on first use, so that importing the arguments (args.py) never imports torch.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "TrainConfig": "config",
    "model_config": "config",
    "train": "trainer",
    "PRESETS": "presets",
    "get_preset": "presets",
    "load_run": "evaluate",
    "evaluate_run": "evaluate",
    "accuracy_at_lengths": "evaluate",
    "failing_length_of": "evaluate",
    "nfsm_tables_exact": "evaluate",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(_EXPORTS)
