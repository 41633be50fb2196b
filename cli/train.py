"""`fsa2rnn train`: train a model on a task and evaluate its length generalization. The options are
cli/train_options.py; the work (presets, run directories, the runs, the seeds' summary) is fsa2rnn.nn.train.run.
``torchrun --nproc-per-node N -m fsa2rnn.cli.train ARGS`` runs this command in every worker (:func:`entry`)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import click

from ..fsa import signals
from ..fsa.errors import FsaError, Interrupted, RunsFailed
from ..nn.train.lr_grid import grid_lines
from ..nn.train.run import execute, plan
from ..nn.train.runlock import launcher_env, run_lock
from .interrupts import train_stopped
from .launch_options import launch_options
from .train_options import TRAIN_HELP, given_args, train_options

#: exit status of a run stopped by Ctrl-C (128 + SIGINT, the shell's convention; 143 for SIGTERM)
EXIT_INTERRUPTED = 130


@click.command("train", help=TRAIN_HELP)
@train_options
@launch_options
@click.pass_context
def train_command(ctx: click.Context, **params: Any) -> None:
    run_from_cli(params, given_args(ctx))


def run_from_cli(params: dict[str, Any], launch_args: list[str]) -> None:
    """The body of ``fsa2rnn train`` (and of its torchrun workers): plan, launch or train, print. SIGINT or SIGTERM
    at any moment is one line saying what was kept and how to go on, exit 130 or 143 (cli/interrupts.py); RUN's
    lock is taken once the checks are done, before anything is written (in the launcher under ``--nproc N``)."""
    signals.reset()
    p = None
    try:
        with signals.stopping():
            p = plan(params)
            if p.launches_torchrun:
                with run_lock(p.out):
                    rc = launch(p.nproc, launch_args, launcher_env(p.out))
                sys.exit(rc)
            result = execute(p)
    except (Interrupted, KeyboardInterrupt) as stop:
        if p is not None and p.under_torchrun:  # the launching process exits with the signal's status
            if getattr(stop, "main", os.environ.get("RANK") == "0"):
                train_stopped(stop, p, params, status=0)  # rank 0 says how to go on
            sys.exit(0)
        train_stopped(stop, p, params)
    except RunsFailed as failed:  # each was reported as it happened; the others finished
        click.echo(f"{len(failed.failed)} of {failed.total} runs failed (each named above); continue with: "
                   f"{p.resume_command(params)}", err=True)  # fmt: skip
        sys.exit(1)
    if result is None:  # not rank 0
        return
    if p.rates:
        click.echo(json.dumps(result, default=float) if params.get("as_json") else "\n".join(grid_lines(result)))
    else:
        report(result, params.get("as_json"))


def launch(nproc: int, args: list[str], env: dict[str, str] | None = None) -> int:
    """``torchrun --standalone --nproc-per-node N -m fsa2rnn.cli.train ARGS`` (``env`` added to the environment); its
    exit status, or 128 + the signal that stopped it."""
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc-per-node={nproc}",
        "-m",
        "fsa2rnn.cli.train",
        *args,
    ]
    env = {**os.environ, "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1"), **(env or {})}
    # torchrun runs in a session of its own, so that Ctrl-C reaches this process alone (torchrun would kill its
    # workers at once); this process passes it (or SIGTERM) on to the workers, which finish the step, checkpoint,
    # let rank 0 say how to resume and exit 0; this process then exits with the signal's status
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    interrupted: list[int] = []

    def forward(signum: int, frame: Any) -> None:
        interrupted.append(signum)
        workers = _children(proc.pid)
        for pid in workers:
            with contextlib.suppress(OSError):
                os.kill(pid, signum)
        if not workers:
            proc.terminate()

    previous = {sig: signal.signal(sig, forward) for sig in signals.SIGNALS}
    try:
        rc = proc.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 128 + interrupted[0] if interrupted else rc


def _children(pid: int) -> list[int]:
    """The child processes of ``pid`` (Linux: /proc/PID/task/*/children); [] where that cannot be read."""
    out: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError, ValueError):
            out += [int(c) for c in (task / "children").read_text().split()]
    return out


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


def entry() -> None:
    """``python -m fsa2rnn.cli.train ARGS`` (torchrun's workers): ``fsa2rnn train`` outside the command group, bad
    input one line ``error: …`` and exit status 2."""
    try:
        train_command.main(prog_name="fsa2rnn train", standalone_mode=False)
    except FsaError as exc:
        click.echo(f"error: {' '.join(str(exc).split())}", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        click.echo(f"error: {' '.join(exc.format_message().split())}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    entry()
