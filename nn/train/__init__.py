"""Training and evaluation of SequenceModels on tasks (``fsa2rnn train``, ``fsa2rnn eval``).

- config.py: :class:`TrainConfig` (a run's settings, RUN/config.json), the model it builds, and reading a run back
  (:func:`load_run`);
- trainer.py: :func:`train` — AdamW, cosine schedule, clipping, masked loss, checkpoints, resume, early stop;
- distributed.py: data parallel under torchrun (``torchrun --nproc-per-node N -m fsa2rnn.nn.train ARGS``);
- run_eval.py: what a run records in eval.json and what ``fsa2rnn eval`` prints; trained_exact.py: whether a
  trained one-layer NFSM's tables realize its task's automaton (the ``exact`` entry of eval.json);
- runfiles.py: the run directory's files and seed streams (a leaf module, torch-free);
- checkpoint.py, plots.py, presets.py and run.py (presets filled in, run directories, the seeds' summary).

The metrics (accuracy against length, the range score, L_max on a task, regression scores) are the one module
:mod:`fsa2rnn.nn.metrics`; the L_max search itself lives in :func:`fsa2rnn.nn.lmax.failing_length`; the
trained-NFSM exact-table check in :func:`~fsa2rnn.nn.train.trained_exact.nfsm_tables_exact` (all exported here).

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
    "load_run": "config",
    "read_run_record": "config",
    "stream_seed": "runfiles",
    "evaluate_run": "run_eval",
    "evaluate_run_model": "run_eval",
    "accuracy_at_lengths": "fsa2rnn.nn.metrics",
    "failing_length_of": "fsa2rnn.nn.metrics",
    "range_accuracy": "fsa2rnn.nn.metrics",
    "regression_scores": "fsa2rnn.nn.metrics",
    "nfsm_tables_exact": "trained_exact",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        module = _EXPORTS[name]
        return getattr(importlib.import_module(module if "." in module else f".{module}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = list(_EXPORTS)
