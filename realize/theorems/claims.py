"""A registry of the papers' checkable claims: one entry per claim, each with a check that runs in seconds.

Every entry has an id (``grazzi.thm3``, ``brandoit.thm4.1.i``, ``dlr.prod``, …), its source, a one-line statement,
a kind (``construction``, ``impossibility``, ``equivalence``, ``bound``) and a check. A check returns its evidence
as one or more :class:`Part` s or raises :class:`CheckFailed`; ``thorough=True`` runs larger instances.

The status follows from *how* each part was checked, never from the kind:

================  ======================================================================================
status            how the part was checked
================  ======================================================================================
``verified``      exact arithmetic (integers, rationals, exact tables) over every case the evidence names
``checked``       floating point or sampling: the evidence states the tolerance and the sample sizes
``demonstrated``  an impossibility shown on witnesses (evidence of the mechanism, not a proof)
================  ======================================================================================

An entry whose parts differ (an exact check and a float run) gets both words joined, e.g. ``verified+checked``,
and its evidence names each part; ``failed`` whenever a check fails (or raises). Checks are two-sided where the
claim allows: a construction is shown right *and* its checker is shown to reject a near miss.

This module is the registry; the checks live in grazzi.py, brandoit.py and dlr.py (the package imports them, in
that order: the table's order). Sources: ``grazzi`` — Grazzi et al., *Unlocking State-Tracking in Linear RNNs Through
Negative Eigenvalues*; ``brandoit`` — Brandoit et al., *Length-Independent State Tracking Under a Parallel Scan*;
``dlr`` — Gupta, Mehta & Berant, *Simplifying and Understanding State Space Models with Diagonal Linear RNNs*.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...fsa.errors import CheckFailed, UnknownTheoremError
from ...fsa.registry import did_you_mean
from ..robust import one_thread

KINDS = ("construction", "impossibility", "equivalence", "bound")
#: the status of a part, by how it was checked
PART_STATUSES = ("verified", "checked", "demonstrated")
#: every status an entry can get: a part status, several joined by "+" (in PART_STATUSES order), or failed
STATUSES = (
    *PART_STATUSES,
    "verified+checked",
    "verified+demonstrated",
    "checked+demonstrated",
    "verified+checked+demonstrated",
    "failed",
)


@dataclass(frozen=True)
class Part:
    """One part of an entry's evidence and how it was checked (one of PART_STATUSES)."""

    status: str
    evidence: str


def verified(evidence: str, *, cases: str) -> Part:
    """A part checked in exact arithmetic over every case named in ``cases``."""
    return Part("verified", f"{evidence} [exact; cases: {cases}]")


def checked(evidence: str, *, cases: str, tolerance: str | None = None, samples: str | None = None) -> Part:
    """A part checked in floating point or by sampling: its tolerance and/or sample sizes are stated."""
    if tolerance is None and samples is None:
        raise ValueError("a checked part states its tolerance or its sample sizes")
    how = "; ".join(
        x for x in (f"cases: {cases}", tolerance and f"tolerance {tolerance}", samples and f"samples: {samples}") if x
    )
    return Part("checked", f"{evidence} [{how}]")


def demonstrated(evidence: str, *, witnesses: str) -> Part:
    """A part showing an impossibility's mechanism on the witnesses named."""
    return Part("demonstrated", f"{evidence} [witnesses: {witnesses}]")


def combine(parts: Part | list[Part]) -> tuple[str, str]:
    """(status, evidence) of an entry from its parts (module docstring)."""
    parts = [parts] if isinstance(parts, Part) else list(parts)
    if not parts or not all(isinstance(p, Part) and p.status in PART_STATUSES for p in parts):
        raise TypeError("a check must return one or more Part (verified / checked / demonstrated)")
    kinds = [k for k in PART_STATUSES if any(p.status == k for p in parts)]
    if len(kinds) == 1:
        return kinds[0], "; ".join(p.evidence for p in parts)
    return "+".join(kinds), " | ".join(f"{p.status}: {p.evidence}" for p in parts)


@dataclass(frozen=True)
class Theorem:
    id: str
    source: str
    statement: str
    kind: str
    check: Callable[[bool], Part | list[Part]]


REGISTRY: dict[str, Theorem] = {}


Check = Callable[[bool], "Part | list[Part]"]


def theorem(id: str, source: str, statement: str, kind: str) -> Callable[[Check], Check]:
    """Register ``check(thorough) -> Part | [Part, …]`` as the check of a claim."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")

    def deco(fn: Check) -> Check:
        if id in REGISTRY:
            raise ValueError(f"theorem {id!r} registered twice")
        REGISTRY[id] = Theorem(id, source, statement, kind, fn)
        return fn

    return deco


def require(ok: bool, evidence: str) -> None:
    """Raise CheckFailed(evidence) unless ``ok``."""
    if not ok:
        raise CheckFailed(evidence)


def registry() -> dict[str, Theorem]:
    """Every registered claim, by id, in registration order (the package registers the papers' claims on import)."""
    return REGISTRY


def run_theorem(entry: Theorem, thorough: bool = False) -> dict[str, Any]:
    """Run one check: ``{id, source, statement, kind, status, seconds, evidence, parts}`` (``parts``: the status
    and evidence of each part; empty when the check failed)."""
    start = time.perf_counter()
    try:
        with one_thread():  # small tensors: several intra-op threads only contend
            result = entry.check(thorough)
        status, evidence = combine(result)
        parts = [
            {"status": p.status, "evidence": " ".join(p.evidence.split())}
            for p in ([result] if isinstance(result, Part) else result)
        ]
    except CheckFailed as exc:
        evidence, status, parts = str(exc), "failed", []
    except Exception as exc:  # a crashing check is a failed one; say where
        where = traceback.extract_tb(exc.__traceback__)[-1]
        evidence, status = f"the check raised {type(exc).__name__}: {exc} ({where.filename}:{where.lineno})", "failed"
        parts = []
    return {
        "id": entry.id,
        "source": entry.source,
        "statement": entry.statement,
        "kind": entry.kind,
        "status": status,
        "seconds": round(time.perf_counter() - start, 3),
        "evidence": " ".join(str(evidence).split()),
        "parts": parts,
    }


def select(only: str | None = None) -> list[Theorem]:
    """Every registered claim in registration order, or the one with id ``only`` (UnknownTheoremError if none)."""
    reg = registry()
    if only is not None and only not in reg:
        raise UnknownTheoremError(
            f"unknown theorem id {only!r} (run `fsa2rnn theorems` for the list{did_you_mean(only, reg)})"
        )
    return [reg[only]] if only is not None else list(reg.values())


def run_theorems(only: str | None = None, thorough: bool = False) -> list[dict[str, Any]]:
    """Run every registered check (or the one with id ``only``; UnknownTheoremError for an unknown id)."""
    return [run_theorem(e, thorough) for e in select(only)]


__all__ = [
    "KINDS",
    "PART_STATUSES",
    "REGISTRY",
    "STATUSES",
    "CheckFailed",
    "Part",
    "Theorem",
    "UnknownTheoremError",
    "checked",
    "combine",
    "demonstrated",
    "registry",
    "require",
    "run_theorem",
    "run_theorems",
    "select",
    "theorem",
    "verified",
]
