"""`fsa2rnn analyze SPEC`: transition monoid, Green's classes, maximal subgroups, classification, realizability."""

from __future__ import annotations

from typing import Any

import click

from ..fsa.analysis import ANALYSIS_STAGES, ANALYZE_MAX_BYTES, ENUMERATION_THRESHOLD, analyze
from ..fsa.library import resolve_spec
from ..fsa.monoid import MAX_ELEMENTS
from ..fsa.progress import stages
from .errors import echo_json, printable
from .options import FiniteFloatRange, max_states_option


def _yes(v: Any) -> str:
    return "yes" if v else "no"


def _verdict(v: dict[str, Any]) -> str:
    sizes = [f"{k}={v[k]}" for k in ("layers", "width", "heads", "indices", "reflections_per_step") if v.get(k)]
    head = _yes(v["realizes"]) + (f" ({', '.join(sizes)})" if sizes and v["realizes"] else "")
    return f"{head} — {v.get('note', '') + '; ' if v.get('note') and v['realizes'] else ''}{v['theorem']}"


def _text(report: dict[str, Any]) -> list[str]:
    a, m = report["automaton"], report["monoid"]
    name = a["name"] or "automaton"
    lines = [
        f"{name}: {a['states']} states, {a['symbols']} symbols",
        f"transition monoid: {m['size']:,} elements, {m['idempotents']:,} idempotents",
        f"Green's classes: D={m['d_classes']} ({m['regular_d_classes']} regular), R={m['r_classes']}, "
        f"L={m['l_classes']}, H={m['h_classes']}",
        f"group: {_yes(m['is_group'])}   aperiodic: {_yes(m['is_aperiodic'])}   commutative: "
        f"{_yes(m['is_commutative'])}   solvable: {_yes(m['is_solvable'])}   definite: "
        + (f"yes (degree {m['definite_degree']})" if m["is_definite"] else "no"),
        "maximal subgroups (one per regular D-class):",
    ]
    for h in m["subgroups"]:
        factors = ", ".join(h["composition_factors"]) or "none"
        points = f"{h['rank']} point" + ("s" if h["rank"] > 1 else "")
        lines.append(
            f"  D-class {h['d_class']}: {h['name']} (order {h['order']}, on {points}); composition factors: {factors}"
        )
    lines.append("realizability (exact: finite set of exact states; robust: η-perturbations at every length):")
    for family, cols in report["realizability"].items():
        lines.append(f"  {family}")
        for col in ("exact", "robust"):
            lines.append(f"    {col:<6} {_verdict(cols[col])}")
    return lines


@click.command("analyze")
@click.argument("spec")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option(
    "--max-elements",
    type=click.IntRange(min=1),
    default=MAX_ELEMENTS,
    show_default=True,
    help=f"Refuse monoids with more elements (exit 2). Monoids over {ENUMERATION_THRESHOLD:,} elements are analysed "
    "from their D-classes, without enumerating them.",
)
@click.option(
    "--max-memory",
    type=FiniteFloatRange(min=0, min_open=True),
    default=ANALYZE_MAX_BYTES / 2**30,
    show_default=True,
    help="GiB the analysis may take: the enumerated elements (fewer when each is large), the image/kernel orbits "
    "and Schützenberger groups of the D-class analysis; refused (exit 2) as soon as a lower bound on what the "
    "monoid needs is over it.",
)
@click.option("--no-cascade", is_flag=True, help="Skip the holonomy decomposition in the realizability report.")
@max_states_option
def analyze_command(
    spec: str, as_json: bool, max_elements: int, max_memory: float, no_cascade: bool, max_states: int
) -> None:
    """Transition monoid, Green's classes, maximal subgroups and realizability of SPEC."""
    automaton = resolve_spec(spec, max_states=max_states)
    with stages("analyze", len(ANALYSIS_STAGES)) as step:
        report = analyze(
            automaton,
            max_elements=max_elements,
            cascade=not no_cascade,
            step=step,
            max_bytes=int(max_memory * 2**30),
        )
    if as_json:
        echo_json(report)
        return
    for line in _text(report):
        click.echo(printable(line))  # names come from the spec: control characters escaped
