"""Minimization by partition refinement (Moore's algorithm, vectorized, finished by Hopcroft's when slow).

For an automaton with an accepting set: the minimal DFA of its language — the reachable part (from the initial
state, if any) quotiented by Nerode equivalence, p ~ q iff δ_w(p) ∈ F ⇔ δ_w(q) ∈ F for every word w. Moore's
refinement splits classes by (class, class of each successor) until stable; each round is a handful of np.unique
calls, O(k·n log n); the number of rounds is the length of the longest shortest distinguishing word (a few for
random automata, up to n for a long cycle), so after ``MOORE_ROUNDS`` rounds Hopcroft's algorithm takes over.

For a semiautomaton (no accepting set) there is no language to preserve: the state itself is the output, so no two
states may be merged and minimization returns the reachable part (``a`` itself without an initial state).

Moore machines (an output label per state, e.g. the class a trained model predicts in each extracted state):
:func:`moore_minimize` quotients the reachable part by Moore equivalence, p ~ q iff label(δ_w(p)) = label(δ_w(q))
for every word w, the empty word included — the same refinement started from the partition by label.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .errors import SpecError
from .indices import STATE_DTYPE
from .reachable import bfs_order, reachable, reachable_mask, restrict

if TYPE_CHECKING:  # the operations build automata with Automaton.replace: no import cycle
    from .automaton import Automaton

#: Moore rounds before switching to Hopcroft (random automata stabilize in a few rounds; a long cycle needs ~n).
MOORE_ROUNDS = 40


def nerode_classes(a: Automaton) -> np.ndarray:
    """Class id of each state under Nerode equivalence w.r.t. the accepting set (ids 0..c-1 by first occurrence).

    Every state is treated as a potential start (no reachability is taken into account). Up to ``MOORE_ROUNDS``
    vectorized Moore rounds, then Hopcroft's algorithm finishes from the partition reached (worst case
    O(k·n log n) splitter steps; each split costs one numpy pass over the block)."""
    if a.accepting is None:
        return np.arange(a.n_states, dtype=STATE_DTYPE)
    return _refine(a.transitions, _first_occurrence_ids(a.accepting.astype(STATE_DTYPE)))


def moore_classes(a: Automaton, labels: np.ndarray | list[int]) -> np.ndarray:
    """Class id of each state under Moore equivalence w.r.t. an output label per state (ids by first occurrence):
    p ~ q iff label(δ_w(p)) = label(δ_w(q)) for every word w. Labels are any integers; every state is a start."""
    return _refine(a.transitions, _first_occurrence_ids(_check_labels(a, labels)))


def _check_labels(a: Automaton, labels: np.ndarray | list[int]) -> np.ndarray:
    lab = np.asarray(labels)
    if lab.shape != (a.n_states,) or not np.issubdtype(lab.dtype, np.integer):
        raise SpecError(f"labels must be {a.n_states} integers (one per state), got shape {lab.shape} {lab.dtype}")
    return lab.astype(np.int64)


def _refine(t: np.ndarray, cls: np.ndarray) -> np.ndarray:
    """The coarsest partition refining ``cls`` (first-occurrence ids) that is stable under every δ_x: Moore rounds,
    then Hopcroft from the partition reached."""
    count = int(cls.max()) + 1
    for _ in range(MOORE_ROUNDS):
        key = cls
        for x in range(t.shape[0]):
            key = _first_occurrence_ids(key * count + cls[t[x]])
        new_count = int(key.max()) + 1
        cls = key
        if new_count == count:  # the new partition refines the old one: equal counts mean it is stable
            return cls
        count = new_count
    return _first_occurrence_ids(_hopcroft(t, cls))


def _hopcroft(t: np.ndarray, init: np.ndarray) -> np.ndarray:
    """Coarsest refinement of the partition ``init`` that is stable under every δ_x (Hopcroft 1971).

    Every initial block is a splitter (valid for any initial partition); afterwards each split enqueues the smaller
    half. The partition is kept as ``elems`` (states grouped by block) with per-block [first, end) ranges."""
    k, n = t.shape
    inverse = []  # CSR of δ_x^{-1}: preimages of q are order[ptr[q]:ptr[q+1]]
    for x in range(k):
        order = np.argsort(t[x], kind="stable")
        inverse.append((order, np.searchsorted(t[x][order], np.arange(n + 1))))
    elems = np.argsort(init, kind="stable")
    cuts = (np.flatnonzero(np.diff(init[elems])) + 1).tolist()
    first, end = [0, *cuts], [*cuts, n]
    block_of = np.empty(n, dtype=STATE_DTYPE)
    for b, (f, e) in enumerate(zip(first, end)):
        block_of[elems[f:e]] = b
    work = [(b, x) for b in range(len(first)) for x in range(k)]
    mark = np.zeros(n, dtype=bool)
    while work:
        b, x = work.pop()
        splitter = elems[first[b] : end[b]]
        order, ptr = inverse[x]
        starts, lengths = ptr[splitter], ptr[splitter + 1] - ptr[splitter]
        total = int(lengths.sum())
        if total == 0:
            continue
        offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
        pre = order[offsets + np.arange(total)]  # δ_x^{-1}(splitter), no repeats (δ_x is a function)
        counts = np.bincount(block_of[pre])
        mark[pre] = True
        for c in np.flatnonzero(counts).tolist():
            f, e = first[c], end[c]
            if counts[c] == e - f:
                continue
            seg = elems[f:e]
            inside = mark[seg]
            part_in, part_out = seg[inside], seg[~inside]
            small, big = (part_in, part_out) if len(part_in) <= len(part_out) else (part_out, part_in)
            elems[f:e] = np.concatenate([big, small])
            new = len(first)
            first.append(f + len(big))
            end.append(e)
            end[c] = f + len(big)
            block_of[small] = new
            work.extend((new, y) for y in range(k))
        mark[pre] = False
    return block_of


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
    q, reps = _quotient(r, nerode_classes(r))
    return q.replace(accepting=np.flatnonzero(r.accepting[reps]).tolist())


def moore_minimize(a: Automaton, labels: np.ndarray | list[int]) -> tuple[Automaton, np.ndarray]:
    """The minimal Moore machine of ``(a, labels)``: the reachable part quotiented by Moore equivalence
    (:func:`moore_classes`), numbered in canonical BFS order, and the label of each of its states. Keeps the
    symbols, the name and the ``action``; drops the accepting set (the labels are the output)."""
    lab = _check_labels(a, labels)
    keep = np.flatnonzero(reachable_mask(a))
    r = a if len(keep) == a.n_states else restrict(a, keep)
    lab = lab[keep]
    q, reps = _quotient(r.replace(accepting=None), moore_classes(r, lab))
    return q, lab[reps]


def _quotient(r: Automaton, cls: np.ndarray) -> tuple[Automaton, np.ndarray]:
    """r / cls with classes numbered by first occurrence along the canonical order, and each class's representative
    (its first member in that order); no accepting set."""
    order = canonical_order(r)
    _, first = np.unique(cls[order], return_index=True)
    reps = order[np.sort(first)]  # representative state of each new class, in new order
    new_id = np.empty(int(cls.max()) + 1, dtype=STATE_DTYPE)
    new_id[cls[reps]] = np.arange(len(reps))
    table = new_id[cls[r.transitions[:, reps]]]
    q = r.replace(
        transitions=table,
        states=[r.states[i] for i in reps],
        initial=None if r.initial is None else int(new_id[cls[r.initial]]),
        accepting=None,
        factors=None,
    )
    return q, reps


def is_minimal(a: Automaton) -> bool:
    """Whether ``a`` has no unreachable states and no two Nerode-equivalent states."""
    return minimize(a).n_states == a.n_states
