"""`fsa2rnn reproduce NAME`: regenerate a paper's table from ordinary training runs (fsa2rnn.nn.train.reproduce)."""

from __future__ import annotations

import sys
import time

import click

from ..fsa import signals
from ..fsa.errors import Interrupted, SpecError
from ..fsa.io import output_directory
from ..fsa.lock import directory_lock
from ..nn.plugins import parse_args
from ..nn.train.reproduce import get_reproduction
from ..nn.train.reproduce.runner import failed_runs, prepare, reproduce
from .errors import echo_json
from .interrupts import reproduce_command_line, reproduce_stopped
from .launch_options import launch_options, parse_launcher
from .options import quiet_option


@click.command("reproduce")
@click.argument("name", metavar="NAME")
@click.option(
    "--scale",
    default="small",
    show_default=True,
    help="tiny (a smoke test: a few steps, a few cells, one seed unless --tasks/--seeds say otherwise; under 2 "
    "minutes on a 2-core CPU; its figures mean nothing), small (a 2-core CPU), medium, paper (the authors' protocol, "
    "for a GPU).",
)
@click.option("--tasks", help="Comma-separated tasks of the table (default: all), e.g. Z2,S4.")
@click.option("--models", help="Comma-separated models of the table (default: all), e.g. nfsm,mamba; a plug-in "
              "package.module:Name adds its row, trained with the table's preset.")
@click.option("--model-args", help="The plug-ins' keyword arguments in --models, as a JSON object.")
@click.option(
    "--arm",
    help="One arm (default: all): anchored or free (brandoit-table1; baselines have only the free arm); the "
    "eigenvalue range 0..1 or -1..1 (grazzi-table3, grazzi-s5).",
)
@click.option("--seeds", help="Seeds, e.g. 42..46 or 42,43 (default: the paper's).")
@click.option("--out", required=True, type=click.Path(file_okay=False), help="The directory DIR.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as one JSON object.")
@click.option(
    "--table-only",
    is_flag=True,
    help="Train nothing: the table of the runs already finished in DIR (the others 'not run').",
)
@launch_options
@quiet_option
def reproduce_command(
    name: str,
    scale: str,
    tasks: str | None,
    models: str | None,
    model_args: str | None,
    arm: str | None,
    seeds: str | None,
    out: str,
    as_json: bool,
    table_only: bool,
    jobs: int | None,
    launcher: str,
    launcher_args: str | None,
) -> None:
    """Regenerate the table NAME (brandoit-table1, grazzi-table3, grazzi-s5, dlr-atomic): every (task, model, arm,
    seed) as a training run under DIR/runs/ (resumable: finished runs are read back), then DIR/table.md,
    DIR/table.json (every seed, the paper's values beside, each cell's preset and the fsa2rnn version) and
    DIR/plot.png; before training, one line with the number of runs to do and their estimated time. --table-only
    writes those of the finished runs only, training nothing (DIR must hold runs). --jobs, --launcher and
    --launcher-args spread the runs over local processes, a SLURM cluster or Ray (docs/cluster.md); a run that fails
    is reported, the others go on, and the exit status is 1 — the same command again retries what failed or never
    ran. See
    docs/reproductions.md.

    DIR has one writer: its lock is held for the whole command, and each run takes its own. SIGINT or SIGTERM at
    any moment is one line saying what was kept and the command that goes on, exit 130 or 143."""
    folder = output_directory(out)  # the raw path: Path('') would be the current directory
    where = parse_launcher(launcher, jobs, launcher_args)
    signals.reset()
    options = {"--tasks": tasks, "--models": models, "--arm": arm, "--seeds": seeds, "--model-args": model_args,
               "--jobs": None if jobs is None else str(jobs), "--launcher": None if launcher == "local" else launcher,
               "--launcher-args": launcher_args}  # fmt: skip
    since, jobs = time.time(), []
    try:
        with signals.stopping():
            rep = get_reproduction(name)
            args = parse_args(model_args) if model_args is not None else None
            chosen = rep.select(scale, tasks, models, arm, seeds)
            jobs = rep.all_jobs(scale, *chosen, model_args=args)
            if not jobs:
                raise SpecError(f"{name}: the selection has no runs (baselines have only the free arm)")
            with directory_lock(folder, "reproduction folder"):
                prepare(rep, scale, folder, jobs, table_only=table_only)
                table = reproduce(rep, scale, jobs, folder, progress=True, table_only=table_only, launcher=where)
    except (Interrupted, KeyboardInterrupt) as stop:
        reproduce_stopped(stop, folder, jobs, reproduce_command_line(name, scale, options, out, table_only), since)
    if as_json:
        echo_json(table)
    else:
        click.echo(rep.markdown(table), nl=False)
    failed = failed_runs(table)
    if failed:
        click.echo(f"{len(failed)} of {len(jobs)} runs failed (each named above; tracebacks in "
                   f"{folder / 'failed'}); the same command again retries them", err=True)  # fmt: skip
        sys.exit(1)
