"""Algebraic classification of an automaton through its transition monoid M (docs/architecture.md, "Vocabulary").

- group: every δ_x is a permutation (then M is a group);
- aperiodic: every subgroup of M is trivial ⇔ M is H-trivial (finite monoids);
- commutative: the generators commute pairwise;
- solvable: every subgroup is solvable ⇔ every maximal subgroup is;
- definite of degree k: δ_w is a constant map for every word with |w| ≥ k. Let S = {δ_w : |w| ≥ 1}. M is definite
  ⇔ every idempotent of S is constant (a word of length ≥ |S| has a prefix p with p = p·e, e idempotent in S), and
  then k ≤ |S|; k is found by iterating W_j = {δ_w : |w| = j} (W_{j+1} = W_j·Σ on the right Cayley graph) until
  every element is constant. Without the monoid (:func:`definite_degree_of_generators`, used for a
  :class:`~fsa2rnn.fsa.dclasses.GreenClasses`): the pair graph on the 2-subsets {p, q} of states, with an edge
  {p, q} → {δ_x(p), δ_x(q)} when these differ; a word of length j keeps some pair apart ⇔ the graph has a path
  of j edges, so M is definite ⇔ the pair graph is acyclic, of degree (its longest path) + 1 (0 for one state);
- the syntactic monoid of a DFA's language is the transition monoid of its minimal DFA.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .errors import LimitExceededError
from .monoid import TransitionMonoid


def is_group(M: Any) -> bool:
    """Whether every generator is a permutation (then M is a group: a finite monoid of permutations)."""
    g = M.generators
    return bool(np.all(np.sort(g, axis=1) == np.arange(M.n_states, dtype=g.dtype)))


def is_aperiodic(M: Any) -> bool:
    """Whether all subgroups of M are trivial, i.e. every H-class is a singleton. O(|M|·|Σ|) (Green's classes), or
    from the D-classes of a GreenClasses."""
    return M.number_of_H_classes == M.size


def is_commutative(M: Any) -> bool:
    """Whether st = ts for all s, t ∈ M ⇔ the generators commute pairwise. O(|Σ|²·n)."""
    g = M.generators.astype(np.intp)
    for x in range(len(g)):
        after = g[:, g[x]]  # after[y] = g[y][g[x]]: apply x, then y
        before = g[x][g]  # before[y] = g[x][g[y]]: apply y, then x
        if not np.array_equal(after, before):
            return False
    return True


def is_solvable(M: Any) -> bool:
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


#: Most (state pairs × symbols) the pair-graph definiteness test handles.
MAX_PAIR_EDGES = 1 << 27


def definite_degree_of_generators(gens: Any) -> int | None:
    """The definite degree (or None) from the generators alone, by the pair graph (module docstring): peel the
    pairs without a surviving successor, one word length per vectorized step. O(n²·|Σ|) per length, at most
    n(n−1)/2 + 1 lengths; LimitExceededError beyond MAX_PAIR_EDGES pair edges."""
    g = np.asarray(gens, dtype=np.int64)
    k, n = g.shape
    if n == 1:
        return 0
    if n * (n - 1) // 2 * k > MAX_PAIR_EDGES:
        raise LimitExceededError(
            f"the definiteness test needs {n * (n - 1) // 2 * k:,} pair edges ({n:,} states), over the limit of "
            f"{MAX_PAIR_EDGES:,}"
        )
    p, q = np.triu_indices(n, 1)
    pair_id = np.full((n, n), -1, dtype=np.int64)
    pair_id[p, q] = np.arange(len(p))
    a, b = g[:, p], g[:, q]  # (k, pairs)
    succ = pair_id[np.minimum(a, b), np.maximum(a, b)].T  # (pairs, k), −1 where the pair collapses
    alive = np.ones(len(p), dtype=bool)  # A_j: pairs some word of length j keeps apart
    for j in range(len(p) + 1):
        if not alive.any():
            return j
        nxt = np.any((succ >= 0) & alive[np.maximum(succ, 0)], axis=1)
        if np.array_equal(nxt, alive):
            return None  # a cycle of pairs: some pair stays apart forever
        alive = nxt
    raise AssertionError("pair graph without a degree")  # pragma: no cover


def definite_degree(M: Any) -> int | None:
    """The least k such that every word of length ≥ k acts as a constant map, or None if M is not definite.

    On a TransitionMonoid: O(|S|·|Σ|) per word length and at most |S| + 1 lengths, after an O(|M|·n) check of the
    idempotents. On anything else with ``generators`` (a GreenClasses): :func:`definite_degree_of_generators`.
    """
    if not isinstance(M, TransitionMonoid):
        return definite_degree_of_generators(M.generators)
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


def is_definite(M: Any) -> bool:
    return definite_degree(M) is not None


def syntactic_monoid(automaton: Any) -> TransitionMonoid:
    """The syntactic monoid of the language of a DFA: the transition monoid of its minimal DFA (reachable part
    for a semiautomaton without accepting states)."""
    return TransitionMonoid(automaton.minimize())


def classify(M: Any) -> dict[str, Any]:
    """All predicates at once (JSON-able), of a TransitionMonoid or a GreenClasses (same answers)."""
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
    "definite_degree_of_generators",
    "semigroup_mask",
    "syntactic_monoid",
    "classify",
]
