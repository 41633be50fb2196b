"""`fsa2rnn analyze SPEC`: transition monoid, Green's classes, maximal subgroups, classification, realizability."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..fsa.automaton import Automaton
from ..fsa.classify import classify
from ..fsa.errors import LimitExceededError
from ..fsa.library import resolve_spec
from ..fsa.monoid import MAX_BYTES, MAX_ELEMENTS, TransitionMonoid
from ..fsa.progress import stages
from .errors import echo_json
from .options import max_states_option

ANALYSIS_STAGES = ("transition monoid", "Green's classes", "subgroups and classification", "realizability")
#: Monoids with more elements are analysed from their D-classes (fsa.dclasses.green_classes), never enumerated.
ENUMERATION_THRESHOLD = 1 << 18


def monoid_structure(a: Automaton, max_elements: int = MAX_ELEMENTS, max_bytes: int = MAX_BYTES) -> Any:
    """The transition monoid, enumerated (a TransitionMonoid) when it has at most ENUMERATION_THRESHOLD elements,
    else its D-class structure (a GreenClasses: size, idempotents, Green's classes and subgroups without the
    elements). The enumeration is tried first, stopped at the threshold; past it (and only when the threshold, not
    the memory limit, stopped it), the D-classes (orbits of images and kernels); when these are refused (a limit),
    the full enumeration decides, with its own limits and messages."""
    from ..fsa.dclasses import green_classes

    limit = min(max_elements, ENUMERATION_THRESHOLD)
    try:
        return TransitionMonoid(a, max_elements=limit, max_bytes=max_bytes)
    except LimitExceededError as exc:
        if max_elements <= ENUMERATION_THRESHOLD or f"the element limit of {limit:,}" not in str(exc):
            raise  # the user's element limit, or the memory limit (elements too large to hold even 2^18): as before
    try:
        S = green_classes(a, max_bytes=max_bytes)
    except LimitExceededError:
        return TransitionMonoid(a, max_elements=max_elements, max_bytes=max_bytes)
    if S.size > max_elements:
        raise LimitExceededError(
            f"transition monoid has {S.size:,} elements, over the element limit of {max_elements:,}"
        )
    return S


def analysis(
    a: Automaton,
    max_elements: int = MAX_ELEMENTS,
    cascade: bool = True,
    step: Callable[[str], None] = lambda stage: None,
    max_bytes: int = MAX_BYTES,
) -> dict[str, Any]:
    """The JSON object of `analyze --json`: {"automaton": …, "monoid": …, "realizability": …}.

    ``step(name)`` is called as each of the ANALYSIS_STAGES starts (for a progress bar)."""
    from ..fsa.realizability import realizability  # imports the holonomy code: after the limits are checked

    step(ANALYSIS_STAGES[0])
    M = monoid_structure(a, max_elements=max_elements, max_bytes=max_bytes)
    step(ANALYSIS_STAGES[1])
    G = M.green
    monoid: dict[str, Any] = {
        "size": M.size,
        "idempotents": M.number_of_idempotents,
        "d_classes": G.number_of_D_classes,
        "regular_d_classes": G.number_of_regular_D_classes,
        "r_classes": G.number_of_R_classes,
        "l_classes": G.number_of_L_classes,
        "h_classes": G.number_of_H_classes,
    }
    step(ANALYSIS_STAGES[2])
    monoid.update(classify(M))
    monoid["subgroups"] = [dict(d_class=h.d_class, **h.to_dict()) for h in G.maximal_subgroups]
    step(ANALYSIS_STAGES[3])
    return {
        "automaton": {"name": a.name, "states": a.n_states, "symbols": a.n_symbols},
        "monoid": monoid,
        "realizability": realizability(a, M, cascade=cascade),
    }


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
    help="Refuse monoids with more elements (exit 2). Monoids over 262,144 elements are analysed from their "
    "D-classes, without enumerating them.",
)
@click.option(
    "--max-memory",
    type=click.FloatRange(min=0, min_open=True),
    default=MAX_BYTES / 2**30,
    show_default=True,
    help="GiB the monoid and Green's structure may take; fewer elements are allowed when each is large; also "
    "bounds the image/kernel orbits and Schützenberger groups of the D-class analysis (exit 2).",
)
@click.option("--no-cascade", is_flag=True, help="Skip the holonomy decomposition in the realizability report.")
@max_states_option
def analyze_command(
    spec: str, as_json: bool, max_elements: int, max_memory: float, no_cascade: bool, max_states: int
) -> None:
    """Transition monoid, Green's classes, maximal subgroups and realizability of SPEC."""
    automaton = resolve_spec(spec, max_states=max_states)
    with stages("analyze", len(ANALYSIS_STAGES)) as step:
        report = analysis(
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
        click.echo(line)
