"""Training and evaluation of SequenceModels on tasks (``fsa2rnn train``, ``fsa2rnn eval``).

- config.py: :class:`TrainConfig` (a run's settings, RUN/config.json) and the model it builds;
- trainer.py: :func:`train` — AdamW, cosine schedule, clipping, masked loss, checkpoints, resume, early stop;
- distributed.py: data parallel under torchrun (``torchrun --nproc-per-node N -m fsa2rnn.nn.train ARGS``);
- evaluation.py: what a run records in eval.json and what ``fsa2rnn eval`` prints;
- runfiles.py: the run directory's files, seed streams and :func:`load_run` (a leaf module, torch-free at import);
- checkpoint.py, plots.py, presets.py, args.py (the CLI's arguments) and run.py (seeds, presets, launching).

The metrics (accuracy against length, the range score, L_max on a task, regression scores) are the one module
:mod:`fsa2rnn.nn.metrics`; the L_max search itself lives in :func:`fsa2rnn.nn.evaluate.failing_length`; the
trained-NFSM exact-table check in :func:`fsa2rnn.realize.trained_exact.nfsm_tables_exact` (all re-exported here).

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
    "load_run": "runfiles",
    "read_run_record": "runfiles",
    "stream_seed": "runfiles",
    "evaluate_run": "evaluation",
    "evaluate_run_model": "evaluation",
    "accuracy_at_lengths": "fsa2rnn.nn.metrics",
    "failing_length_of": "fsa2rnn.nn.metrics",
    "range_accuracy": "fsa2rnn.nn.metrics",
    "regression_scores": "fsa2rnn.nn.metrics",
    "nfsm_tables_exact": "fsa2rnn.realize.trained_exact",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = _EXPORTS[name]
        return getattr(importlib.import_module(module if "." in module else f".{module}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(_EXPORTS)
