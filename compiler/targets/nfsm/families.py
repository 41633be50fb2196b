"""Head families of a one-layer NFSM with known codes: what the anchored arm of Brandoit et al. supervises.

A *head family* is a list of heads, head i with d_i indices, a table σ_x per symbol and head (the head's index
moves by σ_x), and a *code* c_i(q) per state: the index head i stands on once the automaton is in state q. The
codes satisfy c_i(δ_x(q)) = σ_x(c_i(q)) for every state and symbol, the tuple of codes separates the states, and
every head starts on index 0 (the code of the initial state is 0).

- ``regular``: one head of |Q| indices, the states themselves (Prop. G.1);
- ``factored``: quotient heads of a group's regular action. A quotient head is a block system of the permutation
  group ⟨δ_x⟩ acting on the states (a G-congruence: the blocks are the cosets gH of a subgroup H, the head's
  index is the block, and δ_x permutes the blocks). The family is the cheapest (Σ d_i², then fewest heads) list
  of pairwise non-isomorphic block systems whose blocks separate the states, or the cheapest with given sizes; for
  groups of more than :data:`FACTORED_MAX_ORDER` elements, the point-tracking heads of a base of the natural action
  (Example G.7).

For the paper's tasks (docs/reproductions.md): S3 → (3, 2) (the image of a point and the parity) and S4 → (4, 3, 2)
(a point, the pairings of the four points, the parity), the authors' families; M11 → four heads of 11 points (a base
of the natural action), the authors' family; A5 → (10, 6, 5), cheaper (Σ d² = 161) than the authors' (5, 12)
(Σ d² = 169, a point and the cosets of a 5-cycle), which ``sizes=[5, 12]`` gives.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ....fsa.automaton import Automaton
from ....fsa.errors import ConstructionError, SpecError
from .heads import permutation_heads_plan

HEAD_FAMILIES = ("regular", "factored")
#: ``factored`` enumerates the block systems of groups up to this order; larger groups track a base of points
FACTORED_MAX_ORDER = 60
#: the most heads a factored family may have
MAX_FACTORED_HEADS = 4


@dataclass
class HeadFamily:
    family: str
    sizes: list[int]  #: d_i per head
    codes: np.ndarray  #: (|Q|, H) int64: head i's index in state q (0 in the initial state)
    tables: np.ndarray  #: (|Σ|, H, max d) int64: σ_x of head i (identity past d_i)
    source: str  #: one line: where the heads come from

    @property
    def cost(self) -> int:
        return sum(d * d for d in self.sizes)


def head_family(a: Automaton, family: str, sizes: list[int] | None = None) -> HeadFamily:
    """The ``regular`` or ``factored`` head family of the automaton (see the module docstring). With ``sizes``
    (factored only), the cheapest separating family of block systems with exactly those numbers of blocks."""
    if family not in HEAD_FAMILIES:
        raise SpecError(f"head family must be one of {', '.join(HEAD_FAMILIES)}, got {family!r}")
    if a.initial is None:
        raise SpecError("a head family needs an automaton with an initial state")
    trans = np.asarray(a.transitions, dtype=np.int64)
    if family == "regular":
        return _family("regular", [np.arange(a.n_states)], trans, a.initial, f"one head of {a.n_states} states")
    if not a.is_group_automaton:
        raise ConstructionError("factored heads need a group automaton (every symbol a permutation)")
    if a.n_states > FACTORED_MAX_ORDER and sizes is not None:
        raise ConstructionError(f"factored heads of given sizes need a group of ≤ {FACTORED_MAX_ORDER} elements")
    if a.n_states > FACTORED_MAX_ORDER:
        plan = permutation_heads_plan(a)
        layer = plan.layers[0]
        blocks = _point_codes(trans, a.initial, np.asarray(layer.bank), plan.initial, a.n_states)
        return _family("factored", blocks, trans, a.initial, plan.source)
    systems = block_systems(trans, a.initial)
    best = _cheapest_separating(systems, trans, sizes)
    if best is None:
        want = f" with sizes {sizes}" if sizes else ""
        raise ConstructionError(f"no family of pairwise distinct quotient heads{want} separates the states")
    if sizes:  # in the order asked for
        best = sorted(best, key=lambda b: list(sizes).index(int(b.max()) + 1))
    src = "quotient heads " + " + ".join(f"{len(np.unique(b))} cosets" for b in best) + " of the regular action"
    return _family("factored", best, trans, a.initial, src)


def block_systems(trans: np.ndarray, q0: int) -> list[np.ndarray]:
    """Every nontrivial block system of the transitive permutation group ⟨δ_x⟩ on the states, as a label array
    (|Q|,) per system: the minimal systems joining q0 with each state, closed under joins (a join of congruences
    is a congruence)."""
    n = trans.shape[1]
    found: dict[bytes, np.ndarray] = {}
    frontier = []
    for q in range(n):
        if q == q0:
            continue
        labels = _congruence(trans, np.arange(n), [(q0, q)])
        key = labels.tobytes()
        if key not in found:
            found[key] = labels
            frontier.append(labels)
    while frontier:
        new = []
        for a_ in frontier:
            for b in list(found.values()):
                joined = _join(trans, a_, b)
                key = joined.tobytes()
                if key not in found:
                    found[key] = joined
                    new.append(joined)
        frontier = new
    systems = [s for s in found.values() if 1 < len(np.unique(s))]
    systems.append(np.arange(n))  # the discrete partition: the regular head
    return sorted(systems, key=lambda s: -len(np.unique(s)))


def _congruence(trans: np.ndarray, labels: np.ndarray, pairs: list[tuple[int, int]]) -> np.ndarray:
    """The finest congruence coarser than ``labels`` that merges ``pairs`` (union-find, merges propagated by δ)."""
    parent = list(range(len(labels)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    todo = list(pairs)
    first: dict[int, int] = {}
    for q, lab in enumerate(labels.tolist()):
        if lab in first:
            todo.append((first[lab], q))
        else:
            first[lab] = q
    while todo:
        p, q = todo.pop()
        rp, rq = find(p), find(q)
        if rp == rq:
            continue
        parent[rq] = rp
        todo.extend((int(t[p]), int(t[q])) for t in trans)
    roots = np.array([find(q) for q in range(len(labels))])
    _, canon = np.unique(roots, return_inverse=True)
    return _canonical(canon)


def _join(trans: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    pairs = []
    first: dict[int, int] = {}
    for q, lab in enumerate(b.tolist()):
        if lab in first:
            pairs.append((first[lab], q))
        else:
            first[lab] = q
    return _congruence(trans, a, pairs)


def _canonical(labels: np.ndarray) -> np.ndarray:
    """Relabel blocks in order of first appearance."""
    _, first = np.unique(labels, return_index=True)
    order = np.argsort(first)
    remap = np.empty_like(order)
    remap[order] = np.arange(len(order))
    return remap[labels].astype(np.int64)


def _block_action(trans: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(|Σ|, d): δ_x on the blocks."""
    d = int(labels.max()) + 1
    rep = np.array([np.flatnonzero(labels == b)[0] for b in range(d)])
    return labels[trans[:, rep]]


def _isomorphic(x: np.ndarray, y: np.ndarray) -> bool:
    """Two transitive actions (|Σ|, d) on blocks are isomorphic G-sets (block 0 of x sent to some block of y)."""
    if x.shape != y.shape:
        return False
    d = x.shape[1]
    for j in range(d):
        phi = np.full(d, -1)
        phi[0] = j
        stack, ok = [0], True
        while stack and ok:
            b = stack.pop()
            for s in range(x.shape[0]):
                u, v = int(x[s, b]), int(y[s, phi[b]])
                if phi[u] < 0:
                    phi[u] = v
                    stack.append(u)
                elif phi[u] != v:
                    ok = False
                    break
        if ok:
            return True
    return False


def _cheapest_separating(
    systems: list[np.ndarray], trans: np.ndarray, sizes: list[int] | None = None
) -> list[np.ndarray] | None:
    actions = [_block_action(trans, s) for s in systems]
    n = trans.shape[1]
    best, best_key = None, None
    for k in [len(sizes)] if sizes else range(1, MAX_FACTORED_HEADS + 1):
        for combo in itertools.combinations(range(len(systems)), k):
            if sizes and sorted(actions[i].shape[1] for i in combo) != sorted(sizes):
                continue
            cost = sum(actions[i].shape[1] ** 2 for i in combo)
            if best_key is not None and (cost, k) >= best_key:
                continue
            if len(np.unique(np.stack([systems[i] for i in combo], 1), axis=0)) != n:
                continue
            if any(_isomorphic(actions[i], actions[j]) for i, j in itertools.combinations(combo, 2)):
                continue
            best, best_key = [systems[i] for i in combo], (cost, k)
    return best


def _point_codes(trans: np.ndarray, q0: int, bank: np.ndarray, start: list[int], n: int) -> list[np.ndarray]:
    """Codes of point-tracking heads: head i's index in every state, by a walk from the initial state."""
    codes = np.full((n, len(start)), -1, dtype=np.int64)
    codes[q0] = start
    stack = [q0]
    while stack:
        q = stack.pop()
        for x in range(trans.shape[0]):
            r = int(trans[x, q])
            img = bank[x, np.arange(len(start)), codes[q]]
            if codes[r, 0] < 0:
                codes[r] = img
                stack.append(r)
            elif not np.array_equal(codes[r], img):
                raise ConstructionError("the point-tracking heads are not a function of the state")
    return [codes[:, i] for i in range(len(start))]


def _family(name: str, blocks: list[np.ndarray], trans: np.ndarray, q0: int, source: str) -> HeadFamily:
    """Codes relabelled so that the initial state is index 0 of every head; the tables read off the codes."""
    codes, tables, sizes = [], [], []
    for lab in blocks:
        lab = np.asarray(lab, dtype=np.int64)
        d = int(lab.max()) + 1
        swap = np.arange(d)
        swap[[0, lab[q0]]] = swap[[lab[q0], 0]]
        lab = swap[lab]
        table = np.tile(np.arange(d), (trans.shape[0], 1))
        table[:, lab] = lab[trans]
        if not np.array_equal(table[:, lab], lab[trans]):
            raise ConstructionError(f"a head of {d} indices does not step on its own index")
        codes.append(lab)
        tables.append(table)
        sizes.append(d)
    d_max = max(sizes)
    bank = np.tile(np.arange(d_max), (trans.shape[0], len(sizes), 1))
    for i, t in enumerate(tables):
        bank[:, i, : t.shape[1]] = t
    codes_arr = np.stack(codes, 1)
    if len(np.unique(codes_arr, axis=0)) != trans.shape[1]:
        raise ConstructionError("the heads do not separate the states")
    return HeadFamily(name, sizes, codes_arr, bank, source)
