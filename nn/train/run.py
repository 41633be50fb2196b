"""What ``fsa2rnn train`` does with its arguments: fill in a preset, run one training per seed (sequentially), write
the seeds' summary, or launch itself under torchrun for ``--nproc N``; and print the result."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.fsa.io import atomic_write_text, output_directory

from .. import limits
from . import runfiles
from .lr_grid import grid_lines, grid_summary, parse_lr_grid
from .presets import get_preset, scaled_val_every

SUMMARY = "summary.json"
#: options that are not TrainConfig fields
_NOT_CONFIG = ("seeds", "resume", "out", "as_json", "quiet", "lr_grid")
#: exit status of a run stopped by Ctrl-C (128 + SIGINT, the shell's convention)
EXIT_INTERRUPTED = 130


def parse_seeds(text: str) -> list[int]:
    """``42,43,44`` or ``42..46`` → the list of seeds (fsa2rnn.nn.limits: 64-bit, at most 1000)."""
    return limits.parse_seeds(text)


def resolve(params: dict[str, Any]) -> tuple[dict[str, Any], list[int] | None]:
    """The TrainConfig fields (preset filled in under the user's flags) and the list of seeds (or None). Torch-free:
    every stated limit that the flags alone decide is checked here, before torch is imported."""
    given = {k: v for k, v in params.items() if v is not None and k not in _NOT_CONFIG}
    fields: dict[str, Any] = {}
    if given.get("preset"):
        fields.update(get_preset(given["preset"]).settings(given.get("scale") or "paper", given.get("model")))
    elif given.get("scale"):
        raise SpecError("--scale needs a --preset")
    every = None if params.get("resume") else scaled_val_every(fields, given)
    fields.update(given)
    if every is not None:
        fields["val_every"] = every
    if not fields.get("task") and not params.get("resume"):  # a resumed run's task is stored in it
        raise SpecError("give a TASK (see `fsa2rnn tasks`) or a --preset")
    if isinstance(fields.get("eval_lengths"), str):
        fields["eval_lengths"] = limits.parse_lengths(fields["eval_lengths"], "--eval-lengths")
    seeds = None
    if params.get("seeds"):
        if params.get("seed") is not None:
            raise SpecError("give --seed or --seeds, not both")
        seeds = parse_seeds(params["seeds"])
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
    it; ``--resume`` refuses it)."""
    out = output_directory(raw)
    runs = run_dirs(out, seeds, rates)
    if out.is_dir() and not resume:
        ours = set(runfiles.ALL_RUN_FILES) | (
            {SUMMARY} | {r.relative_to(out).parts[0] for r in runs} if seeds else set()
        )
        other = sorted(p.name for p in out.iterdir() if p.name not in ours)
        if other:
            raise SpecError(f"--out {raw!r} holds other files ({', '.join(other[:3])}{', …' * (len(other) > 3)}), "
                            "not a training run: choose a new or empty directory")  # fmt: skip
        for r in runs:
            if runfiles.has_checkpoint(r):
                raise SpecError(f"{str(r)!r} holds a training run; pass --resume to continue it")
    if resume and not any(runfiles.has_checkpoint(r) for r in runs):
        what = "does not exist" if not out.exists() else "holds no checkpoint (the run never reached one)"
        raise SpecError(f"--resume: {raw!r} {what}; start the run without --resume")
    return out


def run_dirs(out: Path, seeds: list[int] | None, rates: list[float] | None = None) -> list[Path]:
    """The run directories of one command: RUN, RUN/seed-S, or RUN/lr-RATE/seed-S under --lr-grid."""
    if rates:
        return [out / f"lr-{lr:g}" / f"seed-{s}" for lr in rates for s in seeds or []]
    return [out / f"seed-{s}" for s in seeds] if seeds else [out]


def resumed_fields(fields: dict[str, Any], given: dict[str, Any], run: Path) -> dict[str, Any]:
    """The fields of a run being resumed: its stored settings; a flag given now that disagrees with them is refused,
    naming it (``device``, ``nproc`` and the progress bar may change)."""
    from .runfiles import RESUMABLE

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


def run_from_cli(params: dict[str, Any], launch_args: list[str]) -> None:
    """The body of ``fsa2rnn train`` (and of its torchrun workers)."""
    fields, seeds = resolve(params)
    resume = bool(params.get("resume"))
    rates = _lr_grid(params, seeds)
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

    from .config import TrainConfig
    from .distributed import launched_by_torchrun
    from .trainer import Interrupted, Prepared, train

    nproc = fields.get("nproc") or 1
    under_torchrun = launched_by_torchrun()
    configs = []
    for f, path in per_run:
        if under_torchrun:
            f = {**f, "nproc": int(os.environ["WORLD_SIZE"])}
        configs.append((TrainConfig(**f), path))
    for cfg, path in configs:  # every bad input is refused before any run starts
        Prepared(cfg, path, resume=resume and runfiles.has_checkpoint(path), given=given)
    if nproc > 1 and not under_torchrun:
        sys.exit(launch(nproc, launch_args))
    results = []
    try:
        for cfg, path in configs:
            results.append(train(cfg, path, resume=resume and runfiles.has_checkpoint(path), given=given))
    except Interrupted as stop:
        if stop.main:
            again = (
                f"fsa2rnn train --out {shlex.quote(str(out))} --resume"
                + (f" --seeds {params['seeds']}" if seeds else "")
                + (f" --lr-grid {params['lr_grid']}" if rates else "")
                + (f" --nproc {configs[0][0].nproc}" if configs[0][0].nproc > 1 else "")
            )
            click.echo(f"interrupted: {stop}; continue with: {again}", err=True)
        sys.exit(0 if under_torchrun else EXIT_INTERRUPTED)  # under torchrun, the launching process reports it
    if results[0] is None:  # not rank 0
        return
    if rates:
        grid = [results[i * len(seeds) : (i + 1) * len(seeds)] for i in range(len(rates))]
        summary = grid_summary(rates, grid, fields["task"], fields.get("model") or "deltanet")
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / SUMMARY, json.dumps(summary, indent=1))
        click.echo(json.dumps(summary, default=float) if params.get("as_json") else "\n".join(grid_lines(summary)))
    elif seeds:
        summary = summarize(results, configs[0][0])
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / SUMMARY, json.dumps(summary, indent=1))
        report(summary, params.get("as_json"))
    else:
        report(results[0], params.get("as_json"))


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


def launch(nproc: int, args: list[str]) -> int:
    """``torchrun --standalone --nproc-per-node N -m fsa2rnn.nn.train ARGS``; its exit status."""
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={nproc}",
        "-m",
        "fsa2rnn.nn.train",
        *args,
    ]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    # torchrun runs in a session of its own, so that Ctrl-C reaches this process alone (torchrun would kill its
    # workers at once); this process passes it on to the workers, which finish the step, checkpoint, let rank 0 say
    # how to resume and exit 0; this process then exits with the interrupted status
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    interrupted: list[bool] = []

    def forward(signum: int, frame: Any) -> None:
        interrupted.append(True)
        workers = _children(proc.pid)
        for pid in workers:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGINT)
        if not workers:
            proc.terminate()

    previous = signal.signal(signal.SIGINT, forward)
    try:
        rc = proc.wait()
    finally:
        signal.signal(signal.SIGINT, previous)
    return EXIT_INTERRUPTED if interrupted else rc


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux: /proc/PID/task/*/children); [] where that cannot be read."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError, ValueError):
            out += [int(c) for c in (task / "children").read_text().split()]
    return out


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


def report(result: dict[str, Any], as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(result, default=float))
        return
    if "runs" in result:
        click.echo(f"{result['task']} · {result['model']}: {result['learned']}/{len(result['runs'])} seeds learned")
        for r in result["runs"]:
            click.echo(
                f"  seed {r['seed']}: {_lmax(r)}  steps {r['steps']}  loss {r['final_loss']:.4g}  "
                f"token accuracy {_accs(r['eval'])}"
            )
        med = result["median_l_max"]
        click.echo(
            f"median L_max over the seeds that learned: {'-' if med is None else med}"
            f"{' (capped)' if result['median_l_max_capped'] else ''}"
        )
        return
    click.echo(
        f"run: {result['run']}  steps: {result['steps']}  final loss: {result['final_loss']:.4g}  "
        f"train accuracy: {result['train_accuracy']:.4f}"
    )
    ev = result["eval"]
    if ev.get("token_accuracy"):
        click.echo("length  token_acc  seq_acc  scaled")
        for n, t, s, c in zip(ev["lengths"], ev["token_accuracy"], ev["sequence_accuracy"], ev["scaled_accuracy"]):
            click.echo(f"{n:>6}  {t:9.4f}  {s:7.4f}  {c:6.3f}")
    for sk in result.get("skipped") or []:
        click.echo(f"skipped length {sk['length']}: {sk['reason']}")
    if "range" in result:
        r = result["range"]
        click.echo(
            f"answers on lengths {r['lengths']}: accuracy {r['accuracy']:.4f}, scaled {r['scaled_accuracy']:.3f}"
        )
    if "eval_regression" in result:
        for r in result["eval_regression"]:
            click.echo(f"length {r['length']}: MSE {r['mse']:.4g}, R² {r['r2']:.4f}")
    if "l_max" in result:
        click.echo(f"L_max: {_lmax(result)}" + (f" ({result['l_max_note']})" if result.get("l_max_note") else ""))
    if result.get("exact") and result["exact"].get("exact") is not None:
        e = result["exact"]
        click.echo(
            f"tables exact: {e['exact']} ({e['triples']} reachable triples, logit margin {e['margin']:.3g})"
            + (f", witness {e['witness']}" if e["witness"] else "")
        )


def _lmax(r: dict[str, Any]) -> str:
    if r.get("l_max") is not None:
        return str(r["l_max"])
    return "none up to the cap" if r.get("l_max_capped") else "-"


def _accs(ev: dict[str, Any]) -> str:
    if not ev.get("token_accuracy"):
        return "-"
    return " ".join(f"{n}:{a:.3f}" for n, a in zip(ev["lengths"], ev["token_accuracy"]))
