"""`fsa2rnn theorems [--only ID] [--json] [--thorough]`: run the registry of the papers' checkable claims."""

from __future__ import annotations

import sys

import click

from ..fsa.progress import bar
from .errors import echo_json
from .options import quiet_option

STATUS_WIDTH = 21  # "verified+demonstrated"; longer combinations push the row


@click.command("theorems")
@click.option("--only", "only", multiple=True, metavar="ID",
              help="Run only this claim (e.g. brandoit.thm4.1.i); repeat for several, in the order given.")  # fmt: skip
@click.option("--thorough", is_flag=True, help="Larger instances (minutes instead of seconds).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object {theorems: [...]}.")
@quiet_option
def theorems_command(only: tuple[str, ...], thorough: bool, as_json: bool) -> None:
    """Check every registered claim; exit code 1 if any fails.

    Status by how each part was checked: verified (exact arithmetic over every case named), checked (floating point
    or sampled; tolerance and sample sizes in the evidence), demonstrated (an impossibility shown on witnesses),
    joined with + when an entry has parts of several kinds; failed."""
    from ..realize.theorems import run_theorem, select

    entries = [e for name in dict.fromkeys(only) for e in select(name)] if only else select(None)
    results = []
    width = max(len(e.id) for e in entries)
    if not as_json:
        click.echo(f"{'id':{width}}  {'kind':13}  {'status':{STATUS_WIDTH}}  {'seconds':>7}  evidence")
    with bar(len(entries), "theorems", unit="claim") as progress:
        for entry in entries:
            progress.set_postfix_str(entry.id, refresh=False)
            r = run_theorem(entry, thorough)
            progress.update(1)
            results.append(r)
            if not as_json:
                line = f"{r['id']:{width}}  {r['kind']:13}  {r['status']:{STATUS_WIDTH}}  {r['seconds']:7.2f}  "
                progress.write(line + str(r["evidence"]), file=sys.stdout)
    if as_json:
        echo_json({"theorems": results})
    else:
        failed = sum(r["status"] == "failed" for r in results)
        total = sum(r["seconds"] for r in results)
        click.echo(f"{len(results)} claim{'s' * (len(results) != 1)}, {failed} failed, {total:.1f} s")
    if any(r["status"] == "failed" for r in results):
        raise SystemExit(1)
