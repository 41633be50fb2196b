"""Theorem 3 (negative-eigenvalues): a group automaton in one layer of reflections — construction ``permutation``.

With a faithful permutation representation ρ of degree d (fsa/permutation_rep.py), A(x) = P_ρ(δ_x) written as a
product of reflections I − 2vvᵀ with v = (e_i − e_j)/√2, one per transposition (Proposition 1, Figure 3), B ≡ 0 and
H_0 = (1, 2, …, d)ᵀ. Then H_t = P_ρ(δ_{x1…xt}) H_0 is a permutation of 1..d that identifies the group element; the
readout hashes it (key Σ_i (h_i − 1) dⁱ) to the element and maps the element g to the state g(q0).
"""

from __future__ import annotations

import numpy as np

from ....fsa.automaton import Automaton
from ....fsa.errors import LimitExceededError
from ....fsa.permutation_rep import PermutationRepresentation, faithful_permutation_representation
from . import gh
from .spec import GHLayerSpec, Readout

#: the hash readout needs d^d < 2^63
MAX_DEGREE = 15


def permutation_layer(
    automaton: Automaton, initial: int, rep: PermutationRepresentation | None = None
) -> tuple[GHLayerSpec, np.ndarray, dict]:
    """The Theorem 3 layer, the final readout table (element index → state) and summary facts."""
    rep = rep or faithful_permutation_representation(automaton, initial=initial)
    d = rep.degree
    if d > MAX_DEGREE:
        raise LimitExceededError(
            f"construction 'permutation': the representation found has degree {d} (limit {MAX_DEGREE} for the "
            f"hash readout; {rep.source})"
        )
    images, states = rep.elements(automaton, initial)
    # hidden vector of element g: H = P_g H0 with H0 = (1..d), i.e. H[g(i)] = i + 1
    hidden = np.empty_like(images)
    np.put_along_axis(hidden, images, np.arange(1, d + 1)[None, :], axis=1)
    keys = (hidden - 1) @ (d ** np.arange(d, dtype=np.int64))
    order = np.argsort(keys)
    factors = [gh.reflections_of_permutation(p) for p in rep.perms]
    layer = GHLayerSpec(
        width=d,
        keys=np.arange(automaton.n_symbols)[:, None],
        radix=[automaton.n_symbols],
        factors=factors,
        B=np.zeros((automaton.n_symbols, d)),
        h0=np.arange(1, d + 1, dtype=np.float64),
        readout=Readout("hash", keys=keys[order], values=order),
        note=f"faithful permutation representation of degree {d}: {rep.source}",
    )
    moved = int(max((p != np.arange(d)).sum() for p in rep.perms))
    facts = {
        "representation": rep.source,
        "degree": d,
        "group_order": int(len(images)),
        "bound": f"Theorem 3: width {d} (degree of ρ), at most k − 1 = {max(moved - 1, 0)} reflections per step "
        f"(k = {moved}, the most points one ρ(δ_x) moves)",
    }
    return layer, states, facts


def permutation(automaton: Automaton, initial: int) -> tuple[list[GHLayerSpec], np.ndarray, np.ndarray, dict]:
    """Layers, final readout keys (element index) and states, and summary facts for construction ``permutation``."""
    layer, states, facts = permutation_layer(automaton, initial)
    return [layer], np.arange(len(states))[:, None], states, facts
