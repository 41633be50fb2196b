"""`fsa2rnn tasks`: the papers' named tasks, with alphabet, number of classes, chance accuracy and source.

The list is read from ``nn/task_catalog.json``, written from the tasks themselves by :func:`write_catalog`, so that
listing them starts no torch (tests/test_hostile_inputs.py checks that the file equals ``list_tasks()``; after adding
a task run ``python -m fsa2rnn.cli.tasks``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from fsa2rnn.fsa.io import atomic_write_text

from .errors import echo_json

CATALOG = Path(__file__).resolve().parent.parent / "nn" / "task_catalog.json"


def catalog() -> list[dict[str, Any]]:
    """The rows of ``fsa2rnn tasks`` (no torch): the stored catalog."""
    return json.loads(CATALOG.read_text())["tasks"]


def write_catalog() -> None:
    """Write the catalog from ``fsa2rnn.nn.tasks.list_tasks()`` (imports torch)."""
    from fsa2rnn.nn.tasks import list_tasks

    atomic_write_text(CATALOG, json.dumps({"tasks": list_tasks()}, indent=1, ensure_ascii=False) + "\n")


@click.command("tasks")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def tasks_command(as_json: bool) -> None:
    """List the papers' tasks (every SPEC is a task too: its word problem; SPEC:accept predicts acceptance)."""
    rows = catalog()
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
