"""Which architecture families realize an automaton, at what size, and why — in the two senses of docs/theory.md ("Two
meanings of finite precision").

- ``exact``: exact arithmetic with a finite set of reachable hidden states (the negative-eigenvalues paper's
  "finite precision": integer code points, 0/±1 matrices);
- ``robust``: realization under η-perturbations at every step and every length (the length-independent paper's
  sense, R1–R3; Theorem 4.1).

Each verdict is ``{"realizes": bool, ...sizes..., "theorem": str}``. Verdicts follow from the transition monoid's
algebra (fsa/classify.py); sizes come from a faithful permutation representation (fsa/permutation_rep.py) and the
holonomy skeleton (fsa/holonomy.py), and a refusal of either (a limit) is stated in the verdict.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .classify import definite_degree, is_aperiodic, is_commutative, is_group
from .errors import FsaError
from .group_series import series_sizes
from .holonomy import Skeleton, holonomy_levels
from .monoid import TransitionMonoid
from .permutation_rep import faithful_permutation_representation


def _moved_and_transpositions(perms: np.ndarray) -> tuple[int, int]:
    """Most points any permutation moves (k), and most transpositions any needs (moved − nontrivial cycles)."""
    most_moved, most_swaps = 0, 0
    for p in np.asarray(perms, dtype=np.int64):
        moved = np.flatnonzero(p != np.arange(len(p)))
        seen = np.zeros(len(p), dtype=bool)
        cycles = 0
        for i in moved:
            if not seen[i]:
                cycles += 1
                j = i
                while not seen[j]:
                    seen[j] = True
                    j = p[j]
        most_moved = max(most_moved, len(moved))
        most_swaps = max(most_swaps, len(moved) - cycles)
    return most_moved, most_swaps


def _permutation_representation(automaton: Any) -> tuple[np.ndarray, str]:
    try:
        rep = faithful_permutation_representation(automaton)
        return np.asarray(rep.perms), rep.source
    except FsaError:
        pass
    if automaton.action is not None:
        return np.asarray(automaton.action), "the automaton's natural action"
    return np.asarray(automaton.transitions), "the states (|Q|, an upper bound on the least degree)"


class _Skeleton:
    """The automaton's holonomy skeleton, built once on first use for both the cascade and the series sizes."""

    def __init__(self, automaton: Any) -> None:
        self.automaton = automaton
        self._built: Any = None

    def get(self) -> Any:
        if self._built is None:
            self._built = Skeleton(self.automaton.transitions)
        return self._built


def _cascade_sizes(automaton: Any, skeleton: _Skeleton) -> dict[str, Any]:

    try:  # the skeleton alone: levels and widths without coordinate tables
        levels = holonomy_levels(automaton, skeleton=skeleton.get())
    except FsaError as exc:
        return {"layers": None, "width": None, "note": f"cascade (holonomy decomposition refused: {exc})"}
    widths = [int(lv.n_points) for lv in levels]
    return {"layers": len(widths), "width": widths, "note": "one layer per holonomy level"}


def _series_sizes(automaton: Any, skeleton: _Skeleton) -> dict[str, Any]:
    """Layers and widths of the diagonal series construction (fsa/group_series.py), or nulls with the refusal."""
    try:
        sizes = series_sizes(automaton, None if automaton.is_group_automaton else skeleton.get())
    except FsaError as exc:
        return {"layers": None, "width": None, "note": f"series cascade (refused: {exc})"}
    return {
        "layers": sizes["layers"],
        "width": sizes["width"],
        "real": sizes["real"],
        "note": f"series cascade {sizes['display']} ({sizes['series']}), one diagonal layer per factor",
    }


def realizability(automaton: Any, monoid: Any = None, *, cascade: bool = True) -> dict[str, Any]:
    """The realizability report of an Automaton: architecture family → {"exact": verdict, "robust": verdict}.

    ``monoid`` may be passed when already computed (a TransitionMonoid, or the GreenClasses of
    fsa.dclasses.green_classes: the verdicts need only the generators, the D-classes and their subgroups);
    ``cascade=False`` skips the holonomy decomposition (its sizes are then reported as not computed).
    """
    M = monoid if monoid is not None else TransitionMonoid(automaton)
    n = automaton.n_states
    group = is_group(M)
    aperiodic = is_aperiodic(M)
    commutative = is_commutative(M)
    degree = definite_degree(M)
    definite = degree is not None
    subgroups = M.green.maximal_subgroups
    two_groups = all(h.order & (h.order - 1) == 0 for h in subgroups)
    solvable = all(h.is_solvable for h in subgroups)
    exponent2_abelian = (
        group
        and commutative
        and all(np.array_equal(g[g], np.arange(n)) for g in np.asarray(M.generators, dtype=np.int64))
    )
    robust_affine = {
        "realizes": definite,
        "definite_degree": degree,
        "theorem": "Theorem 4.1 (length-independent): an affine recurrence realizes robustly only definite automata"
        + ("" if definite else "; this automaton is not definite"),
    }
    report: dict[str, Any] = {}

    report["nfsm"] = {
        "exact": {"realizes": True, "heads": 1, "indices": n, "theorem": "Prop. G.1: one head with |Q| indices"},
        "robust": {
            "realizes": True,
            "heads": 1,
            "indices": n,
            "theorem": "Prop. G.1 with restoration (R2): the argmax table is re-applied at every step",
        },
    }

    skipped = {"layers": None, "width": None, "note": "cascade (not computed)"}
    skeleton = _Skeleton(automaton)
    cas = _cascade_sizes(automaton, skeleton) if cascade and not group else skipped  # groups: one layer (Theorem 3)
    if group:
        perms, source = _permutation_representation(automaton)
        k, swaps = _moved_and_transpositions(perms)
        exact_h = {
            "realizes": True,
            "layers": 1,
            "width": int(perms.shape[1]),
            "representation": source,
            "reflections_per_step": swaps,
            "most_points_moved": k,
            "theorem": "Theorem 3: one layer of permutation matrices, each a product of at most k−1 reflections",
        }
    else:
        exact_h = {
            "realizes": True,
            "layers": cas["layers"],
            "width": cas["width"],
            "note": cas["note"],
            "theorem": "Theorem 4: a cascade of permutation-reset layers (Krohn–Rhodes), one layer per level",
        }
    report["householder"] = {"exact": exact_h, "robust": dict(robust_affine)}

    if aperiodic:
        nonneg = {
            "realizes": True,
            "layers": cas["layers"],
            "theorem": "aperiodic: a cascade of reset layers (A ∈ {0, I}, B ≠ 0), eigenvalues in {0, 1}",
        }
    else:
        nonneg = {
            "realizes": False,
            "theorem": "Theorems 1–2: a nontrivial subgroup contains some C_p; counting modulo p needs an eigenvalue "
            "that is negative (p = 2, Theorem 1) or non-real (Theorem 2)",
        }
    if aperiodic:
        real = dict(nonneg)
    elif exponent2_abelian:
        real = {"realizes": True, "layers": 1, "width": n, "theorem": "an abelian group of exponent 2: diagonal ±1"}
    elif two_groups:
        series = _series_sizes(automaton, skeleton) if cascade else dict(skipped)
        real = {
            "realizes": True,
            "layers": series["layers"],
            "width": series["width"],
            "note": series["note"],
            "theorem": "every subgroup is a 2-group: a cascade of C2 (±1) and reset layers (Krohn–Rhodes; "
            "derived series refined to elementary abelian factors)",
        }
    else:
        real = {
            "realizes": False,
            "theorem": "Theorem 2: an element of odd prime order p in a subgroup gives counting modulo p, which "
            "needs a non-real eigenvalue",
        }
    if aperiodic:
        cplx = dict(nonneg)
    elif group and commutative:
        cplx = {
            "realizes": True,
            "layers": 1,
            "theorem": "a commutative group is a product of cyclic groups: rotations e^{2πi/m} on the diagonal",
        }
    elif solvable:
        if not (two_groups and cascade):
            series = _series_sizes(automaton, skeleton) if cascade else dict(skipped)
        cplx = {
            "realizes": True,
            "layers": series["layers"],
            "width": series["width"],
            "note": series["note"],
            "theorem": "solvable: a cascade of the abelian factors of each group's derived series (Kaloujnine–"
            "Krasner), unit-modulus roots of unity, and reset (B ≠ 0) layers (Krohn–Rhodes)",
        }
    else:
        cplx = {
            "realizes": False,
            "theorem": "a diagonal affine layer x ↦ a⊙x + b has a solvable transition monoid and cascades stay "
            "solvable; this monoid has a non-solvable subgroup",
        }
    report["diagonal_nonnegative"] = {"exact": nonneg, "robust": dict(robust_affine)}
    report["diagonal_real"] = {"exact": real, "robust": dict(robust_affine)}
    report["diagonal_complex"] = {"exact": cplx, "robust": dict(robust_affine)}
    report["affine_any"] = {
        "exact": {"realizes": True, "theorem": "contains the Householder cascade (Theorem 4)"},
        "robust": dict(robust_affine),
    }
    return report


__all__ = ["realizability"]
