"""The subset construction (Rabin–Scott) of an NFA with ε-moves, vectorized, refused as soon as it reaches a limit.

A DFA state is a set S of NFA states closed under ε-moves, held as a bitset of ⌈N/64⌉ words; δ_x(S) is the
ε-closure of the x-successors of S. The NFA's transitions are folded once into one bitset per (state p, symbol x)
with an x-move, T[p, x] = ε-closure(δ_x(p)), so that δ_x(S) = ⋁_{p ∈ S} T[p, x]: a breadth-first layer of DFA
states is expanded, for all symbols at once, by one gather and one OR-reduction, and the sets found are numbered
through one sort and one dictionary lookup per distinct set. The empty set is a state like any other (the dead
state), so the DFA is complete. Exponential patterns such as (a|b)*a(a|b)^20 are refused the moment the count
passes ``max_states`` (or the sets would pass MAX_SUBSET_BYTES), before the memory goes.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .errors import LimitExceededError

#: Default bound on the DFA states a determinization may build (as for the builtins' states).
MAX_DFA_STATES = 100_000
#: Bytes the subsets may take (each is kept as an array row and as a dictionary key).
MAX_SUBSET_BYTES = 1 << 30
#: Target number of (DFA state, NFA state) membership entries expanded per vectorized step.
_CHUNK = 1 << 22


def _bitsets(rows: np.ndarray, cols: np.ndarray, n_rows: int, n_bits: int) -> np.ndarray:
    """(n_rows, ⌈n_bits/64⌉) uint64 bitsets with bit cols[i] set in row rows[i]."""
    words = max(1, -(-n_bits // 64))
    out = np.zeros((n_rows, words), dtype=np.uint64)
    np.bitwise_or.at(out, (rows, cols // 64), np.left_shift(np.uint64(1), (cols % 64).astype(np.uint64)))
    return out


def epsilon_closures(n: int, eps_src: np.ndarray, eps_dst: np.ndarray) -> np.ndarray:
    """(n, words) bitsets: closure[q] = the states reachable from q by ε-moves (q included).

    The strongly connected components of the ε-graph share one closure; in reverse topological order of the
    condensation each component's closure is its own states OR its successors' closures — one OR per component,
    O((n + ε-moves)·words) in all."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    src, dst = np.asarray(eps_src, dtype=np.int64), np.asarray(eps_dst, dtype=np.int64)
    n_comp, comp = connected_components(
        coo_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n)), directed=True, connection="strong"
    )
    comp = comp.astype(np.int64)  # scipy's labels are int32: their pair codes below would overflow
    closure = _bitsets(comp, np.arange(n), n_comp, n)
    edges = np.unique(comp[src] * n_comp + comp[dst])
    cs, cd = edges // n_comp, edges % n_comp
    keep = cs != cd
    cs, cd = cs[keep], cd[keep]
    starts = np.searchsorted(cs, np.arange(n_comp + 1))  # condensation successors of c: cd[starts[c]:starts[c+1]]
    indegree = np.bincount(cd, minlength=n_comp).tolist()
    succ = cd.tolist()
    bounds = starts.tolist()
    order, queue = [], [c for c in range(n_comp) if indegree[c] == 0]
    while queue:  # Kahn's topological order
        c = queue.pop()
        order.append(c)
        for d in succ[bounds[c] : bounds[c + 1]]:
            indegree[d] -= 1
            if indegree[d] == 0:
                queue.append(d)
    for c in reversed(order):
        lo, hi = bounds[c], bounds[c + 1]
        if hi > lo:
            closure[c] |= np.bitwise_or.reduce(closure[cd[lo:hi]], axis=0)
    return closure[comp]


def _number(
    sets: np.ndarray, index: dict[bytes, int], limit: int, message: Callable[[int], str]
) -> tuple[np.ndarray, np.ndarray]:
    """Ids of bitset rows in ``index`` (new sets numbered on, in order of first occurrence) and the rows that were
    new; LimitExceededError(message(count)) as soon as the count would pass ``limit``."""
    rows = np.ascontiguousarray(sets).view(np.dtype((np.void, 8 * sets.shape[1]))).ravel()
    if len(rows) <= 64:  # a narrow layer: a plain loop beats the sorting below
        keys = rows.tolist()
        ids, new = [], []
        for i, key in enumerate(keys):
            sid = index.get(key)
            if sid is None:
                sid = len(index)
                if sid >= limit:
                    raise LimitExceededError(message(sid + 1))
                index[key] = sid
                new.append(i)
            ids.append(sid)
        return np.array(ids, dtype=np.int64), np.array(new, dtype=np.int64)
    _, first, inverse = np.unique(rows, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    first = first[order]
    keys = rows[first].tolist()
    found = np.array([index.get(key, -1) for key in keys], dtype=np.int64)
    fresh = np.flatnonzero(found < 0)
    if len(index) + len(fresh) > limit:
        raise LimitExceededError(message(limit + 1))
    found[fresh] = np.arange(len(index), len(index) + len(fresh))
    index.update(zip([keys[i] for i in fresh], found[fresh].tolist()))
    return found[rank[inverse.ravel()]], first[fresh]


_BIT = np.left_shift(np.uint64(1), np.arange(64, dtype=np.uint64))


def _memberships(sets: np.ndarray, first_pair: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(f, j): every (set f, pair j) with pair j's state in the bitset sets[f], f ascending. Pairs are sorted by
    state: those of state p are first_pair[p]:first_pair[p + 1]. O(words + members) per set, not O(pairs)."""
    fw, ww = np.nonzero(sets)  # the nonzero words
    bits = (sets[fw, ww][:, None] & _BIT[None, :]) != 0
    wi, b = np.nonzero(bits)
    f, p = fw[wi], ww[wi] * 64 + b
    count = first_pair[p + 1] - first_pair[p]
    total = int(count.sum())
    ends = np.cumsum(count)
    j = np.arange(total) - np.repeat(ends - count, count) + np.repeat(first_pair[p], count)
    return np.repeat(f, count), j


def determinize(
    n: int,
    initial: int,
    accepting: np.ndarray,
    moves: tuple[np.ndarray, np.ndarray, np.ndarray],
    eps: tuple[np.ndarray, np.ndarray],
    n_symbols: int,
    max_states: int = MAX_DFA_STATES,
    what: str = "the NFA",
) -> tuple[np.ndarray, np.ndarray]:
    """Complete DFA of an NFA on states 0..n-1: ``moves`` = (src, symbol, dst) arrays, ``eps`` = (src, dst).

    Returns ``(table, accepting)``: table (n_symbols, m) int64 with DFA state 0 the ε-closure of ``initial``,
    the others numbered in the order the breadth-first search finds them; accepting (m,) bool. LimitExceededError
    as soon as a (max_states + 1)-th DFA state is found.
    """
    need = 16 * n * max(1, -(-n // 64))  # the closures and the folded moves: a bitset of n bits per state
    if need > MAX_SUBSET_BYTES:
        raise LimitExceededError(
            f"determinizing {what}: its {n:,} NFA states need {need >> 20:,} MiB of state sets, over the limit of "
            f"{MAX_SUBSET_BYTES >> 20:,} MiB"
        )
    closure = epsilon_closures(n, *eps)
    src, sym, dst = (np.asarray(a, dtype=np.int64) for a in moves)
    # one row per distinct (p, x) with an x-move: T[p, x] = ⋁ closure(q) over the x-successors q of p
    pairs, which = np.unique(src * n_symbols + sym, return_inverse=True)
    fold = np.zeros((len(pairs), closure.shape[1]), dtype=np.uint64)
    np.bitwise_or.at(fold, which.ravel(), closure[dst])
    pair_state, pair_symbol = pairs // n_symbols, pairs % n_symbols
    first_pair = np.searchsorted(pair_state, np.arange(n + 1))
    final = _bitsets(np.zeros(int(np.sum(accepting)), dtype=np.int64), np.flatnonzero(accepting), 1, n)[0]

    words = closure.shape[1]
    frontier = closure[initial][None, :]
    index = {frontier.tobytes(): 0}
    limit = min(max_states, MAX_SUBSET_BYTES // (16 * words))  # a set is kept twice: in its layer and as a key
    why = (
        f"the limit of {max_states:,} states"
        if limit == max_states
        else f"the {limit:,} sets of {n:,} NFA states that {MAX_SUBSET_BYTES >> 20} MiB hold"
    )

    def message(count: int) -> str:
        return f"determinizing {what} reached {count:,} DFA states, over {why}"

    rows: list[np.ndarray] = []
    accepts = [np.any(frontier & final[None, :], axis=1)]
    chunk = max(1, _CHUNK // max(1, len(pairs) + n_symbols * words))
    while len(frontier):
        layer = []
        for c0 in range(0, len(frontier), chunk):
            block = frontier[c0 : c0 + chunk]
            # successor set of (row f, symbol x) at flat position f·|Σ| + x: OR of T[p, x] over the members p
            f, j = _memberships(block, first_pair)
            g = f * n_symbols + pair_symbol[j]
            order = np.argsort(g, kind="stable")
            g, j = g[order], j[order]
            succ = np.zeros((len(block) * n_symbols, words), dtype=np.uint64)
            if len(g):
                starts = np.flatnonzero(np.concatenate([[True], g[1:] != g[:-1]]))
                succ[g[starts]] = np.bitwise_or.reduceat(fold[j], starts, axis=0)
            ids, new = _number(succ, index, limit, message)
            rows.append(ids.reshape(len(block), n_symbols))
            if len(new):
                layer.append(succ[new])
        frontier = np.concatenate(layer) if layer else np.empty((0, words), dtype=np.uint64)
        accepts.append(np.any(frontier & final[None, :], axis=1))
    return np.concatenate(rows).T.copy(), np.concatenate(accepts)
