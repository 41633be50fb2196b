"""Graph primitives of the monoid engine: strongly connected components, connected components, breadth-first trees.

Graphs are edge lists ``src → dst`` on nodes 0..m−1. Small graphs never import scipy (its import costs more than
the whole analysis of a small monoid): strongly connected components by Tarjan's algorithm, iterative, in plain
Python on lists (O(m + E)); large ones by ``scipy.sparse.csgraph`` (Pearce's algorithm, in C). Connected
components (undirected) are vectorized at every size: hooking each edge's larger label onto its smaller one and
pointer jumping (Shiloach–Vishkin), O((m + E) log m). The breadth-first tree is vectorized per layer and equals
scipy's ``breadth_first_order`` predecessors: each node's neighbours are visited in increasing order, and a node's
predecessor is the first node of the previous layer, in queue order, with an edge to it.
"""

from __future__ import annotations

import numpy as np

#: Graphs with at most this many nodes + edges take the plain-Python Tarjan (no scipy import).
SMALL_GRAPH = 1 << 17


def strong_components(src: np.ndarray, dst: np.ndarray, m: int) -> np.ndarray:
    """A label per node, equal exactly for the nodes of one strongly connected component (labels 0..c−1, in no
    particular order: callers that need an order relabel)."""
    src = np.asarray(src, dtype=np.int64).ravel()
    dst = np.asarray(dst, dtype=np.int64).ravel()
    order = np.argsort(src, kind="stable") if np.any(src[1:] < src[:-1]) else slice(None)
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=m), out=indptr[1:])
    if m + len(src) > SMALL_GRAPH:
        from scipy.sparse import csr_matrix
        from scipy.sparse.csgraph import connected_components

        adj = csr_matrix((np.ones(len(src), dtype=np.int8), dst[order].astype(np.int32), indptr), shape=(m, m))
        return connected_components(adj, directed=True, connection="strong")[1].astype(np.int64)
    return np.array(_tarjan(indptr.tolist(), dst[order].tolist(), m), dtype=np.int64)


def _tarjan(indptr: list[int], indices: list[int], m: int) -> list[int]:
    """Tarjan's strongly connected components without recursion: labels in order of completion."""
    index = [-1] * m
    low = [0] * m
    on_stack = [False] * m
    label = [-1] * m
    stack: list[int] = []
    counter = comps = 0
    for root in range(m):
        if index[root] >= 0:
            continue
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack[root] = True
        work = [(root, indptr[root])]
        while work:
            v, i = work[-1]
            end = indptr[v + 1]
            descended = False
            while i < end:
                w = indices[i]
                i += 1
                if index[w] < 0:
                    work[-1] = (v, i)
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, indptr[w]))
                    descended = True
                    break
                if on_stack[w] and index[w] < low[v]:
                    low[v] = index[w]
            if descended:
                continue
            work.pop()
            if low[v] == index[v]:
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    label[w] = comps
                    if w == v:
                        break
                comps += 1
            if work:
                u = work[-1][0]
                if low[v] < low[u]:
                    low[u] = low[v]
    return label


def connected_components(src: np.ndarray, dst: np.ndarray, m: int) -> np.ndarray:
    """A label per node, equal exactly for the nodes of one connected component of the undirected graph: the
    smallest node of the component."""
    src = np.asarray(src, dtype=np.int64).ravel()
    dst = np.asarray(dst, dtype=np.int64).ravel()
    label = np.arange(m, dtype=np.int64)
    while True:
        a, b = label[src], label[dst]
        lo, hi = np.minimum(a, b), np.maximum(a, b)
        differ = lo != hi
        if not differ.any():
            return label
        np.minimum.at(label, hi[differ], lo[differ])  # hook: a root takes the smallest label pointing at it
        while True:  # pointer jumping: every node points at its root
            nxt = label[label]
            if np.array_equal(nxt, label):
                break
            label = nxt


def breadth_first_predecessors(src: np.ndarray, dst: np.ndarray, m: int, start: int) -> np.ndarray:
    """The breadth-first tree from ``start``: the predecessor of each node, −9999 for ``start`` and for the nodes it
    does not reach (scipy's convention)."""
    src = np.asarray(src, dtype=np.int64).ravel()
    dst = np.asarray(dst, dtype=np.int64).ravel()
    order = np.lexsort((dst, src))
    src, dst = src[order], dst[order]
    indptr = np.zeros(m + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=m), out=indptr[1:])
    pred = np.full(m, -9999, dtype=np.int64)
    seen = np.zeros(m, dtype=bool)
    seen[start] = True
    frontier = np.array([start], dtype=np.int64)
    while len(frontier):
        counts = indptr[frontier + 1] - indptr[frontier]
        total = int(counts.sum())
        if not total:
            break
        owner = np.repeat(np.arange(len(frontier)), counts)
        offset = np.arange(total) - np.repeat(np.cumsum(counts) - counts, counts)
        edge = indptr[frontier][owner] + offset  # the frontier's edges, in queue order then edge order
        tgt = dst[edge]
        new = ~seen[tgt]
        tgt, owner = tgt[new], owner[new]
        if not len(tgt):
            break
        _, first = np.unique(tgt, return_index=True)
        first = np.sort(first)
        nodes = tgt[first]
        pred[nodes] = frontier[owner[first]]
        seen[nodes] = True
        frontier = nodes
    return pred


__all__ = ["strong_components", "connected_components", "breadth_first_predecessors", "SMALL_GRAPH"]
