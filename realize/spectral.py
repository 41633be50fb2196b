"""Which branch of Theorem 4.1 (length-independent-state-tracking §4) a compiled linear RNN is on, decided exactly.

A compiled "householder" or "diagonal" model is a cascade of affine recurrences: layer i computes
h_i ← A_i(r) h_i + B_i(r) with the row r chosen by the symbol and the decoded states of the layers above. Along an
exact trajectory the decodes are locally constant, so a perturbation confined to layer i evolves by the affine
recurrence of layer i driven by the exact rows: the block of layer i of Φ_w's linear part is A_i(r_|w|) ⋯ A_i(r_1).

Every row of a compiled model is, exactly (the integer, angle and exponent forms of compiler/targets/lrnn/exact.py):
*orthogonal* (a signed permutation, a rotation or reflection, a unimodular diagonal) or *zero* (a reset, A = 0).
A product of rows along a word is therefore orthogonal (ρ = 1) or zero (ρ = 0), and

- (i) some layer has a cycle w of the exact configuration graph, read from the configuration reached by a prefix p,
  along which all its rows are orthogonal: ρ(A_w) = 1 with Φ_w fixing that configuration. The error along the
  block's eigenvector of A_w is never damped: Theorem 4.1 (i), (R2) fails at every η > 0. Since every ‖A(r)‖ ≤ 1,
  an η-trajectory's error grows by at most η per step, so every η-trajectory stays right for t < r/η (r the cell
  inradius): the horizon Proposition F.15 bounds for isometries.
- (ii) otherwise every cycle meets a zero row in every layer (ρ(A_w) = 0 on every cycle): the rows that are not
  zero form an acyclic graph in every layer, whose longest path ℓ_i bounds how long an error survives in layer i.
  The error is then at most (ℓ_i + 1)·η, so the model is η-robust for η < min_i r_i/(ℓ_i + 1) — it forgets, and
  realizes at most a definite automaton (Theorem 4.1 (ii)).

Rows of any other kind (edited or trained weights) are handled numerically and reported as such.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from ..compiler.model import CompiledModel
from ..compiler.registry import program_of, target_of
from ..compiler.targets.lrnn.exact import ORTHOGONAL, OTHER, ZERO, ExactnessError, exact_interpreter
from ..fsa.errors import ModelFileError

#: most exact configurations the graph search visits
MAX_GRAPH_CONFIGURATIONS = 200_000



def row_classes(layer: Any) -> np.ndarray:
    """ZERO, ORTHOGONAL or OTHER for every row of an exact layer (compiler/targets/lrnn/exact.py)."""
    return layer.row_classes()


def configuration_graph(model: CompiledModel, limit: int = MAX_GRAPH_CONFIGURATIONS) -> dict[str, Any]:
    """The exact configuration graph of compiler/targets/lrnn/exact.py (``ExactLinearRNN.configuration_graph``): ``{n,
    edges: (E, 3) [source, symbol, target], rows: (E, L), dist: (n,), parent: (n, 2) [configuration, symbol],
    states, classes}`` (configuration 0 is the initial one)."""
    if not hasattr(target_of(model).load("exact_interpreter"), "configuration_graph"):  # the linear-RNN targets'
        raise ModelFileError(f"configuration graphs are for linear-RNN models, not target {model.target!r}")
    try:
        return exact_interpreter(model).configuration_graph(limit)
    except ExactnessError as exc:  # the exact forms reject weights they do not describe
        raise ModelFileError(f"the model's layers have no exact form: {exc} (run the exact check)") from None


def _path_to(graph: dict[str, Any], v: int) -> list[int]:
    """Symbols of the BFS path from the initial configuration to v."""
    word = []
    while v > 0:
        v, x = (int(c) for c in graph["parent"][v])
        word.append(x)
    return word[::-1]


def shortest_cycle(graph: dict[str, Any], usable: np.ndarray) -> tuple[list[int], list[int]] | None:
    """(prefix, cycle) symbols with |prefix| + |cycle| least: the cycle returns to the configuration the prefix
    reaches and uses only edges where ``usable``; None when those edges form no cycle."""
    e = graph["edges"][usable]
    n = graph["n"]
    succ: list[list[tuple[int, int]]] = [[] for _ in range(n)]
    for s, x, t in e.tolist():
        succ[s].append((t, x))
    # nodes on cycles: peel nodes without usable successors (Kahn on the reversed subgraph)
    out_deg = np.bincount(e[:, 0], minlength=n)
    preds: list[list[int]] = [[] for _ in range(n)]
    for s, _, t in e.tolist():
        preds[t].append(s)
    alive = out_deg > 0
    queue = deque(np.flatnonzero(~alive).tolist())
    while queue:
        v = queue.popleft()
        for p in preds[v]:
            if alive[p]:
                out_deg[p] -= 1
                if out_deg[p] == 0:
                    alive[p] = False
                    queue.append(p)
    best: tuple[int, int, list[int]] | None = None
    for v in sorted(np.flatnonzero(alive).tolist(), key=lambda u: graph["dist"][u]):
        if best is not None and graph["dist"][v] + 1 >= best[0]:
            break
        back: dict[int, tuple[int, int] | None] = {v: None}  # v's entry marks it seen; the walk back stops at v
        frontier, found = [v], None
        while frontier and found is None:
            nxt = []
            for u in frontier:
                for t, x in succ[u]:
                    if t == v:
                        found = (u, x)
                        break
                    if t not in back and alive[t]:
                        back[t] = (u, x)
                        nxt.append(t)
                if found:
                    break
            frontier = nxt
        if found is None:
            continue
        cycle, (u, x) = [x], found
        while u != v:
            u, x = back[u]
            cycle.append(x)
        cycle = cycle[::-1]
        total = int(graph["dist"][v]) + len(cycle)
        if best is None or total < best[0]:
            best = (total, v, cycle)
    if best is None:
        return None
    return _path_to(graph, best[1]), best[2]


def longest_path(graph: dict[str, Any], usable: np.ndarray) -> int:
    """Edges on the longest path of an acyclic subgraph (``usable`` edges)."""
    e = graph["edges"][usable]
    n = graph["n"]
    indeg = np.bincount(e[:, 2], minlength=n)
    succ: list[list[int]] = [[] for _ in range(n)]
    for s, _, t in e.tolist():
        succ[s].append(t)
    depth = np.zeros(n, dtype=np.int64)
    queue = deque(np.flatnonzero(indeg == 0).tolist())
    seen = 0
    while queue:
        v = queue.popleft()
        seen += 1
        for t in succ[v]:
            depth[t] = max(depth[t], depth[v] + 1)
            indeg[t] -= 1
            if indeg[t] == 0:
                queue.append(t)
    if seen < n:
        raise ValueError("longest_path: the subgraph has a cycle")
    return int(depth.max()) if n else 0


def theorem41_branch(model: CompiledModel) -> dict[str, Any]:
    """Theorem 4.1's branch of a compiled linear RNN, exactly (module docstring).

    ``{branch: "i" | "ii", spectral_radius, exact, layer, witness: {prefix, cycle} (symbol ids) | None,
    surviving: [ℓ_i + 1 per layer] (branch ii), configurations}``."""
    graph = configuration_graph(model)
    rows, classes = graph["rows"], graph["classes"]
    per_layer = [cls[rows[:, i]] for i, cls in enumerate(classes)]
    best = None
    for i, c in enumerate(per_layer):
        found = shortest_cycle(graph, c == ORTHOGONAL)
        if found is not None and (best is None or sum(map(len, found)) < sum(map(len, best[1]))):
            best = (i, found)
    exact = not any((c == OTHER).any() for c in per_layer)
    if best is not None:
        return {
            "branch": "i",
            "spectral_radius": 1.0,
            "exact": True,
            "layer": best[0],
            "witness": {"prefix": best[1][0], "cycle": best[1][1]},
            "surviving": None,
            "configurations": graph["n"],
        }
    if not exact:  # rows of other kinds: ρ along their cycles numerically
        return _numeric_branch(model, graph, per_layer)
    surviving = [longest_path(graph, c != ZERO) + 1 for c in per_layer]
    return {
        "branch": "ii",
        "spectral_radius": 0.0,
        "exact": True,
        "layer": None,
        "witness": None,
        "surviving": surviving,
        "configurations": graph["n"],
    }


def _numeric_branch(model: CompiledModel, graph: dict[str, Any], per_layer: list[np.ndarray]) -> dict[str, Any]:
    """Layers with rows that are neither orthogonal nor zero: ρ of the fused products along the shortest cycle of
    their nonzero rows (float64 eigenvalues)."""
    best_rho, best = 0.0, None
    for i, c in enumerate(per_layer):
        found = shortest_cycle(graph, c != ZERO)
        if found is None:
            continue
        prefix, cycle = found
        a = np.asarray(program_of(model).layers[i].a)
        v = 0
        for x in prefix:
            v = int(graph["edges"][(graph["edges"][:, 0] == v) & (graph["edges"][:, 1] == x)][0, 2])
        prod = np.eye(a.shape[-1])
        for x in cycle:
            sel = (graph["edges"][:, 0] == v) & (graph["edges"][:, 1] == x)
            prod = a[graph["rows"][sel][0, i]] @ prod
            v = int(graph["edges"][sel][0, 2])
        rho = float(np.max(np.abs(np.linalg.eigvals(prod))))
        if rho > best_rho:
            best_rho, best = rho, (i, found)
    if best is not None and best_rho >= 1 - 1e-12:
        witness = {"prefix": best[1][0], "cycle": best[1][1]}
        return {
            "branch": "i",
            "spectral_radius": best_rho,
            "exact": False,
            "layer": best[0],
            "witness": witness,
            "surviving": None,
            "configurations": graph["n"],
        }
    return {
        "branch": "ii",
        "spectral_radius": best_rho,
        "exact": False,
        "layer": None,
        "witness": None,
        "surviving": None,
        "configurations": graph["n"],
    }


__all__ = [
    "ORTHOGONAL",
    "OTHER",
    "ZERO",
    "configuration_graph",
    "longest_path",
    "row_classes",
    "shortest_cycle",
    "theorem41_branch",
]
