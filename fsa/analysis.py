"""The analysis of an automaton that ``fsa2rnn analyze --json`` prints: transition monoid, Green's classes, maximal
subgroups, classification and realizability, as one JSON-able dict (docs/architecture.md, "Contracts").

The monoid is enumerated (fsa/monoid.py) when it has at most ENUMERATION_THRESHOLD elements, else analysed from
its D-classes (fsa/dclasses.py), never enumerated; the classification and the realizability verdicts follow from
the counts, the generators and the maximal subgroups (fsa/classify.py, fsa/realizability.py); see docs/monoid.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .automaton import Automaton
from .classify import classify
from .dclasses import green_classes
from .errors import LimitExceededError
from .monoid import MAX_ELEMENTS, TransitionMonoid
from .realizability import realizability

ANALYSIS_STAGES = ("transition monoid", "Green's classes", "subgroups and classification", "realizability")
#: Monoids with more elements are analysed from their D-classes (fsa.dclasses.green_classes), never enumerated.
ENUMERATION_THRESHOLD = 1 << 18
#: The memory the analysis may take by default (``analyze --max-memory``): every stage plans within it and refuses
#: as soon as a lower bound on what it needs is over it, so that a refusal costs less than 500 MiB in all.
ANALYZE_MAX_BYTES = 384 << 20


def monoid_structure(a: Automaton, max_elements: int = MAX_ELEMENTS, max_bytes: int = ANALYZE_MAX_BYTES) -> Any:
    """The transition monoid, enumerated (a TransitionMonoid) when it has at most ENUMERATION_THRESHOLD elements,
    else its D-class structure (a GreenClasses: size, idempotents, Green's classes and subgroups without the
    elements). The enumeration is tried first, stopped at the threshold; past it (and only when the threshold, not
    the memory limit, stopped it), the D-classes (orbits of images and kernels); when these are refused (a limit),
    the full enumeration decides, with its own limits and messages — refused at once when more than the threshold
    already outnumbers what ``max_bytes`` holds. Every stage stays within ``max_bytes``."""
    limit = min(max_elements, ENUMERATION_THRESHOLD)
    try:
        return TransitionMonoid(a, max_elements=limit, max_bytes=max_bytes)
    except LimitExceededError as exc:
        if max_elements <= ENUMERATION_THRESHOLD or f"the element limit of {limit:,}" not in str(exc):
            raise  # the user's element limit, or the memory limit (elements too large to hold even 2^18): as before
    try:
        S = green_classes(a, max_bytes=max_bytes)
    except LimitExceededError:
        return TransitionMonoid(a, max_elements=max_elements, max_bytes=max_bytes, at_least=limit + 1)
    if S.size > max_elements:
        raise LimitExceededError(
            f"transition monoid has {S.size:,} elements, over the element limit of {max_elements:,}"
        )
    return S


def analyze(
    a: Automaton,
    *,
    max_elements: int = MAX_ELEMENTS,
    max_bytes: int = ANALYZE_MAX_BYTES,
    cascade: bool = True,
    step: Callable[[str], None] = lambda stage: None,
) -> dict[str, Any]:
    """The JSON object of ``fsa2rnn analyze --json``: ``{"automaton": …, "monoid": …, "realizability": …}``.

    ``max_elements`` and ``max_bytes`` bound the monoid (LimitExceededError beyond them); ``cascade=False`` skips
    the holonomy decomposition in the realizability report; ``step(name)`` is called as each of the
    ANALYSIS_STAGES starts (for a progress bar)."""
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


__all__ = ["analyze", "monoid_structure", "ANALYSIS_STAGES", "ENUMERATION_THRESHOLD", "ANALYZE_MAX_BYTES"]
