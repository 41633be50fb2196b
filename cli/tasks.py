"""`fsa2rnn tasks`: the papers' named tasks, with alphabet, number of classes, chance accuracy and source."""

from __future__ import annotations

import click

from .errors import echo_json


@click.command("tasks")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def tasks_command(as_json: bool) -> None:
    """List the papers' tasks (every SPEC is a task too: its word problem; SPEC:accept predicts acceptance)."""
    from fsa2rnn.nn.tasks import list_tasks

    rows = list_tasks()
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
