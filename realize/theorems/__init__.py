"""A registry of the papers' checkable claims: one entry per claim, each with a check that runs in seconds.

Every entry has an id (``grazzi.thm3``, ``brandoit.thm4.1.i``, ``dlr.prod``, …), its source, a one-line statement,
a kind and a check. A check returns its evidence (one line) or raises :class:`CheckFailed`; ``thorough=True`` runs
larger instances. The status follows from the kind:

=================  ==============  ======================================================================
kind               status if ok    what the check does
=================  ==============  ======================================================================
``construction``   ``verified``    compiles the construction, checks it exactly and runs it
``impossibility``  ``demonstrated`` shows the mechanism of the impossibility on instances (evidence, not a
                                   proof: e.g. the float32 state becoming constant)
``equivalence``    ``checked``     checks both sides agree on instances
``bound``          ``checked``     checks the bound on instances
=================  ==============  ======================================================================

and ``failed`` whenever a check fails (or raises). Sources: ``grazzi`` — Grazzi et al., *Unlocking State-Tracking in
Linear RNNs Through Negative Eigenvalues*; ``brandoit`` — Brandoit et al., *Length-Independent State Tracking Under a
Parallel Scan*; ``dlr`` — Gupta, Mehta & Berant, *Simplifying and Understanding State Space Models with Diagonal
Linear RNNs*.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from fsa2rnn.fsa.errors import CheckFailed, FsaError, UnknownTheoremError  # noqa: F401 (re-exported)

KINDS = ("construction", "impossibility", "equivalence", "bound")
STATUSES = ("verified", "demonstrated", "checked", "failed")
STATUS_OF_KIND = {
    "construction": "verified",
    "impossibility": "demonstrated",
    "equivalence": "checked",
    "bound": "checked",
}


@dataclass(frozen=True)
class Theorem:
    id: str
    source: str
    statement: str
    kind: str
    check: Callable[[bool], str]


REGISTRY: dict[str, Theorem] = {}


def theorem(
    id: str, source: str, statement: str, kind: str
) -> Callable[[Callable[[bool], str]], Callable[[bool], str]]:
    """Register ``check(thorough) -> evidence`` as the check of a claim."""
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}")

    def deco(fn: Callable[[bool], str]) -> Callable[[bool], str]:
        if id in REGISTRY:
            raise ValueError(f"theorem {id!r} registered twice")
        REGISTRY[id] = Theorem(id, source, statement, kind, fn)
        return fn

    return deco


def require(ok: bool, evidence: str) -> None:
    """Raise CheckFailed(evidence) unless ``ok``."""
    if not ok:
        raise CheckFailed(evidence)


def _load() -> None:
    from . import grazzi, brandoit, dlr  # noqa: F401, I001  (registration order: the table order)


def registry() -> dict[str, Theorem]:
    """Every registered claim, by id, in registration order."""
    _load()
    return REGISTRY


def run_theorem(entry: Theorem, thorough: bool = False) -> dict[str, Any]:
    """Run one check: ``{id, source, statement, kind, status, seconds, evidence}``."""
    from fsa2rnn.realize.robust import one_thread

    start = time.perf_counter()
    try:
        with one_thread():  # small tensors: several intra-op threads only contend
            evidence = entry.check(thorough)
        status = STATUS_OF_KIND[entry.kind]
    except CheckFailed as exc:
        evidence, status = str(exc), "failed"
    except Exception as exc:  # a crashing check is a failed one; say where
        where = traceback.extract_tb(exc.__traceback__)[-1]
        evidence, status = f"the check raised {type(exc).__name__}: {exc} ({where.filename}:{where.lineno})", "failed"
    return {
        "id": entry.id,
        "source": entry.source,
        "statement": entry.statement,
        "kind": entry.kind,
        "status": status,
        "seconds": round(time.perf_counter() - start, 3),
        "evidence": " ".join(str(evidence).split()),
    }


def select(only: str | None = None) -> list[Theorem]:
    """Every registered claim in registration order, or the one with id ``only`` (UnknownTheoremError if none)."""
    reg = registry()
    if only is not None and only not in reg:
        raise UnknownTheoremError(f"unknown theorem id {only!r} (run `fsa2rnn theorems` for the list)")
    return [reg[only]] if only is not None else list(reg.values())


def run_theorems(only: str | None = None, thorough: bool = False) -> list[dict[str, Any]]:
    """Run every registered check (or the one with id ``only``; UnknownTheoremError for an unknown id)."""
    return [run_theorem(e, thorough) for e in select(only)]


__all__ = [
    "KINDS",
    "REGISTRY",
    "STATUSES",
    "CheckFailed",
    "Theorem",
    "UnknownTheoremError",
    "registry",
    "require",
    "run_theorem",
    "run_theorems",
    "select",
    "theorem",
]
