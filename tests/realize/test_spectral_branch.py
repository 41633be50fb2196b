"""Theorem 4.1's branch (realize/spectral.py) on configuration graphs built by hand: the numeric branch for rows
that are neither orthogonal nor zero, the choice between layers, and the tie rules.

Oracle: every graph here is small enough to read its cycles off by eye; the spectral radius of a product of
diagonal (or triangular) matrices is the largest |diagonal entry| of the product, computed exactly in float64.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from fsa2rnn.realize import spectral
from fsa2rnn.realize.spectral import ORTHOGONAL, OTHER, ZERO, shortest_cycle, theorem41_branch

#  configurations 0, 1, 2 over symbols 0, 1:  0 -0-> 1 -0-> 2 -0-> 1,  symbol 1 loops on every configuration
EDGES = np.array([[0, 0, 1], [0, 1, 0], [1, 0, 2], [1, 1, 1], [2, 0, 1], [2, 1, 2]])
DIST = np.array([0, 1, 2])
PARENT = np.array([[-1, -1], [0, 0], [1, 0]])


def _graph(rows: list[list[int]], classes: list[list[int]]) -> dict:
    """EDGES with the row each edge uses in each layer (``rows[i][e]``) and the class of each layer's rows."""
    return {
        "n": 3,
        "edges": EDGES,
        "dist": DIST,
        "parent": PARENT,
        "rows": np.array(rows).T,
        "classes": [np.array(c) for c in classes],
        "states": np.zeros(3, dtype=np.int64),
    }


def _diag(*d: float) -> np.ndarray:
    return np.diag(np.array(d, dtype=np.float64))


def _use(monkeypatch, graph: dict, a: list[np.ndarray]) -> None:
    """theorem41_branch reads this graph, and the layers' stacked row matrices ``a[i]`` (R, d, d)."""
    monkeypatch.setattr(spectral, "configuration_graph", lambda model: graph)
    monkeypatch.setattr(spectral, "program_of", lambda model: SimpleNamespace(layers=[SimpleNamespace(a=x) for x in a]))


# every edge its own row (row e = edge e) in both layers
ROWS = [list(range(6)), list(range(6))]


def _layers(rho0: float, rho1: float) -> list[np.ndarray]:
    """Layer 0: the loop 1 -1-> 1 is diag(rho0, 0.25) (its other rows differ, so a wrong walk shows); layer 1: the
    cycle 1 -0-> 2 -0-> 1 multiplies diag(rho1, 0.5) and diag(1, 0.5) (in either order)."""
    a0 = np.stack([_diag(3.0, 3.0), _diag(5.0, 5.0), _diag(7.0, 7.0), _diag(rho0, 0.25), _diag(0.125, 9.0),
                   _diag(11.0, 11.0)])  # fmt: skip
    a1 = np.stack([_diag(3.0, 3.0), _diag(5.0, 5.0), _diag(rho1, 0.5), _diag(13.0, 13.0), _diag(1.0, 0.5),
                   _diag(17.0, 17.0)])  # fmt: skip
    return [a0, a1]


# layer 0: the loop at 0 is a zero row, the rest OTHER; layer 1: only the 1 -> 2 -> 1 cycle is not zero
NUMERIC = [[OTHER, ZERO, OTHER, OTHER, OTHER, OTHER], [ORTHOGONAL, ZERO, OTHER, ZERO, OTHER, ZERO]]


@pytest.mark.parametrize(
    ("rho0", "rho1", "branch", "rho", "layer", "witness"),
    [
        (0.5, 1.25, "i", 1.25, 1, {"prefix": [0], "cycle": [0, 0]}),  # layer 1's cycle grows
        (1.5, 0.75, "i", 1.5, 0, {"prefix": [0], "cycle": [1]}),  # layer 0's loop grows
        (0.5, 0.75, "ii", 0.75, None, None),  # both contract: ρ is the larger
        (0.875, 0.75, "ii", 0.875, None, None),
        (1.25, 1.25, "i", 1.25, 0, {"prefix": [0], "cycle": [1]}),  # a tie: the first layer
        (0.5, 1 - 1e-12, "i", 1 - 1e-12, 1, {"prefix": [0], "cycle": [0, 0]}),  # ρ ≥ 1 − 1e-12 counts as 1
        (0.5, 1 - 2e-12, "ii", 1 - 2e-12, None, None),
        (0.0, 0.0, "ii", 0.25, None, None),  # ρ is the largest |λ|, not the first
    ],
)
@pytest.mark.parametrize("order", [range(6), [2, 3, 4, 5, 0, 1]], ids=["edges", "edges rolled"])
def test_numeric_branch_rho_along_the_shortest_cycle_of_nonzero_rows(
    monkeypatch, order, rho0, rho1, branch, rho, layer, witness
):
    """Whatever the order of the graph's edges (the walk along p·w looks each step up by configuration and symbol)."""
    graph = _graph(ROWS, NUMERIC)
    graph["edges"], graph["rows"] = graph["edges"][list(order)], graph["rows"][list(order)]
    _use(monkeypatch, graph, _layers(rho0, rho1))
    got = theorem41_branch(object())
    assert got == {"branch": branch, "spectral_radius": rho, "exact": False, "layer": layer, "witness": witness,
                   "surviving": None, "configurations": 3}  # fmt: skip


def test_numeric_branch_skips_a_layer_without_cycles(monkeypatch):
    classes = [[OTHER, ZERO, OTHER, ZERO, ZERO, ZERO], [ORTHOGONAL, ZERO, OTHER, ZERO, OTHER, ZERO]]  # layer 0: a path
    _use(monkeypatch, _graph(ROWS, classes), _layers(9.0, 0.75))
    got = theorem41_branch(object())
    assert (got["branch"], got["spectral_radius"], got["exact"]) == ("ii", 0.75, False)


def test_numeric_branch_without_any_cycle(monkeypatch):
    classes = [[OTHER, ZERO, OTHER, ZERO, ZERO, ZERO]] * 2
    _use(monkeypatch, _graph(ROWS, classes), _layers(9.0, 9.0))
    got = theorem41_branch(object())
    assert got == {"branch": "ii", "spectral_radius": 0.0, "exact": False, "layer": None, "witness": None,
                   "surviving": None, "configurations": 3}  # fmt: skip


def test_exact_branches_pick_the_layer_with_the_shortest_orthogonal_cycle(monkeypatch):
    a = _layers(0.5, 0.5)
    # layer 0: the orthogonal cycle 1 -> 2 -> 1 (length 1 + 2); layer 1: the loop at 1 (length 1 + 1)
    classes = [[ORTHOGONAL, ZERO, ORTHOGONAL, ZERO, ORTHOGONAL, ZERO], [ORTHOGONAL, ZERO, ZERO, ORTHOGONAL, ZERO, ZERO]]
    _use(monkeypatch, _graph(ROWS, classes), a)
    got = theorem41_branch(object())
    assert got == {"branch": "i", "spectral_radius": 1.0, "exact": True, "layer": 1,
                   "witness": {"prefix": [0], "cycle": [1]}, "surviving": None, "configurations": 3}  # fmt: skip
    # equally short cycles in both layers: the first layer's
    classes[0] = [ORTHOGONAL, ZERO, ZERO, ORTHOGONAL, ZERO, ZERO]
    _use(monkeypatch, _graph(ROWS, classes), a)
    assert theorem41_branch(object())["layer"] == 0
    # an orthogonal cycle wins over OTHER rows elsewhere (exact: the witness is exact)
    classes[1] = [OTHER] * 6
    _use(monkeypatch, _graph(ROWS, classes), a)
    got = theorem41_branch(object())
    assert (got["branch"], got["exact"], got["layer"], got["spectral_radius"]) == ("i", True, 0, 1.0)


def test_exact_branch_ii_counts_the_longest_reset_free_path_per_layer(monkeypatch):
    # layer 0: 0 -0-> 1 -0-> 2 nonzero (2 edges), layer 1: 1 -0-> 2 only (1 edge); no orthogonal cycle
    classes = [[ORTHOGONAL, ZERO, ORTHOGONAL, ZERO, ZERO, ZERO], [ZERO, ZERO, ORTHOGONAL, ZERO, ZERO, ZERO]]
    _use(monkeypatch, _graph(ROWS, classes), _layers(0.5, 0.5))
    got = theorem41_branch(object())
    assert got == {"branch": "ii", "spectral_radius": 0.0, "exact": True, "layer": None, "witness": None,
                   "surviving": [3, 2], "configurations": 3}  # fmt: skip


def test_shortest_cycle_ties_go_to_the_shortest_prefix():
    """Two witnesses of the least total length 4: the 4-cycle through the initial configuration 0 (prefix ε) and the
    3-cycle 4 -> 5 -> 6 -> 4 one step away (prefix 1): the one reached first (shortest prefix) is returned."""
    edges = np.array([[0, 0, 1], [1, 0, 2], [2, 0, 3], [3, 0, 0], [0, 1, 4], [4, 0, 5], [5, 0, 6], [6, 0, 4]])
    g = {"n": 7, "edges": edges, "dist": np.array([0, 1, 2, 3, 1, 2, 3]),
         "parent": np.array([[-1, -1], [0, 0], [1, 0], [2, 0], [0, 1], [4, 0], [5, 0]])}  # fmt: skip
    assert shortest_cycle(g, np.ones(8, dtype=bool)) == ([], [0, 0, 0, 0])
    usable = np.array([True, True, True, False, True, True, True, True])  # the 4-cycle broken
    assert shortest_cycle(g, usable) == ([1], [0, 0, 0])


def test_branch_ii_radius_divides_each_inradius_by_its_surviving_steps(monkeypatch):
    """Theorem 4.1 (ii) as realize/conditions.py certifies it: an error survives at most ℓ_i + 1 steps in layer i,
    so η* = min_i r_i/(ℓ_i + 1). The compiled cascades of definite automata reset every step (ℓ_i + 1 = 1), so the
    branch is patched to report 2 and 3 surviving steps: η* must shrink to min(r_0/2, r_1/3)."""
    from fsa2rnn.compiler import compile_householder
    from fsa2rnn.fsa import resolve_spec
    from fsa2rnn.realize.conditions import check_conditions
    from fsa2rnn.realize.steppers import stepper_for

    a = resolve_spec("regex:(a|b)*a(a|b)")
    model = compile_householder(a, construction="cascade")
    real = spectral.theorem41_branch(model)
    assert real["branch"] == "ii" and set(real["surviving"]) == {1}
    radii = [b.radius for b in stepper_for(model).blocks]
    base = check_conditions(model, 0.01, simulate=False)
    assert base["radius"] == min(radii)
    surviving = [2 + i % 2 for i in range(len(radii))]
    monkeypatch.setattr(spectral, "theorem41_branch", lambda m: {**real, "surviving": surviving})
    got = check_conditions(model, 0.01, simulate=False)
    assert got["radius"] == min(r / s for r, s in zip(radii, surviving)) < min(radii)
    assert got["verdict"] == "robust"
    assert check_conditions(model, got["radius"], simulate=False)["verdict"] == "not_robust"


def test_shortest_cycle_searches_only_from_configurations_that_reach_a_cycle():
    """Configurations from which the usable edges reach no cycle are peeled off first, so a long usable path that
    ends nowhere costs one pass, not one search per configuration on it (MAX_GRAPH_CONFIGURATIONS is 200,000):
    20,000 configurations in a line whose last usable edge is missing, then a looping configuration, take well under
    a second (a search from each configuration of the line would take minutes)."""
    import time

    n = 20_000  # configurations 0 … n − 1 in a line, n loops; the edge n − 1 → n is not usable
    edges = np.array([[v, 0, v + 1] for v in range(n)] + [[n, 0, n]])
    g = {"n": n + 1, "edges": edges, "dist": np.arange(n + 1),
         "parent": np.array([[-1, -1]] + [[v, 0] for v in range(n)])}  # fmt: skip
    usable = np.ones(n + 1, dtype=bool)
    usable[n - 1] = False
    start = time.process_time()
    prefix, cycle = shortest_cycle(g, usable)
    assert (len(prefix), cycle) == (n, [0])
    assert time.process_time() - start < 10.0


def test_branch_ii_verdicts_for_a_non_definite_target_and_for_numeric_rows(monkeypatch):
    """Branch (ii) certifies a radius only for a definite target and exact rows: patched onto Z5's model (exact
    check passing, target not definite) the verdict is ``refused`` with a witness whose powers never become
    constant; with rows only numerically contracting (no surviving lengths) a definite target is not certified."""
    from fsa2rnn.compiler import compile_householder
    from fsa2rnn.fsa import resolve_spec
    from fsa2rnn.realize.conditions import check_conditions

    ii = {"branch": "ii", "spectral_radius": 0.5, "exact": False, "layer": None, "witness": None, "surviving": None,
          "configurations": 5}  # fmt: skip
    monkeypatch.setattr(spectral, "theorem41_branch", lambda m: ii)
    z5 = check_conditions(compile_householder(resolve_spec("Z5")), 0.01, simulate=False)
    assert (z5["verdict"], z5["theorem"]) == ("refused", "Theorem 4.1 (ii)") and z5["witness"]
    assert "not definite" in z5["evidence"]
    definite = check_conditions(compile_householder(resolve_spec("regex:(a|b)*ab"), construction="cascade"), 0.01,
                                simulate=False)  # fmt: skip
    assert (definite["verdict"], definite["theorem"]) == ("not_robust", "Theorem 4.1 (ii)")
    assert "no radius is certified" in definite["evidence"] and definite["spectral_radius"] == 0.5


def test_longest_path_of_an_empty_graph_and_row_classes():
    from fsa2rnn.realize.spectral import longest_path, row_classes

    empty = {"n": 0, "edges": np.zeros((0, 3), dtype=np.int64)}
    assert longest_path(empty, np.zeros(0, dtype=bool)) == 0
    layer = SimpleNamespace(row_classes=lambda: np.array([ZERO, ORTHOGONAL, OTHER]))
    assert row_classes(layer).tolist() == [ZERO, ORTHOGONAL, OTHER]
