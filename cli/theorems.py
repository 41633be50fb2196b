"""`fsa2rnn theorems [--only ID] [--json] [--thorough]`: run the registry of the papers' checkable claims."""

from __future__ import annotations

import click

from .errors import echo_json

STATUS_WIDTH = 21  # "verified+demonstrated"; longer combinations push the row


@click.command("theorems")
@click.option("--only", "only", default=None, metavar="ID", help="Run one claim (e.g. brandoit.thm4.1.i).")
@click.option("--thorough", is_flag=True, help="Larger instances (minutes instead of seconds).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object {theorems: [...]}.")
def theorems_command(only: str | None, thorough: bool, as_json: bool) -> None:
    """Check every registered claim; exit code 1 if any fails.

    Status by how each part was checked: verified (exact arithmetic over every case named), checked (floating point
    or sampled; tolerance and sample sizes in the evidence), demonstrated (an impossibility shown on witnesses),
    joined with + when an entry has parts of several kinds; failed."""
    from fsa2rnn.realize.theorems import run_theorem, select

    entries = select(only)
    results = []
    width = max(len(e.id) for e in entries)
    if not as_json:
        click.echo(f"{'id':{width}}  {'kind':13}  {'status':{STATUS_WIDTH}}  {'seconds':>7}  evidence")
    for entry in entries:
        r = run_theorem(entry, thorough)
        results.append(r)
        if not as_json:
            click.echo(
                f"{r['id']:{width}}  {r['kind']:13}  {r['status']:{STATUS_WIDTH}}  {r['seconds']:7.2f}  {r['evidence']}"
            )
    if as_json:
        echo_json({"theorems": results})
    else:
        failed = sum(r["status"] == "failed" for r in results)
        total = sum(r["seconds"] for r in results)
        click.echo(f"{len(results)} claim{'s' * (len(results) != 1)}, {failed} failed, {total:.1f} s")
    if any(r["status"] == "failed" for r in results):
        raise SystemExit(1)
