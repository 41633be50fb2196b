"""Graph primitives (fsa/graphs.py) against scipy.sparse.csgraph on seeded random graphs: the same partitions into
strongly connected and connected components (both the plain-Python Tarjan and the scipy path), and the same
breadth-first predecessors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order
from scipy.sparse.csgraph import connected_components as scipy_components

from fsa2rnn.fsa import graphs


def _same_partition(a: np.ndarray, b: np.ndarray) -> bool:
    pairs = set(zip(a.tolist(), b.tolist(), strict=True))
    return len(pairs) == len(set(a.tolist())) == len(set(b.tolist()))


def _graph(seed: int) -> tuple[np.ndarray, np.ndarray, int]:
    rng = np.random.default_rng(seed)
    m = int(rng.integers(1, 80))
    e = int(rng.integers(0, 3 * m))
    return rng.integers(0, m, e), rng.integers(0, m, e), m


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("small", [True, False])
def test_components_equal_scipy(seed, small, monkeypatch):
    src, dst, m = _graph(seed)
    monkeypatch.setattr(graphs, "SMALL_GRAPH", 1 << 30 if small else 0)
    adj = csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(m, m))
    strong = scipy_components(adj, directed=True, connection="strong")[1]
    assert _same_partition(graphs.strong_components(src, dst, m), strong)
    weak = graphs.connected_components(src, dst, m)
    assert _same_partition(weak, scipy_components(adj, directed=False)[1])
    assert np.all(weak <= np.arange(m)) and np.all(weak[weak] == weak)  # each label is its component's least node


@pytest.mark.parametrize("seed", range(30))
def test_breadth_first_predecessors_equal_scipy(seed):
    src, dst, m = _graph(seed)
    start = int(np.random.default_rng(seed).integers(0, m))
    adj = csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(m, m))
    _, pred = breadth_first_order(adj, start, directed=True, return_predecessors=True)
    assert np.array_equal(graphs.breadth_first_predecessors(src, dst, m, start), pred)


def test_a_long_cycle_and_a_chain():
    """A 5000-node cycle is one component; a chain of 5000 nodes is 5000 (Tarjan without recursion)."""
    n = 5000
    cyc = graphs.strong_components(np.arange(n), (np.arange(n) + 1) % n, n)
    chain = graphs.strong_components(np.arange(n - 1), np.arange(1, n), n)
    assert len(set(cyc.tolist())) == 1 and len(set(chain.tolist())) == n
