"""Training and evaluation of SequenceModels on tasks (``fsa2rnn train``, ``fsa2rnn eval``).

- config.py: :class:`TrainConfig` (a run's settings, RUN/config.json), the model it builds, and reading a run back
  (:func:`load_run`);
- trainer.py: :func:`train` — AdamW, cosine schedule, clipping, masked loss, checkpoints, resume, early stop;
- distributed.py: data parallel under torchrun (``torchrun --nproc-per-node N -m fsa2rnn.cli.train ARGS``);
- run_eval.py: what a run records in eval.json and what ``fsa2rnn eval`` prints; trained_exact.py: whether a
  trained one-layer NFSM's tables realize its task's automaton (the ``exact`` entry of eval.json);
- runfiles.py: the run directory's files and seed streams (a leaf module, torch-free);
- checkpoint.py, plots.py, presets.py and run.py (presets filled in, run directories, the seeds' summary).

The metrics (accuracy against length, the range score, L_max on a task, regression scores) are the one module
:mod:`fsa2rnn.nn.metrics`; the L_max search itself lives in :func:`fsa2rnn.nn.lmax.failing_length`; the
trained-NFSM exact-table check in :func:`~fsa2rnn.nn.train.trained_exact.nfsm_tables_exact` (all exported here).

Names are loaded on first use (fsa2rnn.fsa.lazy), so that importing the package never imports torch.
"""

from __future__ import annotations

from ...fsa.lazy import lazy_getattr

__getattr__ = lazy_getattr(
    __name__,
    {
        "TrainConfig": ("config", "TrainConfig"),
        "load_run": ("config", "load_run"),
        "model_config": ("config", "model_config"),
        "read_run_record": ("config", "read_run_record"),
        "train": ("trainer", "train"),
        "PRESETS": ("presets", "PRESETS"),
        "get_preset": ("presets", "get_preset"),
        "stream_seed": ("runfiles", "stream_seed"),
        "evaluate_run": ("run_eval", "evaluate_run"),
        "evaluate_run_model": ("run_eval", "evaluate_run_model"),
        "nfsm_tables_exact": ("trained_exact", "nfsm_tables_exact"),
        "accuracy_at_lengths": (".metrics", "accuracy_at_lengths"),
        "failing_length_of": (".metrics", "failing_length_of"),
        "range_accuracy": (".metrics", "range_accuracy"),
        "regression_scores": (".metrics", "regression_scores"),
        "preset_config": ("run", "preset_config"),
        "init_architecture": ("init_from", "init_architecture"),
        "init_model_config": ("init_from", "init_model_config"),
        "load_init": ("init_from", "load_init"),
    },
)

__all__ = [
    "TrainConfig",
    "load_run",
    "model_config",
    "read_run_record",
    "train",
    "PRESETS",
    "get_preset",
    "stream_seed",
    "evaluate_run",
    "evaluate_run_model",
    "nfsm_tables_exact",
    "accuracy_at_lengths",
    "failing_length_of",
    "range_accuracy",
    "regression_scores",
    "preset_config",
    "init_architecture",
    "init_model_config",
    "load_init",
]
