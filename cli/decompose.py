"""`fsa2rnn decompose SPEC`: the Krohn–Rhodes holonomy decomposition as a cascade of permutation-reset levels."""

from __future__ import annotations

from typing import Any

import click

from ..fsa.automaton import Automaton
from ..fsa.cascade import Cascade
from ..fsa.dot import dot_writer
from ..fsa.group_series import group_cascade
from ..fsa.holonomy import MAX_IMAGE_SET, holonomy_decomposition
from ..fsa.library import resolve_spec
from .errors import echo_json, printable
from .options import DOT_FORMATS, check_output, delivered, max_states_option


def decomposition_summary(cascade: Cascade) -> dict[str, Any]:
    """The JSON object of `decompose --json` (docs/architecture.md: ``levels`` top first, ``emulation_verified``)."""
    sk = cascade.skeleton
    return {
        "n_states": cascade.n_states,
        "n_symbols": len(cascade.symbols),
        "n_levels": cascade.n_levels,
        "levels": [
            {
                "n_points": lv.n_points,
                "components": [
                    {
                        "points": c.points,
                        "group_order": c.group_order,
                        "group": c.group,
                        "composition_factors": list(c.composition_factors or ()),
                    }
                    for c in lv.components
                ],
            }
            for lv in cascade.levels
        ],
        "widths": cascade.widths,
        "image_set_size": None if sk is None else int(sk.M),
        "subduction_classes": None if sk is None else int(sk.n_classes),
        "reachable_tuples": int(cascade.reachable_tuples.shape[0]),
        "display": str(cascade),
        "emulation_verified": cascade.emulation_verified,
    }


@click.command("decompose")
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--dot", "dot_file", type=click.Path(), help="Write the cascade as Graphviz (.dot/.svg).")
@click.option(
    "--max-image-set",
    type=click.IntRange(min=1),
    default=MAX_IMAGE_SET,
    show_default=True,
    help="Refuse automata whose extended image set is larger.",
)
@click.option(
    "--group-series",
    is_flag=True,
    help="Replace each group by the cascade of its series' factors (Kaloujnine–Krasner; fsa/group_series.py).",
)
@max_states_option
def decompose_command(
    spec: str, as_json: bool, dot_file: str | None, max_image_set: int, group_series: bool, max_states: int
) -> None:
    """Holonomy decomposition of SPEC: levels of permutation-reset components, verified to emulate SPEC."""
    check_output(dot_file, "--dot", DOT_FORMATS, inputs=(spec,))
    a = resolve_spec(spec, max_states=max_states)
    if group_series:
        _series(a, spec, as_json, dot_file)
        return
    cascade = holonomy_decomposition(a, max_image_set=max_image_set)
    with delivered(dot_file, _dot(cascade, dot_file)):
        _report(a, spec, cascade, as_json, dot_file)


def _dot(cascade: Cascade, dot_file: str | None) -> Any:
    """The writer of ``--dot`` (None without it)."""
    if dot_file is None:
        return None

    return dot_writer(cascade.to_dot(), dot_file)


def _report(a: Automaton, spec: str, cascade: Cascade, as_json: bool, dot_file: str | None) -> None:
    s = decomposition_summary(cascade)
    if as_json:
        echo_json(s)
        return
    click.echo(f"automaton:   {printable(a.name or spec)} ({a.n_states} states, {a.n_symbols} symbols)")
    click.echo(f"skeleton:    {s['image_set_size']} sets in the extended image set, {s['subduction_classes']} classes")
    click.echo(f"levels:      {cascade.n_levels} (widths {cascade.widths})")
    for i, lv in enumerate(cascade.levels):
        comps = "  ".join(
            f"({c.points},{c.group}) on {_set_preview([a.states[q] for q in c.representative or ()])}"
            for c in lv.components
        )
        click.echo(f"  level {i + 1}: {comps}")
    click.echo(f"cascade:     {cascade}")
    click.echo(
        f"emulation:   {'verified' if cascade.emulation_verified else 'NOT verified'} "
        f"({s['reachable_tuples']} reachable coordinate tuples x {a.n_symbols} symbols, and random words)"
    )
    if dot_file is not None:
        click.echo(f"wrote {printable(dot_file)}")


def _series(a: Automaton, spec: str, as_json: bool, dot_file: str | None) -> None:
    """`decompose --group-series`: the series cascade (each level a factor of a group's series)."""
    cascade = group_cascade(a)
    with delivered(dot_file, _dot(cascade, dot_file)):
        _series_report(a, spec, cascade, as_json, dot_file)


def _series_report(a: Automaton, spec: str, cascade: Any, as_json: bool, dot_file: str | None) -> None:
    s = decomposition_summary(cascade)
    s["series"] = cascade.series_name
    s["source"] = "transition group" if cascade.source is None else f"holonomy cascade {cascade.source}"
    for lv, info in zip(s["levels"], cascade.series):
        lv.update(source_level=info.source + 1, factor=info.index + 1, orbits=info.orbits)
    if as_json:
        echo_json(s)
        return
    click.echo(f"automaton:   {printable(a.name or spec)} ({a.n_states} states, {a.n_symbols} symbols)")
    click.echo(f"source:      {s['source']}")
    click.echo(f"series:      {s['series']}")
    click.echo(f"levels:      {cascade.n_levels} (widths {cascade.widths})")
    for i, (lv, info) in enumerate(zip(cascade.levels, cascade.series)):
        c = lv.components[0]
        orbits = f", {info.orbits} orbits folded in" if info.orbits > 1 else ""
        where = f"factor {info.index + 1} of level {info.source + 1}"
        click.echo(f"  level {i + 1}: ({c.points},{c.group}) {where}{orbits}")
    click.echo(f"cascade:     {cascade}")
    click.echo(
        f"emulation:   {'verified' if cascade.emulation_verified else 'NOT verified'} "
        f"({s['reachable_tuples']} reachable coordinate tuples x {a.n_symbols} symbols, and random words)"
    )
    if dot_file is not None:
        click.echo(f"wrote {printable(dot_file)}")


def _set_preview(names: list[str], k: int = 8) -> str:
    """A state set for the text report: all names when few, else the first k and how many more."""
    if len(names) <= k:
        return "{" + ",".join(map(printable, names)) + "}"
    return "{" + ",".join(map(printable, names[:k])) + f", … ({len(names) - k} more)}}"
