"""The evaluation of a training run: what ``fsa2rnn train`` records in RUN/eval.json (:func:`evaluate_run_model`) and
what ``fsa2rnn eval RUN`` prints (:func:`evaluate_run`), from the metrics of metrics.py, the L_max search of
:func:`fsa2rnn.nn.lmax.failing_length` and, for a one-layer NFSM, the exact-table check of
:mod:`~fsa2rnn.nn.train.trained_exact`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...fsa import progress
from ..lmax import DEFAULT_CAP
from ..metrics import accuracy_at_lengths, default_lengths, failing_length_of, range_accuracy, regression_scores
from ..model import SequenceModel
from ..tasks import Task
from .config import load_run
from .trained_exact import nfsm_tables_exact


def evaluate_run_model(model: SequenceModel, task: Task, cfg: Any, train_lengths: tuple[int, int]) -> dict[str, Any]:
    """The evaluation a run records in eval.json, from the TrainConfig's evaluation settings (``eval_lengths``,
    ``eval_range``, ``samples``, ``lmax``, ``cap``, ``threshold``). Words are drawn with seed 0, the same for every
    training seed; under ``protocol`` brandoit the L_max words are seeded by the run's seed, and ``train_draw`` adds
    the accuracy at the training length on the task's training draw (the authors' judge of a run that learned)."""
    train_max = train_lengths[1]
    ev: dict[str, Any] = {"task": task.name, "chance": task.chance, "train_lengths": list(train_lengths)}
    if task.kind == "regression":
        lengths = cfg.eval_lengths or [train_max]
        ev["regression"] = [regression_scores(model, task, n, samples=cfg.samples) for n in lengths]
        ev["lengths"] = lengths
        ev["r2"] = [r["r2"] for r in ev["regression"]]
        return ev
    lengths = cfg.eval_lengths or default_lengths(train_max)
    ev.update(_accuracies(model, task, lengths, cfg.samples, cfg.progress))
    if cfg.eval_range:
        lo, hi = (int(v) for v in cfg.eval_range.split(".."))
        ev["range"] = range_accuracy(model, task, lo, hi, samples=cfg.samples)
    if cfg.lmax:
        seed = cfg.seed if cfg.protocol == "brandoit" else 0
        ev.update(_lmax(model, task, train_max, max(cfg.cap, train_max), cfg.samples, cfg.threshold, cfg.progress,
                        seed=seed, protocol=cfg.protocol))  # fmt: skip
        if cfg.protocol == "brandoit":  # the authors' sweep: whether a run learned, judged on its training draw
            drawn = accuracy_at_lengths(model, task, [train_max], samples=cfg.samples, seed=cfg.seed, train=True)
            if drawn["lengths"]:  # (empty where a Transformer's attention does not fit)
                keys = ("token_accuracy", "sequence_accuracy", "samples")
                ev["train_draw"] = {"length": train_max, **{k: drawn[k][0] for k in keys}}
        ev["l_max_search"] = {
            "protocol": cfg.protocol,
            "start": train_max,
            "cap": max(cfg.cap, train_max),
            "n_words": cfg.samples,
            "threshold": cfg.threshold,
        }
    if model.config.layer == "nfsm":
        ev["exact"] = nfsm_tables_exact(model, task)
    return ev


def evaluate_run(
    run: str | Path,
    *,
    lengths: list[int] | None = None,
    lmax: bool = False,
    cap: int = DEFAULT_CAP,
    samples: int = 512,
    threshold: float | None = None,
    protocol: str = "prefix",
    plugins: tuple[str, ...] = (),
    allow_changed: bool = False,
) -> dict[str, Any]:
    """``fsa2rnn eval RUN``: {lengths, token_accuracy, sequence_accuracy, scaled_accuracy, …, l_max, l_max_capped}.
    ``plugins``, ``allow_changed``: a run of a plug-in (config.py ``load_run``)."""
    model, task, cfg = load_run(run, plugins=plugins, allow_changed=allow_changed)
    if threshold is None:
        threshold = 0.9 if protocol == "brandoit" and model.config.layer != "nfsm" else 1.0
    train_max = cfg.train_lengths(task)[1]
    if task.kind == "regression":
        scores = [regression_scores(model, task, n, samples=samples) for n in (lengths or [train_max])]
        return {
            "lengths": [s["length"] for s in scores],
            "mse": [s["mse"] for s in scores],
            "r2": [s["r2"] for s in scores],
            "l_max": None,
            "l_max_capped": False,
        }
    lengths = lengths or cfg.eval_lengths or default_lengths(train_max)
    out = _accuracies(model, task, lengths, samples, True)
    if lmax:
        seed = cfg.seed if protocol == "brandoit" else 0
        out.update(_lmax(model, task, train_max, max(cap, train_max), samples, threshold, True, seed=seed,
                         protocol=protocol))  # fmt: skip
        out["l_max_protocol"] = protocol
    else:
        out.update({"l_max": None, "l_max_capped": False, "l_max_note": "not searched (pass --lmax)"})
    if model.config.layer == "nfsm":
        out["exact"] = nfsm_tables_exact(model, task)
    return out


def _accuracies(model: SequenceModel, task: Task, lengths: list[int], samples: int, show: bool) -> dict[str, Any]:
    """accuracy_at_lengths with a progress bar over the lengths (fsa2rnn.fsa.progress; off with --quiet)."""
    with progress.bar(len(lengths), "eval: lengths", unit="length", disable=not show or progress.quiet()) as bar:
        return accuracy_at_lengths(model, task, lengths, samples=samples, progress=bar)


def _lmax(
    model: SequenceModel,
    task: Task,
    start: int,
    cap: int,
    samples: int,
    threshold: float,
    show: bool,
    *,
    seed: int = 0,
    protocol: str = "prefix",
) -> dict[str, Any]:
    """failing_length_of with a progress bar over the symbols read (at most samples × cap)."""
    total = samples * cap
    with progress.bar(total, "L_max search", unit="sym", unit_scale=True, disable=not show or progress.quiet()) as bar:
        return failing_length_of(model, task, start=start, cap=cap, n_words=samples, threshold=threshold, seed=seed,
                                 protocol=protocol, progress=bar)  # fmt: skip
