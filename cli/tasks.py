"""`fsa2rnn tasks`: the named tasks, with alphabet, number of classes, chance accuracy and source.

fsa2rnn's own tasks are read from ``nn/task_catalog.json``, written from the tasks themselves by
:func:`write_catalog`, so that listing them starts no torch (tests/contracts/test_hostile_inputs.py checks that the
file equals the built-in tasks; after adding one run ``python -m fsa2rnn.cli.tasks``). Tasks that installed packages
register (the ``fsa2rnn.tasks`` entry points) are built to be described; one that cannot be is one ``error:`` line on
stderr naming it, and the others are listed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ..fsa.io import atomic_write_text
from ..nn.tasks import TASKS, task_rows
from .errors import echo_json

CATALOG = Path(__file__).resolve().parent.parent / "nn" / "task_catalog.json"


def catalog() -> list[dict[str, Any]]:
    """The rows of fsa2rnn's own tasks (no torch): the stored catalog."""
    return json.loads(CATALOG.read_text())["tasks"]


def write_catalog() -> None:
    """Write the catalog from fsa2rnn's own registered tasks (imports torch)."""
    atomic_write_text(CATALOG, json.dumps({"tasks": task_rows(builtin=True)[0]}, indent=1, ensure_ascii=False) + "\n")


def listed() -> tuple[list[dict[str, Any]], list[str]]:
    """(rows, problems): the catalog, then the plug-ins' tasks (built to describe them, when there are any)."""
    if all(TASKS.is_builtin(n) for n in TASKS.names()) and not TASKS.problems():
        return catalog(), []
    rows, problems = task_rows(builtin=False)
    return catalog() + rows, problems


@click.command("tasks")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def tasks_command(as_json: bool) -> None:
    """List the named tasks (every SPEC is a task too: its word problem; SPEC:accept predicts acceptance)."""
    rows, problems = listed()
    for line in problems:  # a broken plug-in is named; the other tasks are listed
        click.echo(f"error: {' '.join(line.split())}", err=True)
    if as_json:
        echo_json({"tasks": rows, "also": "every SPEC (its word problem) and SPEC:accept"})
        return
    width = max(len(r["name"]) for r in rows)
    click.echo(f"{'task':<{width}}  {'kind':<14}  {'vocab':>5}  {'classes':>7}  {'chance':>7}  source")
    for r in rows:
        chance = f"{r['chance']:.4g}" if r["kind"] == "classification" else "R²"
        click.echo(
            f"{r['name']:<{width}}  {r['kind']:<14}  {len(r['alphabet']):>5}  {r['n_classes']:>7}  {chance:>7}  "
            f"{r['source']}"
        )
    click.echo("\nAlso: every SPEC is a task (its word problem, uniform symbols), and SPEC:accept predicts acceptance.")


if __name__ == "__main__":
    write_catalog()
