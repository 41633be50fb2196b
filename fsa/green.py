"""Green's relations of a transition monoid, from the strongly connected components of its Cayley graphs.

For s, t in a monoid M: s R t ⇔ sM = tM ⇔ s and t are mutually reachable in the right Cayley graph (edges
s → s·δ_x); s L t ⇔ Ms = Mt ⇔ mutually reachable in the left Cayley graph (edges s → δ_x·s); H = R ∩ L; and, M
being finite, D = J: s J t ⇔ MsM = MtM ⇔ mutually reachable in the union of both graphs (computed from the R- and
L-labels through the egg-box: the components of the graph joining each element's R- and L-class). A D-class is regular
when it contains an idempotent; the H-class of an idempotent e is a group, the maximal subgroup at e, which acts
faithfully by permutations on the image of e (Clifford & Preston; Rhodes & Steinberg, The q-theory, §4.6).
Components come from fsa/graphs.py: O(|M|·|Σ|).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np

from .graphs import connected_components, strong_components
from .group_table import GroupTable
from .groups import describe_group, permutation_group, smaller_faithful_action

if TYPE_CHECKING:  # pragma: no cover
    from sympy.combinatorics import PermutationGroup

    from .monoid import TransitionMonoid


def _scc_labels(*graphs: np.ndarray) -> np.ndarray:
    """Labels of the strongly connected components of the union of the given (m, k) successor arrays,
    renumbered in order of their smallest element (so the identity's class is 0)."""
    m = len(graphs[0])
    cols = np.concatenate([g.reshape(-1) for g in graphs])
    rows = np.concatenate([np.repeat(np.arange(m), g.shape[1]) for g in graphs])
    return _first_occurrence_relabel(strong_components(rows, cols, m))


def _d_labels(R: np.ndarray, L: np.ndarray) -> np.ndarray:
    """D-labels from R- and L-labels: D = R∘L, and in a finite monoid every R-class of a D-class meets every
    L-class of it (the egg-box), so the D-classes are the connected components of the bipartite graph joining the
    R-class and the L-class of each element — a graph on #R + #L nodes, much smaller than the Cayley graphs."""
    nR, nL = int(R.max()) + 1, int(L.max()) + 1
    pairs = np.unique(R.astype(np.int64) * nL + L)
    comp = connected_components(pairs // nL, nR + pairs % nL, nR + nL)
    return _first_occurrence_relabel(comp[R])


def _first_occurrence_relabel(labels: np.ndarray) -> np.ndarray:
    """Labels renumbered 0, 1, … in order of first occurrence: O(m) for labels below 2m, else by sorting."""
    labels = np.asarray(labels, dtype=np.int64)
    m = len(labels)
    if m and 0 <= labels.min() and labels.max() < 2 * m:
        first = np.full(int(labels.max()) + 1, m, dtype=np.int64)
        np.minimum.at(first, labels, np.arange(m))  # each label's smallest position
        used = np.flatnonzero(first < m)
        rank = np.empty(len(first), dtype=np.int32)
        rank[used[np.argsort(first[used], kind="stable")]] = np.arange(len(used), dtype=np.int32)
        return rank[labels]
    uniq, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(len(uniq), dtype=np.int32)
    rank[np.argsort(first, kind="stable")] = np.arange(len(uniq), dtype=np.int32)
    return rank[inverse.ravel()]


def _classes(labels: np.ndarray) -> list[np.ndarray]:
    order = np.argsort(labels, kind="stable")
    bounds = np.flatnonzero(np.diff(labels[order])) + 1
    return np.split(order, bounds)


def subgroup_record(group: Any) -> dict[str, Any]:
    """The JSON record of a maximal subgroup (``analyze``'s ``monoid.subgroups`` entries), whichever path found it."""
    return {
        "order": group.order,
        "rank": group.rank,
        "name": group.name,
        "composition_factors": group.composition_factors,
        "is_abelian": group.is_abelian,
        "is_solvable": group.is_solvable,
    }


@dataclass
class MaximalSubgroup:
    """The maximal subgroup H_e at an idempotent e, acting on im(e) (positions 0..rank-1 of the sorted image).

    ``permutations`` lists every element of H_e as a permutation of the image; ``generators`` a generating subset.
    Sympy-backed properties (group, name, composition factors) are computed on first use.
    """

    d_class: int
    idempotent: int
    image: np.ndarray
    elements: np.ndarray
    monoid_elements: np.ndarray = field(repr=False)
    unit_generators: np.ndarray | None = None
    natural_action: np.ndarray | None = None
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def permutations(self) -> np.ndarray:
        """Every element of H_e as a permutation of the positions of im(e): (order, rank) int64."""

        def perms() -> np.ndarray:
            pos = np.full(len(self.monoid_elements[0]), -1, dtype=np.int64)
            pos[self.image] = np.arange(self.rank)
            return pos[self.monoid_elements[self.elements][:, self.image]]

        return self._cached("permutations", perms)

    @property
    def generators(self) -> np.ndarray:
        """A generating subset, as permutations of the image (the permutation generators δ_x for the group of
        units, which they generate; a greedy search otherwise)."""
        if self.unit_generators is not None:
            return self.unit_generators
        return self._cached("generators", lambda: _generating_subset(self.permutations))

    @property
    def order(self) -> int:
        return len(self.elements)

    @property
    def rank(self) -> int:
        return len(self.image)

    @property
    def group(self) -> PermutationGroup:
        """A sympy PermutationGroup isomorphic to H_e: its action on im(e), reduced to a smaller faithful action
        when the image is large, or the automaton's natural action when the monoid is that group."""
        if "group" not in self._cache:
            if self.natural_action is not None:
                G = permutation_group(self.natural_action)
                if G.order() != self.order:
                    G = None
            else:
                G = None
            if G is None:
                G = permutation_group(self.generators, degree=self.rank)
                if self.rank > 16:
                    G = smaller_faithful_action(G, order=self.order)
            self._cache["group"] = G
        return self._cache["group"]

    @property
    def summary(self) -> Any:
        """Order, name and composition factors (fsa.groups.describe_group) of the natural action when the monoid is
        that group, else of the action on the image."""

        def describe() -> Any:
            what = f"the maximal subgroup of D-class {self.d_class}"
            if self.natural_action is not None:
                natural = describe_group(self.natural_action, what=what)
                if natural.order == self.order:
                    return natural
            if self.rank <= 16:
                return describe_group(self.generators, degree=self.rank, what=what)
            G = self.group  # a smaller faithful action when one is found (M11 on 11 points, not 7920)
            return describe_group([g.array_form + list(range(g.size, G.degree)) for g in G.generators], what=what)

        return self._cached("summary", describe)

    @property
    def name(self) -> str:
        return "C1" if self.order == 1 else self.summary.name

    @property
    def composition_factors(self) -> list[str]:
        return [] if self.order == 1 else list(self.summary.composition_factors)

    @property
    def is_abelian(self) -> bool:
        gens = self.generators
        # generators commute pairwise ⇔ abelian
        return bool(all(np.array_equal(a[b], b[a]) for a in gens for b in gens))

    @property
    def is_solvable(self) -> bool:
        if self.order == 1 or self.is_abelian:
            return True
        return bool(self.summary.is_solvable)

    def _cached(self, key: str, fn: Any) -> Any:
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    def to_dict(self) -> dict[str, Any]:
        return subgroup_record(self)


class GreenStructure:
    """R, L, H and D labels of every element of a TransitionMonoid (class ids numbered by smallest element)."""

    def __init__(self, monoid: TransitionMonoid) -> None:
        self.monoid = monoid
        self.R = _scc_labels(monoid.right_cayley)
        self.L = _scc_labels(monoid.left_cayley)
        nL = int(self.L.max()) + 1
        self.H = _first_occurrence_relabel(self.R.astype(np.int64) * nL + self.L)
        self.D = _d_labels(self.R, self.L)

    @property
    def number_of_R_classes(self) -> int:
        return int(self.R.max()) + 1

    @property
    def number_of_L_classes(self) -> int:
        return int(self.L.max()) + 1

    @property
    def number_of_H_classes(self) -> int:
        return int(self.H.max()) + 1

    @property
    def number_of_D_classes(self) -> int:
        return int(self.D.max()) + 1

    def D_classes(self) -> list[np.ndarray]:
        """Element ids of each D-class (the identity's first)."""
        return _classes(self.D)

    def R_classes(self) -> list[np.ndarray]:
        return _classes(self.R)

    def L_classes(self) -> list[np.ndarray]:
        return _classes(self.L)

    def H_classes(self) -> list[np.ndarray]:
        return _classes(self.H)

    @cached_property
    def regular_D_mask(self) -> np.ndarray:
        """Per D-class: whether it contains an idempotent (is regular)."""
        mask = np.zeros(self.number_of_D_classes, dtype=bool)
        mask[self.D[self.monoid.idempotents]] = True
        return mask

    @property
    def number_of_regular_D_classes(self) -> int:
        return int(self.regular_D_mask.sum())

    def is_regular_element(self, i: int) -> bool:
        return bool(self.regular_D_mask[self.D[int(i)]])

    @cached_property
    def maximal_subgroups(self) -> list[MaximalSubgroup]:
        """One maximal subgroup per regular D-class (at its first idempotent), in D-class order.

        All maximal subgroups in one D-class are isomorphic, so this lists every isomorphism type that occurs.
        """
        M = self.monoid
        idem = M.idempotents
        first_idem = {}
        for e in idem[np.argsort(self.D[idem], kind="stable")]:
            first_idem.setdefault(int(self.D[e]), int(e))
        natural = None
        if M.automaton is not None and M.automaton.action is not None and _is_group(M):
            natural = np.asarray(M.automaton.action)
        out = []
        for d in sorted(first_idem):
            e = first_idem[d]
            out.append(_maximal_subgroup(M, self.H, d, e, natural if d == 0 else None))
        return out


def _is_group(M: TransitionMonoid) -> bool:
    g = M.generators
    return bool(np.all(np.sort(g, axis=1) == np.arange(M.n_states)))


def _maximal_subgroup(M: TransitionMonoid, H: np.ndarray, d: int, e: int, natural: Any) -> MaximalSubgroup:
    elements = np.flatnonzero(H == H[e])
    return MaximalSubgroup(
        d_class=d,
        idempotent=e,
        image=np.unique(M.elements[e]).astype(np.int64),
        elements=elements,
        monoid_elements=M.elements,
        unit_generators=_unit_generators(M) if e == 0 else None,
        natural_action=natural,
    )


def _unit_generators(M: TransitionMonoid) -> np.ndarray:
    """The generators δ_x that are permutations: they generate the group of units (a product of transformations
    is a permutation only if every factor is)."""
    g = M.generators.astype(np.int64)
    perms = g[np.all(np.sort(g, axis=1) == np.arange(M.n_states), axis=1)]
    perms = np.unique(perms, axis=0) if len(perms) else perms
    return perms if len(perms) else np.arange(M.n_states)[None, :]


def _generating_subset(perms: np.ndarray) -> np.ndarray:
    """A small subset of the group ``perms`` (all its elements, as permutations) that generates it: greedily add
    the first element outside the subgroup generated so far (closures on the group's element table)."""
    order, r = perms.shape
    ident = np.arange(r)
    is_ident = np.all(perms == ident, axis=1)
    rows = np.concatenate([ident[None, :], perms[~is_ident]])  # the identity first, then in the given order
    T = GroupTable.of(rows[:0], 0, elements=rows)
    chosen: list[int] = []
    inside = np.zeros(order, dtype=bool)
    inside[0] = True
    while not inside.all():
        chosen.append(int(np.argmin(inside)))
        inside[T.subgroup(np.asarray(chosen)).members] = True
    return rows[chosen] if chosen else ident[None, :]


__all__ = ["GreenStructure", "MaximalSubgroup"]
