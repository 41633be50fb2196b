"""Minimization by partition refinement (Moore's algorithm, vectorized).

For an automaton with an accepting set: the minimal DFA of its language — the reachable part (from the initial
state, if any) quotiented by Nerode equivalence, p ~ q iff δ_w(p) ∈ F ⇔ δ_w(q) ∈ F for every word w. Moore's
refinement splits classes by (class, class of each successor) until stable; each round is a handful of np.unique
calls, O(k·n log n); the number of rounds is at most the depth of the distinguishing words (small for random
automata, n in the worst case).

For a semiautomaton (no accepting set) there is no language to preserve: the state itself is the output, so no two
states may be merged and minimization returns the reachable part (``a`` itself without an initial state).
"""

from __future__ import annotations

import numpy as np

from .automaton import STATE_DTYPE, Automaton
from .reachable import bfs_order, reachable


def nerode_classes(a: Automaton) -> np.ndarray:
    """Class id of each state under Nerode equivalence w.r.t. the accepting set (ids 0..c-1 by first occurrence).

    Every state is treated as a potential start (no reachability is taken into account)."""
    if a.accepting is None:
        return np.arange(a.n_states, dtype=STATE_DTYPE)
    cls = _first_occurrence_ids(a.accepting.astype(STATE_DTYPE))
    count = int(cls.max()) + 1
    t = a.transitions
    while True:
        key = cls
        for x in range(a.n_symbols):
            key = _first_occurrence_ids(key * count + cls[t[x]])
        new_count = int(key.max()) + 1
        cls = key
        if new_count == count:
            return cls
        count = new_count


def _first_occurrence_ids(values: np.ndarray) -> np.ndarray:
    """Relabel values by order of first occurrence: 0, 1, 2, … (the result determines the same partition)."""
    _, first, inverse = np.unique(values, return_index=True, return_inverse=True)
    rank = np.empty(len(first), dtype=STATE_DTYPE)
    rank[np.argsort(first, kind="stable")] = np.arange(len(first))
    return rank[inverse.reshape(-1)]


def canonical_order(a: Automaton) -> np.ndarray:
    """A canonical state order: BFS from the initial state (queue order, symbols in alphabet order), then any
    unreachable states in index order. Two initially-connected automata over the same alphabet are isomorphic iff
    renumbering both by this order gives identical tables and accepting sets."""
    if a.initial is None:
        return np.arange(a.n_states, dtype=STATE_DTYPE)
    order = bfs_order(a)
    if len(order) < a.n_states:
        rest = np.setdiff1d(np.arange(a.n_states), order)
        order = np.concatenate([order, rest])
    return order


def minimize(a: Automaton) -> Automaton:
    """The minimal automaton (see the module docstring): states numbered in canonical BFS order, each class named
    after its first member in that order. Keeps the symbols, the name and the ``action``."""
    r = reachable(a)
    if r.accepting is None:
        return r
    cls = nerode_classes(r)
    order = canonical_order(r)
    # number classes by first occurrence along the canonical order
    cls_in_order = cls[order]
    _, first = np.unique(cls_in_order, return_index=True)
    reps = order[np.sort(first)]  # representative state of each new class, in new order
    new_id = np.empty(int(cls.max()) + 1, dtype=STATE_DTYPE)
    new_id[cls[reps]] = np.arange(len(reps))
    table = new_id[cls[r.transitions[:, reps]]]
    return Automaton(
        table,
        states=[r.states[i] for i in reps],
        symbols=r.symbols,
        initial=None if r.initial is None else int(new_id[cls[r.initial]]),
        accepting=np.flatnonzero(r.accepting[reps]).tolist(),
        name=r.name,
        action=r.action,
    )


def is_minimal(a: Automaton) -> bool:
    """Whether ``a`` has no unreachable states and no two Nerode-equivalent states."""
    return minimize(a).n_states == a.n_states
