"""The interface of a reproduction (one paper table) and of its jobs.

A subclass of :class:`Reproduction` states the table: its ``tasks``, ``models``, ``arms``, ``seeds`` and ``scales``;
``paper[(task, model)]`` the published cell ({"aggregate": str, "seeds": [str, …]}, "x" for a seed that did not
learn), placed beside a cell by :meth:`paper_cell`; :meth:`jobs` the training runs of a selection at a scale
(TrainConfig fields, seed excluded), each the run of ``fsa2rnn train TASK --preset P --scale S`` with the cell's
model and arm (:func:`preset_job`: the table's settings are its preset's, one definition of a cell); :meth:`result`
the figures of one finished run (read from its eval.json and summary); :meth:`cell` the aggregate of a cell's runs,
as the paper reports it; :meth:`notes` the deviations from the authors' setup that remain at a scale;
:attr:`tiny_tasks` the cells of the ``--scale tiny`` smoke test.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ....fsa.errors import SpecError
from ....fsa.registry import did_you_mean
from ...limits import parse_seeds
from ...plugins import FLA, check_ref, is_ref
from ..presets import ARCH_FLAGS
from ..run import resolve
from .tables import plot_table, table_markdown

SCALES = ("tiny", "small", "medium", "paper")
#: the arm of a plug-in's row in a table whose arms are settings of the built-in layers (an eigenvalue range)
PLUGIN_ARM = "-"


@dataclass(frozen=True)
class Job:
    """One (task, model, arm, seed) of a table: an ordinary training run with the TrainConfig fields ``config``,
    those of ``fsa2rnn train --preset PRESET --scale SCALE FLAGS`` (:func:`preset_job`; ``preset`` empty: a job not
    made from a preset, e.g. a plug-in's)."""

    task: str
    model: str
    arm: str
    seed: int
    config: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    #: the preset whose settings make the run, and the ``fsa2rnn train`` flags given beside --preset and --scale
    preset: str = field(default="", compare=False, hash=False)
    flags: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def name(self) -> str:
        """The run directory's name under DIR/runs/."""
        return re.sub(r"[^A-Za-z0-9_.-]+", "-", f"{self.task}__{self.model}__{self.arm}__{self.seed}")

    @property
    def cell(self) -> tuple[str, str, str]:
        return (self.task, self.model, self.arm)

    def command(self) -> str:
        """The ``fsa2rnn train`` command line of this job's run (its RUN directory left as ``RUN``)."""
        return train_command(self.preset, self.config.get("scale"), self.flags, self.seed)


def cell_config(preset: str, scale: str, flags: dict[str, Any]) -> dict[str, Any]:
    """The TrainConfig fields of ``fsa2rnn train --preset PRESET --scale SCALE FLAGS`` (seed excluded), read by the
    command's own code (fsa2rnn.nn.train.run.resolve): a table cell and ``train --preset`` are the same run."""
    fields, _ = resolve({**flags, "preset": preset, "scale": scale, "quiet": True})
    fields.pop("progress", None)
    return fields


def preset_job(
    task: str, model: str, arm: str, seeds: list[int], preset: str, scale: str, flags: dict[str, Any], cls: Any = None,
    **extra: Any,
) -> list[Job]:  # fmt: skip
    """The jobs of one cell, one per seed: the run of ``fsa2rnn train --preset PRESET --scale SCALE FLAGS`` (``cls``:
    a Job subclass, given ``extra``)."""
    cfg = cell_config(preset, scale, flags)
    make = cls or Job
    return [make(task, model, arm, s, cfg, preset, dict(flags), **extra) for s in seeds]


def train_command(preset: str, scale: str | None, flags: dict[str, Any], seed: int | None = None) -> str:
    """``fsa2rnn train TASK --preset P --scale S --flag value … --seed N --out RUN``."""
    flags = dict(flags)
    parts = ["fsa2rnn", "train", str(flags.pop("task", ""))]
    if preset:
        parts += ["--preset", preset] + (["--scale", scale] if scale else [])
    for key, value in flags.items():
        if isinstance(value, (list, tuple)):
            value = ",".join(str(v) for v in value)
        parts += [f"--{key.replace('_', '-')}", str(value)]
    if seed is not None:
        parts += ["--seed", str(seed)]
    return shlex.join([p for p in parts if p] + ["--out", "RUN"])


class Reproduction:
    name: str = ""
    title: str = ""
    source: str = ""
    tasks: tuple[str, ...] = ()
    models: tuple[str, ...] = ()
    arms: tuple[str, ...] = ("free",)
    seeds: tuple[int, ...] = (42, 43, 44, 45, 46)
    scales: tuple[str, ...] = SCALES
    #: ``--scale tiny`` (the smoke test) without --tasks: these tasks only (empty: all), and without --seeds the
    #: first seed only, so that any table's tiny run takes under 2 minutes on a 2-core CPU
    tiny_tasks: tuple[str, ...] = ()
    #: (task, model) → {"aggregate": str, "seeds": [str, ...]}: the paper's values
    paper: dict[tuple[str, str], dict[str, Any]] = {}

    def jobs(self, scale: str, tasks: list[str], models: list[str], arms: list[str], seeds: list[int]) -> list[Job]:
        raise NotImplementedError

    def result(self, job: Job, summary: dict[str, Any], evaluation: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def cell(self, job: Job, results: list[dict[str, Any]]) -> dict[str, Any]:
        raise NotImplementedError

    def notes(self, scale: str) -> list[str]:
        return []

    def markdown(self, table: dict[str, Any]) -> str:
        """``DIR/table.md`` (and what the command prints): by default the L_max table of tables.table_markdown."""
        return table_markdown(table)

    def plot(self, table: dict[str, Any], path: Path) -> None:
        """``DIR/plot.png``: by default L_max per task and model (tables.plot_table)."""
        plot_table(table, path)

    def paper_cell(self, task: str, model: str, arm: str) -> dict[str, Any] | None:
        """The paper's value beside a cell (None where the paper reports no such cell)."""
        return self.paper.get((task, model))

    def plugin_jobs(
        self, scale: str, tasks: list[str], refs: list[str], arms: list[str], seeds: list[int],
        model_args: dict[str, Any] | None = None,
    ) -> list[Job]:  # fmt: skip
        """The runs of plug-ins (``--models package.module:Name``) beside the table's models: the jobs of the table's
        first model at the scale (width, depth, steps, lr grid, seeds, L_max protocol), with the built-in layers'
        flags (nn/train/presets.py ARCH_FLAGS) dropped, ``model_args`` given, and one arm, :data:`PLUGIN_ARM` (fla's
        layers keep every arm and its eigenvalue range)."""
        out: list[Job] = []
        for ref in refs:
            fla = ref.split(":")[0] == FLA
            for job in self.jobs(scale, tasks, [self.models[0]], arms if fla else arms[:1], seeds):
                cfg = {k: v for k, v in job.config.items() if k not in ARCH_FLAGS or (fla and k == "eig")}
                flags = {k: v for k, v in job.flags.items() if k not in ARCH_FLAGS or (fla and k == "eig")}
                cfg["model"] = flags["model"] = ref
                if model_args:
                    cfg["model_args"] = dict(model_args)
                    flags["model_args"] = json.dumps(model_args)
                out.append(dataclasses.replace(job, model=ref, arm=job.arm if fla else PLUGIN_ARM, config=cfg,
                                               flags=flags))  # fmt: skip
        return out

    def all_jobs(
        self, scale: str, tasks: list[str], models: list[str], arms: list[str], seeds: list[int],
        model_args: dict[str, Any] | None = None,
    ) -> list[Job]:  # fmt: skip
        """:meth:`jobs` of the table's models and :meth:`plugin_jobs` of the plug-ins among ``models``."""
        builtin = [m for m in models if not is_ref(m)]
        refs = [m for m in models if is_ref(m)]
        if model_args and not refs:
            raise SpecError("--model-args applies to a plug-in in --models (package.module:Name)")
        jobs = self.jobs(scale, tasks, builtin, arms, seeds) if builtin else []
        return jobs + self.plugin_jobs(scale, tasks, refs, arms, seeds, model_args)

    def unavailable(self, job: Job) -> str | None:
        """Why a job cannot run in this build (e.g. a layer that is not there), or None."""
        return None

    # ------------------------------------------------------------------ the selection (checked before any work)
    def select(
        self, scale: str, tasks: str | None, models: str | None, arm: str | None, seeds: str | None
    ) -> tuple[list[str], list[str], list[str], list[int]]:
        """Parse and check ``--tasks T,…``, ``--models M,…``, ``--arm A`` and ``--seeds 42..46`` (None: all)."""
        if scale not in self.scales:
            raise SpecError(f"--scale must be one of {', '.join(self.scales)} for {self.name}, got {scale!r}")
        chosen_tasks = _pick(tasks, self.tasks, "--tasks", self.name, aliases=lambda: self.task_aliases(scale))
        refs = [check_ref(m.strip()) for m in (models or "").split(",") if is_ref(m.strip())]
        rest = ",".join(m.strip() for m in (models or "").split(",") if m.strip() and not is_ref(m.strip()))
        if models is None or rest:
            chosen_models = _pick(models if models is None else rest, self.models, "--models", self.name)
        else:
            chosen_models = []
        chosen_models += list(dict.fromkeys(refs))
        chosen_arms = _pick(arm, self.arms, "--arm", self.name)
        if seeds is None:
            chosen_seeds = list(self.seeds[:1] if scale == "tiny" else self.seeds)
        else:
            chosen_seeds = parse_seeds(seeds)
        if scale == "tiny" and tasks is None and self.tiny_tasks:
            chosen_tasks = list(self.tiny_tasks)
        return chosen_tasks, chosen_models, chosen_arms, chosen_seeds

    def task_aliases(self, scale: str) -> dict[str, str]:
        """The full name of each of the table's tasks — the task its runs train, as ``fsa2rnn tasks`` lists it
        (``grazzi:parity`` for ``parity``) — mapped to the table's name for it (read from the jobs)."""

        names: dict[str, str] = {}
        for task in self.tasks:
            for model, arm in itertools.product(self.models, self.arms):
                jobs = self.jobs(scale, [task], [model], [arm], [self.seeds[0]])
                if jobs:
                    names[str(jobs[0].config.get("task", task))] = task
                    break
        return names


def _pick(text: str | None, allowed: tuple[str, ...], option: str, name: str, aliases: Any = None) -> list[str]:
    """The names of ``text`` (comma-separated; all of ``allowed`` when None), each one of ``allowed`` or a key of
    ``aliases()`` (full task names); SpecError naming the first unknown one, with a suggestion."""
    if text is None:
        return list(allowed)
    chosen = [t.strip() for t in text.split(",") if t.strip()]
    known: dict[str, str] = {}
    if aliases is not None and any(t not in allowed for t in chosen):
        known = aliases()
        chosen = [known.get(t, t) for t in chosen]
    bad = [t for t in chosen if t not in allowed]
    if not chosen:
        raise SpecError(f"{option}: no names in {text!r} (choose from {', '.join(allowed)})")
    if bad:
        what = {"--tasks": "task", "--models": "model", "--arm": "arm"}.get(option, "name")
        raise SpecError(f"{option}: unknown {what} of {name} {bad[0]!r} (choose from {', '.join(allowed)}"
                        f"{did_you_mean(bad[0], [*allowed, *known])})")  # fmt: skip
    return list(dict.fromkeys(chosen))
