"""Algebraic classification of an automaton through its transition monoid M (docs/architecture.md, "Vocabulary").

- group: every δ_x is a permutation (then M is a group);
- aperiodic: every subgroup of M is trivial ⇔ M is H-trivial (finite monoids);
- commutative: the generators commute pairwise;
- solvable: every subgroup is solvable ⇔ every maximal subgroup is;
- definite of degree k: δ_w is a constant map for every word with |w| ≥ k. Let S = {δ_w : |w| ≥ 1}. M is definite
  ⇔ every idempotent of S is constant (a word of length ≥ |S| has a prefix p with p = p·e, e idempotent in S), and
  then k ≤ |S|; k is found by iterating W_j = {δ_w : |w| = j} (W_{j+1} = W_j·Σ on the right Cayley graph) until
  every element is constant;
- the syntactic monoid of a DFA's language is the transition monoid of its minimal DFA.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .monoid import TransitionMonoid


def is_group(M: TransitionMonoid) -> bool:
    """Whether every generator is a permutation (then M is a group: a finite monoid of permutations)."""
    g = M.generators
    return bool(np.all(np.sort(g, axis=1) == np.arange(M.n_states, dtype=g.dtype)))


def is_aperiodic(M: TransitionMonoid) -> bool:
    """Whether all subgroups of M are trivial, i.e. every H-class is a singleton. O(|M|·|Σ|) (Green's classes)."""
    return M.number_of_H_classes == M.size


def is_commutative(M: TransitionMonoid) -> bool:
    """Whether st = ts for all s, t ∈ M ⇔ the generators commute pairwise. O(|Σ|²·n)."""
    g = M.generators.astype(np.intp)
    for x in range(len(g)):
        after = g[:, g[x]]  # after[y] = g[y][g[x]]: apply x, then y
        before = g[x][g]  # before[y] = g[x][g[y]]: apply y, then x
        if not np.array_equal(after, before):
            return False
    return True


def is_solvable(M: TransitionMonoid) -> bool:
    """Whether every subgroup of M is solvable (checked on one maximal subgroup per regular D-class)."""
    return all(H.is_solvable for H in M.green.maximal_subgroups)


def _constant_mask(M: TransitionMonoid) -> np.ndarray:
    E = M.elements
    return np.all(E == E[:, :1], axis=1)


def semigroup_mask(M: TransitionMonoid) -> np.ndarray:
    """Which elements are δ_w for some nonempty word (S = M \\ {1}, plus 1 when a nonempty word fixes every state)."""
    mask = np.ones(M.size, dtype=bool)
    mask[0] = bool(np.any(M.right_cayley == 0))
    return mask


def definite_degree(M: TransitionMonoid) -> int | None:
    """The least k such that every word of length ≥ k acts as a constant map, or None if M is not definite.

    O(|S|·|Σ|) per word length and at most |S| + 1 lengths, after an O(|M|·n) check of the idempotents.
    """
    const = _constant_mask(M)
    S = semigroup_mask(M)
    idem = M.idempotent_mask
    if np.any(idem & S & ~const):
        return None
    level = np.zeros(1, dtype=np.int64)  # W_0 = {identity}
    for k in range(M.size + 2):
        if np.all(const[level]):
            return k
        level = np.unique(M.right_cayley[level].ravel())
    raise AssertionError("definite monoid without a degree ≤ |S|")  # pragma: no cover


def is_definite(M: TransitionMonoid) -> bool:
    return definite_degree(M) is not None


def syntactic_monoid(automaton: Any) -> TransitionMonoid:
    """The syntactic monoid of the language of a DFA: the transition monoid of its minimal DFA (reachable part
    for a semiautomaton without accepting states)."""
    return TransitionMonoid(automaton.minimize())


def classify(M: TransitionMonoid) -> dict[str, Any]:
    """All predicates at once (JSON-able)."""
    k = definite_degree(M)
    return {
        "is_group": is_group(M),
        "is_aperiodic": is_aperiodic(M),
        "is_commutative": is_commutative(M),
        "is_solvable": is_solvable(M),
        "is_definite": k is not None,
        "definite_degree": k,
    }


__all__ = [
    "is_group",
    "is_aperiodic",
    "is_commutative",
    "is_solvable",
    "is_definite",
    "definite_degree",
    "semigroup_mask",
    "syntactic_monoid",
    "classify",
]
