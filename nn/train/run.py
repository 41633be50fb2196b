"""What ``fsa2rnn train`` does with its arguments (torch-free until training starts): fill in a preset, check the
run directory, plan one training per seed (or per rate and seed) and run them in turn, writing the seeds' summary.
The command itself — launching torchrun for ``--nproc N`` and printing the result — is fsa2rnn.cli.train."""

from __future__ import annotations

import json
import os
import shlex
import statistics
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from ...fsa import signals
from ...fsa.errors import RunsFailed, SpecError
from ...fsa.io import atomic_write_text, output_directory, staged_leftover
from ...fsa.lock import LOCK_NAME
from .. import limits
from ..plugins import check_ref, parse_args
from . import runfiles
from .launch import Launcher, Task, parse_launcher, run_tasks
from .lr_grid import grid_summary, parse_lr_grid
from .presets import get_preset, scaled_val_every
from .runfiles import RESUMABLE
from .runlock import check_run_free, run_lock

SUMMARY = "summary.json"
#: options that are not TrainConfig fields
_NOT_CONFIG = (
    "seeds", "resume", "out", "as_json", "quiet", "lr_grid", "jobs", "launcher", "launcher_args", "allow_changed_plugin"
)  # fmt: skip


def resolve(params: dict[str, Any]) -> tuple[dict[str, Any], list[int] | None]:
    """The TrainConfig fields (preset filled in under the user's flags) and the list of seeds (or None). Torch-free:
    every stated limit that the flags alone decide is checked here, before torch is imported."""
    given = {k: v for k, v in params.items() if v is not None and k not in _NOT_CONFIG}
    fields: dict[str, Any] = {}
    if given.get("preset"):
        preset = get_preset(given["preset"])
        fields.update(preset.settings(given.get("scale") or "paper", given.get("model"), given.get("task")))
    elif given.get("scale"):
        raise SpecError("--scale needs a --preset")
    every = None if params.get("resume") else scaled_val_every(fields, given)
    fields.update(given)
    if every is not None:
        fields["val_every"] = every
    if not fields.get("task") and not params.get("resume"):  # a resumed run's task is stored in it
        raise SpecError("give a TASK (see `fsa2rnn tasks`) or a --preset")
    if isinstance(fields.get("model_args"), str):
        fields["model_args"] = parse_args(fields["model_args"])
    if fields.get("model") and ":" in fields["model"]:
        check_ref(fields["model"])
    if isinstance(fields.get("eval_lengths"), str):
        fields["eval_lengths"] = limits.parse_lengths(fields["eval_lengths"], "--eval-lengths")
    seeds = None
    if params.get("seeds"):
        if params.get("seed") is not None:
            raise SpecError("give --seed or --seeds, not both")
        seeds = limits.parse_seeds(params["seeds"])
    fields["progress"] = not params.get("quiet")
    limits.check_train(fields)
    return fields, seeds


def preset_config(preset: str, scale: str = "paper", **flags: Any) -> Any:
    """The TrainConfig of a preset at a scale with some flags given (as ``fsa2rnn train --preset …`` builds it)."""
    from .config import TrainConfig

    fields, _ = resolve({"preset": preset, "scale": scale, **flags})
    return TrainConfig(**fields)


def check_out(raw: str, *, resume: bool, seeds: list[int] | None, rates: list[float] | None = None) -> Path:
    """RUN (``--out``) checked before any setup: not empty, not a file or under one, writable, and either new, empty,
    a training run (what ``--resume`` then continues) or a run that never reached a checkpoint (a new run replaces
    it; ``--resume`` refuses it). The temporary file of a run file's write that a killed run left behind counts as
    the run's (fsa/io.py ``staged_leftover``; the trainer removes it). A RUN that another process is writing is
    refused first, naming it (runlock.py)."""
    out = output_directory(raw)
    check_run_free(out)
    runs = run_dirs(out, seeds, rates)
    if out.is_dir() and not resume:
        ours = {LOCK_NAME, *runfiles.ALL_RUN_FILES} | (
            {SUMMARY} | {r.relative_to(out).parts[0] for r in runs} if seeds else set()
        )
        other = sorted(p.name for p in out.iterdir() if p.name not in ours and staged_leftover(p.name) not in ours)
        if other:
            raise SpecError(f"--out {raw!r} holds other files ({', '.join(other[:3])}{', …' * (len(other) > 3)}), "
                            "not a training run: choose a new or empty directory")  # fmt: skip
        for r in runs:
            if runfiles.has_checkpoint(r):
                raise SpecError(f"{str(r)!r} holds a training run; pass --resume to continue it")
    if resume and not any(runfiles.has_checkpoint(r) for r in runs):
        what = "does not exist" if not out.exists() else "holds no checkpoint (the run never reached one)"
        raise SpecError(f"--resume: {raw!r} {what}; start the run without --resume")
    for r in runs if resume else ():  # a damaged record is refused before torch is imported
        if runfiles.has_checkpoint(r):
            runfiles.read_metrics(r / runfiles.METRICS)
    return out


def run_dirs(out: Path, seeds: list[int] | None, rates: list[float] | None = None) -> list[Path]:
    """The run directories of one command: RUN, RUN/seed-S, or RUN/lr-RATE/seed-S under --lr-grid."""
    if rates:
        return [out / f"lr-{lr:g}" / f"seed-{s}" for lr in rates for s in seeds or []]
    return [out / f"seed-{s}" for s in seeds] if seeds else [out]


def resumed_fields(fields: dict[str, Any], given: dict[str, Any], run: Path) -> dict[str, Any]:
    """The fields of a run being resumed: its stored settings; a flag given now that disagrees with them is refused,
    naming it (``device``, ``nproc`` and the progress bar may change)."""
    stored = runfiles.read_run_fields(run)
    for name, value in given.items():
        if name in RESUMABLE or name in _NOT_CONFIG or name not in stored:
            continue
        want = fields.get(name, value)
        if stored[name] != want:
            flag = "TASK" if name == "task" else "--" + name.replace("_", "-")
            raise SpecError(f"--resume: {str(run)!r} was started with {flag} {_flag_value(stored[name])}, "
                            f"not {_flag_value(want)}")  # fmt: skip
    return {**stored, **{k: fields[k] for k in RESUMABLE if k in fields}}


def _flag_value(v: Any) -> str:
    return ",".join(str(x) for x in v) if isinstance(v, list) else str(v)


@dataclass
class Plan:
    """One ``fsa2rnn train`` command, checked: the runs it makes (TrainConfig, directory), whether they resume, and
    how it is launched (``nproc`` processes, or already under torchrun)."""

    fields: dict[str, Any]
    seeds: list[int] | None
    rates: list[float] | None
    out: Path
    resume: bool
    given: set[str]
    configs: list[tuple[Any, Path]]
    nproc: int
    under_torchrun: bool
    launcher: Launcher = field(default_factory=Launcher)
    #: the plug-in import paths the command line named (``--model``), and ``--allow-changed-plugin``
    plugins: tuple[str, ...] = ()
    allow_changed: bool = False

    @property
    def launches_torchrun(self) -> bool:
        """Whether this process starts torchrun (``--nproc N`` > 1 given outside torchrun) instead of training."""
        return self.nproc > 1 and not self.under_torchrun

    def resume_command(self, params: dict[str, Any]) -> str:
        """The command that continues an interrupted run of this plan."""
        return (
            f"fsa2rnn train --out {shlex.quote(str(self.out))} --resume"
            + (f" --seeds {params['seeds']}" if self.seeds else "")
            + (f" --lr-grid {params['lr_grid']}" if self.rates else "")
            + (f" --nproc {self.configs[0][0].nproc}" if self.configs[0][0].nproc > 1 else "")
            + (f" --jobs {self.launcher.jobs}" if self.launcher.jobs else "")
            + (f" --launcher {self.launcher.kind}" if self.launcher.kind != "local" else "")
            + (f" --launcher-args {shlex.quote(params['launcher_args'])}" if params.get("launcher_args") else "")
            + (f" --model {shlex.quote(self.plugins[0])}" if self.plugins and ":" in self.plugins[0] else "")
        )


def plan(params: dict[str, Any]) -> Plan:
    """The runs of ``fsa2rnn train``'s parameters (click's names), every bad input refused before any run starts."""
    fields, seeds = resolve(params)
    resume = bool(params.get("resume"))
    rates = _lr_grid(params, seeds)
    launcher = parse_launcher(params.get("launcher"), params.get("jobs"), params.get("launcher_args"))
    if (fields.get("nproc") or 1) > 1 and not launcher.sequential:
        raise SpecError("give --nproc (one run on N processes) or --jobs/--launcher (runs side by side), not both")
    limits.check_run_count(len(seeds or [None]), len(rates or [None]))
    out = check_out(str(params["out"]), resume=resume, seeds=seeds, rates=rates)
    given = {k for k, v in params.items() if v is not None and k not in _NOT_CONFIG}
    if rates:  # the paper's protocol (lr_grid.py): every rate × every seed, under RUN/lr-RATE/seed-S
        runs = [({"lr": lr, "seed": s}, out / f"lr-{lr:g}" / f"seed-{s}") for lr in rates for s in seeds or []]
    else:
        runs = [({"seed": s}, out / f"seed-{s}") for s in seeds] if seeds else [({}, out)]
    per_run = []
    for extra, path in runs:
        f = {**fields, **extra}
        if resume and runfiles.has_checkpoint(path):
            f = resumed_fields(f, {k: f[k] for k in given | set(extra) if k in f}, path)
        per_run.append((f, path))

    signals.at("imports")
    from .config import TrainConfig
    from .distributed import launched_by_torchrun
    from .trainer import Prepared

    under_torchrun = launched_by_torchrun()
    configs = []
    for f, path in per_run:
        if under_torchrun:
            f = {**f, "nproc": int(os.environ["WORLD_SIZE"])}
        configs.append((TrainConfig(**f), path))
    plugins = (params["model"],) if params.get("model") else ()
    allow_changed = bool(params.get("allow_changed_plugin"))
    for cfg, path in configs:  # every bad input is refused before any run starts
        Prepared(cfg, path, resume=resume and runfiles.has_checkpoint(path), given=given, plugins=plugins,
                 allow_changed=allow_changed)  # fmt: skip
    return Plan(fields, seeds, rates, out, resume, given, configs, fields.get("nproc") or 1, under_torchrun, launcher,
                plugins, allow_changed)  # fmt: skip


def execute(plan: Plan) -> dict[str, Any] | None:
    """Train every run of ``plan`` in turn; with several seeds (or rates) write RUN/summary.json. The result of the
    one run, or the seeds' (rates') summary; None on the ranks other than 0. Ctrl-C raises
    :class:`~fsa2rnn.fsa.errors.Interrupted` after the run under way has checkpointed. RUN's lock is held throughout
    (a second process is refused, runlock.py)."""
    with run_lock(plan.out):
        return _execute(plan)


def _execute(plan: Plan) -> dict[str, Any] | None:
    from .trainer import train

    if plan.launcher.sequential or len(plan.configs) == 1:
        results = [
            train(cfg, path, resume=plan.resume and runfiles.has_checkpoint(path), given=plan.given,
                  plugins=plan.plugins, allow_changed=plan.allow_changed)  # fmt: skip
            for cfg, path in plan.configs
        ]
    else:
        results = _launched(plan, train)
    if results[0] is None:  # not rank 0
        return None
    if plan.rates:
        n = len(plan.seeds or [])
        grid = [results[i * n : (i + 1) * n] for i in range(len(plan.rates))]
        summary = grid_summary(plan.rates, grid, plan.fields["task"], plan.fields.get("model") or "deltanet")
    elif plan.seeds:
        summary = summarize(results, plan.configs[0][0])
    else:
        return results[0]
    plan.out.mkdir(parents=True, exist_ok=True)
    atomic_write_text(plan.out / SUMMARY, json.dumps(summary, indent=1))
    return summary


def _launched(plan: Plan, train: Any) -> list[dict[str, Any]]:
    """The runs of ``plan`` side by side on its launcher (``--jobs N``, ``--launcher``; nn/train/launch), their
    results in order; RunsFailed (after every run has ended) when some failed."""
    tasks = [
        Task(str(path), partial(train, resume=plan.resume and runfiles.has_checkpoint(path), given=plan.given,
                                plugins=plan.plugins, allow_changed=plan.allow_changed),
             (replace(cfg, device=plan.launcher.device) if plan.launcher.device else cfg, path))
        for cfg, path in plan.configs
    ]  # fmt: skip
    outcomes = run_tasks(plan.launcher, tasks, desc="train", progress=plan.fields.get("progress", True),
                         folder=plan.out)  # fmt: skip
    failed = [o.key for o in outcomes if not o.ok]
    if failed:
        raise RunsFailed(failed, len(outcomes))
    return [o.value for o in outcomes]


def _lr_grid(params: dict[str, Any], seeds: list[int] | None) -> list[float] | None:
    """The rates of ``--lr-grid`` (None without it); it needs ``--seeds`` and excludes ``--lr``."""
    if not params.get("lr_grid"):
        return None
    rates = parse_lr_grid(params["lr_grid"])
    if params.get("lr") is not None:
        raise SpecError("give --lr or --lr-grid, not both")
    if not seeds:
        raise SpecError("--lr-grid needs --seeds (the rate is chosen by the median over the seeds)")
    return rates


def learned(result: dict[str, Any], threshold: float) -> bool:
    """A seed learned the task: no failure at the training length (L_max beyond it, or none up to the cap)."""
    if result.get("l_max") is not None or result.get("l_max_capped"):
        return result.get("l_max") is None or result["l_max"] > result["train_lengths"][1]
    seq = result["eval"].get("sequence_accuracy") or [0.0]
    return seq[0] >= threshold


def summarize(results: list[dict[str, Any]], cfg: Any) -> dict[str, Any]:
    """Every seed's figures and the median L_max over the seeds that learned (a capped seed counts as the cap)."""
    keys = ("seed", "run", "l_max", "l_max_capped", "steps", "final_loss", "eval", "range", "exact")
    rows = [{"learned": learned(r, cfg.threshold), **{k: r[k] for k in keys if k in r}} for r in results]
    ok = [r for r in rows if r["learned"]]
    values = sorted((cfg.cap if r["l_max"] is None else r["l_max"], r["l_max"] is None) for r in ok)
    median = statistics.median_low(values) if values else None
    return {
        "task": cfg.task,
        "model": cfg.model,
        "seeds": [r["seed"] for r in rows],
        "learned": len(ok),
        "median_l_max": None if median is None else median[0],
        "median_l_max_capped": None if median is None else median[1],
        "runs": rows,
    }
