"""`fsa2rnn list` (the builtin catalogue) and `fsa2rnn show SPEC` (a summary of one automaton)."""

from __future__ import annotations

from typing import Any

import click

from ..fsa.automaton import Automaton
from ..fsa.dot import dot_writer, to_dot
from ..fsa.library import resolve_spec
from ..fsa.library.builtins import CATALOGUE
from .errors import echo_json, printable
from .options import DOT_FORMATS, check_output, delivered, max_states_option

_PREVIEW = 8


@click.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def list_command(as_json: bool) -> None:
    """List the builtin automata (use any of them as SPEC)."""
    if as_json:
        echo_json(
            {"builtins": [{"name": b.form, "example": b.example, "description": b.description} for b in CATALOGUE]}
        )
        return
    width = max(len(b.form) for b in CATALOGUE)
    for b in CATALOGUE:
        click.echo(f"{b.form:<{width}}  {b.description}")
    click.echo("\nAlso: regex:PATTERN (minimal DFA of a regular expression) or a path to a JSON spec file.")


def summary(a: Automaton) -> dict[str, Any]:
    """The JSON summary of `show --json`: names, sizes and the full transition table."""
    return {
        "name": a.name,
        "n_states": a.n_states,
        "n_symbols": a.n_symbols,
        "states": list(a.states),
        "symbols": list(a.symbols),
        "initial": None if a.initial is None else a.states[a.initial],
        "accepting": None if a.accepting is None else [a.states[i] for i in a.accepting_states],
        "is_group_automaton": a.is_group_automaton,
        "action_degree": None if a.action is None else int(a.action.shape[1]),
        "factors": None if a.factors is None else [f.name for f in a.factors],
        "transitions": {x: a.transitions[i].tolist() for i, x in enumerate(a.symbols)},
    }


def _preview(names: tuple[str, ...]) -> str:
    shown = ", ".join(printable(n) for n in names[:_PREVIEW])
    return shown + (f", … ({len(names)} in all)" if len(names) > _PREVIEW else "")


def _table(a: Automaton) -> list[str]:
    """The first rows and columns of δ: one line per state, one column per symbol."""
    states = range(min(a.n_states, _PREVIEW))
    symbols = range(min(a.n_symbols, 6))
    cells = [[printable(a.states[q])] + [printable(a.states[a.transitions[x, q]]) for x in symbols] for q in states]
    header = ["δ"] + [printable(a.symbols[x]) for x in symbols]
    widths = [max(len(row[j]) for row in [header, *cells]) for j in range(len(header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(header, widths)).rstrip()]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells]
    if a.n_states > len(states) or a.n_symbols > len(symbols):
        lines.append(f"(showing {len(states)} of {a.n_states} states, {len(symbols)} of {a.n_symbols} symbols)")
    return lines


@click.command("show")
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (with the full transition table).")
@click.option("--dot", "dot_file", type=click.Path(), help="Also write a Graphviz file (.dot, .svg, .png).")
@max_states_option
def show_command(spec: str, as_json: bool, dot_file: str | None, max_states: int) -> None:
    """Summarize the automaton SPEC: a JSON spec file, regex:PATTERN, or a builtin (see `fsa2rnn list`)."""
    check_output(dot_file, "--dot", DOT_FORMATS, inputs=(spec,))
    a = resolve_spec(spec, max_states=max_states)
    writer = None
    if dot_file is not None:
        writer = dot_writer(to_dot(a), dot_file)
    with delivered(dot_file, writer):
        if as_json:
            echo_json(summary(a))
            return
        _report(a, spec)
        if dot_file is not None:
            click.echo(f"wrote {printable(dot_file)}")


def _report(a: Automaton, spec: str) -> None:
    s = summary(a)
    click.echo(f"name:        {printable(a.name or spec)}")
    click.echo(f"states:      {a.n_states}  [{_preview(a.states)}]")
    click.echo(f"symbols:     {a.n_symbols}  [{_preview(a.symbols)}]")
    click.echo(f"initial:     {printable(s['initial']) if s['initial'] is not None else '(none: a semiautomaton)'}")
    acc = s["accepting"]
    click.echo(f"accepting:   {'(none)' if acc is None else '[' + _preview(tuple(acc)) + ']'}")
    click.echo(f"group:       {'yes (every symbol permutes the states)' if a.is_group_automaton else 'no'}")
    if a.action is not None:
        click.echo(f"action:      on {a.action.shape[1]} points")
    if a.factors is not None:
        click.echo(f"factors:     {' x '.join(printable(f.name or '?') for f in a.factors)}")
    for line in _table(a):
        click.echo("  " + line)
