"""What ``fsa2rnn train`` does with its arguments: fill in a preset, run one training per seed (sequentially), write
the seeds' summary, or launch itself under torchrun for ``--nproc N``; and print the result."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.fsa.io import atomic_write_text

from .lr_grid import grid_lines, grid_summary, parse_lr_grid
from .presets import get_preset

SUMMARY = "summary.json"
#: options that are not TrainConfig fields
_NOT_CONFIG = ("seeds", "resume", "out", "as_json", "lr_grid")


def parse_seeds(text: str) -> list[int]:
    """``42,43,44`` or ``42..46`` → the list of seeds."""
    try:
        if ".." in text:
            lo, hi = (int(v) for v in text.split(".."))
            seeds = list(range(lo, hi + 1))
        else:
            seeds = [int(v) for v in text.split(",")]
    except ValueError:
        seeds = []
    if not seeds or len(set(seeds)) != len(seeds):
        raise SpecError(f"--seeds must be distinct integers, e.g. 42,43,44 or 42..46; got {text!r}")
    return seeds


def parse_int_list(text: str, what: str) -> list[int]:
    try:
        return [int(v) for v in text.split(",")]
    except ValueError:
        raise SpecError(f"{what} must be comma-separated integers, got {text!r}") from None


def resolve(params: dict[str, Any]) -> tuple[dict[str, Any], list[int] | None]:
    """The TrainConfig fields (preset filled in under the user's flags) and the list of seeds (or None)."""
    given = {k: v for k, v in params.items() if v is not None and k not in _NOT_CONFIG}
    fields: dict[str, Any] = {}
    if given.get("preset"):
        fields.update(get_preset(given["preset"]).settings(given.get("scale") or "paper", given.get("model")))
    elif given.get("scale"):
        raise SpecError("--scale needs a --preset")
    fields.update(given)
    if not fields.get("task"):
        raise SpecError("give a TASK (see `fsa2rnn tasks`) or a --preset")
    if isinstance(fields.get("eval_lengths"), str):
        fields["eval_lengths"] = parse_int_list(fields["eval_lengths"], "--eval-lengths")
    seeds = None
    if params.get("seeds"):
        if params.get("seed") is not None:
            raise SpecError("give --seed or --seeds, not both")
        seeds = parse_seeds(params["seeds"])
    fields["progress"] = sys.stderr.isatty()
    return fields, seeds


def preset_config(preset: str, scale: str = "paper", **flags: Any) -> Any:
    """The TrainConfig of a preset at a scale with some flags given (as ``fsa2rnn train --preset …`` builds it)."""
    from .config import TrainConfig

    fields, _ = resolve({"preset": preset, "scale": scale, **flags})
    return TrainConfig(**fields)


def run_from_cli(params: dict[str, Any], launch_args: list[str]) -> None:
    """The body of ``fsa2rnn train`` (and of its torchrun workers)."""
    from .config import TrainConfig
    from .distributed import launched_by_torchrun
    from .trainer import Prepared, train

    fields, seeds = resolve(params)
    out, resume = Path(params["out"]), bool(params.get("resume"))
    nproc = fields.get("nproc") or 1
    under_torchrun = launched_by_torchrun()
    if under_torchrun:
        fields["nproc"] = int(os.environ["WORLD_SIZE"])
    rates = _lr_grid(params, seeds)
    if rates:  # the paper's protocol (lr_grid.py): every rate × every seed, under RUN/lr-RATE/seed-S
        grid = [[(TrainConfig(**{**fields, "lr": lr, "seed": s}), out / f"lr-{lr:g}" / f"seed-{s}") for s in seeds]
                for lr in rates]  # fmt: skip
        for cfg, path in (c for row in grid for c in row):
            Prepared(cfg, path, resume=resume)
        if nproc > 1 and not under_torchrun:
            sys.exit(launch(nproc, launch_args))
        results = [[train(cfg, path, resume=resume) for cfg, path in row] for row in grid]
        if results[0][0] is None:  # not rank 0
            return
        summary = grid_summary(rates, results, fields["task"], fields.get("model") or "deltanet")
        out.mkdir(parents=True, exist_ok=True)
        atomic_write_text(out / SUMMARY, json.dumps(summary, indent=1))
        click.echo(json.dumps(summary, default=float) if params.get("as_json") else "\n".join(grid_lines(summary)))
        return
    runs = [(s, out / f"seed-{s}") for s in seeds] if seeds else [(fields.get("seed", 42), out)]
    configs = [(TrainConfig(**{**fields, "seed": s}), path) for s, path in runs]
    for cfg, path in configs:  # every bad input is refused before any run starts
        Prepared(cfg, path, resume=resume)
    if nproc > 1 and not under_torchrun:
        sys.exit(launch(nproc, launch_args))
    results = [train(cfg, path, resume=resume) for cfg, path in configs]
    if results[0] is None:  # not rank 0
        return
    if seeds:
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
    return subprocess.call(cmd, env=env)


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
