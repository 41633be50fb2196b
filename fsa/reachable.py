"""The reachable part of an automaton: the states δ_w(q0) for all words w (breadth-first search in numpy)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .indices import STATE_DTYPE

if TYPE_CHECKING:  # the operations build automata with Automaton.replace: no import cycle
    from .automaton import Automaton


def bfs_order(a: Automaton, start: int | None = None) -> np.ndarray:
    """States reachable from ``start`` (default: the initial state) in breadth-first order.

    Ties are broken like a queue: earlier states first, then symbols in alphabet order; this is the canonical
    numbering used by :func:`fsa2rnn.fsa.minimize.canonical_order`. One numpy step per BFS level.
    """
    q0 = a.initial if start is None else a.state_index(start)
    if q0 is None:
        raise ValueError("bfs_order needs a start state (the automaton has no initial state)")
    return bfs_order_table(a.transitions, q0)


def bfs_order_table(table: np.ndarray, start: int) -> np.ndarray:
    """:func:`bfs_order` on a bare (k, n) transition table."""
    n = table.shape[1]
    seen = np.zeros(n, dtype=bool)
    seen[start] = True
    frontier = np.array([start], dtype=STATE_DTYPE)
    levels = [frontier]
    found = 1
    while len(frontier) and found < n:
        succ = table[:, frontier].T.ravel()  # frontier-major, then symbol
        _, first = np.unique(succ, return_index=True)
        first.sort()
        cand = succ[first]
        frontier = cand[~seen[cand]]
        seen[frontier] = True
        found += len(frontier)
        levels.append(frontier)
    return np.concatenate(levels)


def reachable_mask(a: Automaton) -> np.ndarray:
    """Boolean mask of the states reachable from the initial state (all True without an initial state)."""
    mask = np.zeros(a.n_states, dtype=bool)
    if a.initial is None:
        mask[:] = True
    else:
        mask[bfs_order(a)] = True
    return mask


def restrict(a: Automaton, keep: np.ndarray) -> Automaton:
    """The sub-automaton on the states ``keep`` (indices, in the given order), closed under every δ_x."""
    keep = np.asarray(keep, dtype=STATE_DTYPE)
    new_index = np.full(a.n_states, -1, dtype=STATE_DTYPE)
    new_index[keep] = np.arange(len(keep))
    table = new_index[a.transitions[:, keep]]
    if np.any(table < 0):
        raise ValueError("restrict: the kept states are not closed under the transitions")
    acc = None if a.accepting is None else np.flatnonzero(a.accepting[keep]).tolist()
    initial = None if a.initial is None else int(new_index[a.initial])
    same = len(keep) == a.n_states and np.array_equal(keep, np.arange(a.n_states))
    return a.replace(
        transitions=table,
        states=[a.states[i] for i in keep],
        initial=initial,
        accepting=acc,
        factors=a.factors if same else None,
    )


def reachable(a: Automaton) -> Automaton:
    """The reachable part (states keep their names and relative order); ``a`` itself if every state is reachable
    or there is no initial state."""
    mask = reachable_mask(a)
    if mask.all():
        return a
    return restrict(a, np.flatnonzero(mask))
