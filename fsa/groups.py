"""Permutation-group utilities shared by the monoid analysis, the holonomy decomposition and the compilers.

Small and stable API:

- :func:`permutation_group` — a sympy ``PermutationGroup`` from an array of image arrays;
- :func:`group_name` — an isomorphism-type name in the style of docs/architecture.md, "Vocabulary" (SgpDec's
  StructureDescription): ``C1``, ``C<n>``, ``S<n>``, ``A<n>``, ``D<2n>``, ``Q8``, ``M11``, ``PSL(2,7)``,
  ``C2 x C2``, else ``order N``;
- :func:`composition_factors` — the composition factors (with multiplicity), non-abelian simple ones included,
  which sympy's ``composition_series`` refuses (it handles solvable groups only);
- :func:`is_solvable` and :func:`is_simple`;
- :func:`describe_group` — order, name and composition factors (a :class:`GroupSummary`) from image arrays,
  within a stated work budget: the full name only up to MAX_NAMED_ORDER, Schreier–Sims only on at most
  MAX_GROUP_DEGREE points unless the group is enumerable (MAX_ENUMERATED_CELLS) or S_d / A_d by Jordan's theorem,
  the exhaustive simplicity test only up to MAX_EXHAUSTIVE_ORDER; beyond the budget a LimitExceededError names it;
- :func:`enumerate_group` — all elements of a small group (vectorized breadth-first closure).

Names describe the abstract group, not the action: the regular action of S3 on 6 points is named ``S3``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from math import factorial, gcd, lcm
from typing import TYPE_CHECKING

import numpy as np

from .errors import LimitExceededError
from .graphs import connected_components
from .group_table import GroupTable, enumerate_group, generates_symmetric, permutation_group, prime_factors

if TYPE_CHECKING:  # pragma: no cover
    from sympy.combinatorics import Permutation, PermutationGroup

#: Groups up to this order are tested for simplicity exhaustively (one normal closure per conjugacy class).
MAX_EXHAUSTIVE_ORDER = 200_000

# Orders of the non-abelian simple groups up to 10^6, with their names (Atlas). Order 20160 is ambiguous
# (A8 and PSL(3,4)); it is resolved by element orders in _simple_name.
_SIMPLE_BY_ORDER = {
    60: "A5",
    168: "PSL(2,7)",
    360: "A6",
    504: "PSL(2,8)",
    660: "PSL(2,11)",
    1092: "PSL(2,13)",
    2448: "PSL(2,17)",
    2520: "A7",
    3420: "PSL(2,19)",
    4080: "PSL(2,16)",
    5616: "PSL(3,3)",
    6048: "PSU(3,3)",
    6072: "PSL(2,23)",
    7800: "PSL(2,25)",
    7920: "M11",
    9828: "PSL(2,27)",
    12180: "PSL(2,29)",
    14880: "PSL(2,31)",
    20160: "A8",
    25308: "PSL(2,37)",
    25920: "PSU(4,2)",
    29120: "Sz(8)",
    32736: "PSL(2,32)",
    34440: "PSL(2,41)",
    39732: "PSL(2,43)",
    51888: "PSL(2,47)",
    58800: "PSL(2,49)",
    62400: "PSU(3,4)",
    74412: "PSL(2,53)",
    95040: "M12",
    102660: "PSL(2,59)",
    113460: "PSL(2,61)",
    126000: "PSU(3,5)",
    150348: "PSL(2,67)",
    175560: "J1",
    178920: "PSL(2,71)",
    181440: "A9",
    194472: "PSL(2,73)",
    246480: "PSL(2,79)",
    262080: "PSL(2,64)",
    265680: "PSL(2,81)",
    285852: "PSL(2,83)",
    352440: "PSL(2,89)",
    372000: "PSL(3,5)",
    443520: "M22",
    456288: "PSL(2,97)",
    515100: "PSL(2,101)",
    546312: "PSL(2,103)",
    604800: "J2",
    612468: "PSL(2,107)",
    647460: "PSL(2,109)",
    721392: "PSL(2,113)",
    885720: "PSL(2,121)",
    976500: "PSL(2,125)",
}


def is_solvable(G: PermutationGroup | GroupTable) -> bool:
    """Whether G is solvable (its derived series reaches 1). Polynomial time (sympy, Schreier–Sims)."""
    return bool(G.is_solvable)


def _prime_factors(n: int) -> list[str]:
    """Composition factors of a solvable group of order n: one C_p per prime p dividing n, with multiplicity."""
    out: list[str] = []
    for p, e in reversed(prime_factors(n)):
        out += [f"C{p}"] * e
    return out


def _moved_points(G: PermutationGroup | GroupTable) -> int:
    if isinstance(G, GroupTable):
        return G.moved_points()
    moved = set()
    for g in G.generators:
        moved.update(i for i, j in enumerate(g.array_form) if i != j)
    return len(moved)


def _is_natural_alternating(G: PermutationGroup) -> bool:
    d = _moved_points(G)
    return d >= 5 and G.order() == factorial(d) // 2


@lru_cache(maxsize=64)
def _normal_closures_proper(P: PermutationGroup) -> PermutationGroup | None:
    """A proper nontrivial normal subgroup of P, or None if P is simple.

    Only for |P| ≤ MAX_EXHAUSTIVE_ORDER (larger groups raise LimitExceededError at once, unless recognized as
    natural alternating groups beforehand): first the normal closures of the generators and of their prime-order
    powers, then one normal closure per conjugacy-class representative (exhaustive).
    """
    order = P.order()
    if order > MAX_EXHAUSTIVE_ORDER:
        raise LimitExceededError(
            f"composition factors of a non-solvable group of order {order:,} exceed the limit "
            f"of {MAX_EXHAUSTIVE_ORDER:,} for the exhaustive simplicity test"
        )
    from sympy.combinatorics import PermutationGroup

    # cheap first: closures of generators and their prime-order powers
    candidates = list(P.generators)
    for g in P.generators:
        o = g.order()
        candidates += [g ** (o // p) for p, _ in prime_factors(o)]
    for g in candidates:
        if g.is_Identity:
            continue
        N = P.normal_closure(PermutationGroup([g]))
        if N.order() < order:
            return N
    for cls in P.conjugacy_classes():
        g = next(iter(cls))
        if g.is_Identity:
            continue
        N = P.normal_closure(PermutationGroup([g]))
        if N.order() < order:
            return N
    return None


def _on_points(perms: Sequence[Permutation], points: Sequence[int]) -> PermutationGroup:
    """The permutations restricted to an invariant set of points, relabeled 0..m−1 in the given order."""
    from sympy.combinatorics import Permutation, PermutationGroup

    pos = {p: i for i, p in enumerate(points)}
    return PermutationGroup([Permutation([pos[g.array_form[p]] for p in points]) for g in perms])


def _split(G: PermutationGroup) -> tuple[PermutationGroup, PermutationGroup] | None:
    """(G acting on X, its kernel K), G/K ≅ the first, for X the orbit of 0 when G is intransitive, else a minimal
    block system when G is imprimitive; None for a primitive G.

    The kernel is a pointwise stabilizer (Schreier–Sims with a base through X): for blocks, in the action of G on
    its points together with the blocks (faithful, as G acts on its points), restricted back to the points.
    """
    from sympy.combinatorics import Permutation, PermutationGroup

    n = G.degree
    gens = [g if g.size == n else Permutation(g.array_form + list(range(g.size, n))) for g in G.generators]
    orbit = sorted(G.orbit(0))
    if len(orbit) < n:
        rest = sorted(set(range(n)) - set(orbit))
        K = G.pointwise_stabilizer(orbit)
        return _on_points(gens, orbit), _on_points(list(K.generators), rest)
    if n < 4 or G.is_primitive():
        return None
    labels = np.unique(np.asarray(G.minimal_blocks()[0]), return_inverse=True)[1].ravel()
    nb = int(labels.max()) + 1
    first = np.array([np.flatnonzero(labels == b)[0] for b in range(nb)])
    on_blocks = [labels[np.asarray(g.array_form)[first]].tolist() for g in gens]
    both = PermutationGroup([Permutation(g.array_form + [n + b for b in bl]) for g, bl in zip(gens, on_blocks)])
    K = both.pointwise_stabilizer(list(range(n, n + nb)))
    return PermutationGroup([Permutation(bl) for bl in on_blocks]), _on_points(list(K.generators), list(range(n)))


def _quotient(P: PermutationGroup, N: PermutationGroup) -> PermutationGroup:
    """P/N as a permutation group: the action of P on the cosets of the normal subgroup N (degree |P:N|)."""
    from sympy.combinatorics import Permutation, PermutationGroup

    table = P.coset_table(N)
    cols = len(table[0])
    return PermutationGroup([Permutation([row[c] for row in table]) for c in range(cols)])


def _simple_name(P: PermutationGroup) -> str:
    order = P.order()
    if _is_natural_alternating(P):
        return f"A{_moved_points(P)}"
    name = _SIMPLE_BY_ORDER.get(order)
    if order == 20160:  # A8 has elements of order 15, PSL(3,4) does not
        has15 = any(g.order() == 15 for g in P.generate())
        return "A8" if has15 else "PSL(3,4)"
    return name or f"simple of order {order}"


def _perfect_factors(P: PermutationGroup) -> list[str]:
    """Composition factors of a perfect group (all non-abelian simple), top first."""
    if _is_natural_alternating(P):
        return [f"A{_moved_points(P)}"]
    N = _normal_closures_proper(P)
    if N is None:
        return [_simple_name(P)]
    return composition_factors(_quotient(P, N)) + composition_factors(N)


def composition_factors(G: PermutationGroup | GroupTable) -> list[str]:
    """The composition factors of G, with multiplicity (a multiset: the order of the list carries no meaning
    beyond being deterministic).

    Cyclic factors are ``C<p>``; non-abelian simple ones are named by :func:`group_name` (``A5``, ``PSL(2,7)``,
    ``M11``, …). Method: an intransitive or imprimitive G is first split into the image and the kernel of its
    action on an orbit or on a minimal block system (:func:`_split`; Jordan–Hölder: the factors of G are those of
    G/K and of K), so that the rest runs on primitive groups only. There the derived series
    G ⊵ G' ⊵ … ⊵ P stops at the perfect core P; each abelian layer
    G⁽ⁱ⁾/G⁽ⁱ⁺¹⁾ contributes one C_p per prime factor of its order (listed first, largest prime first); P is split
    by a proper normal closure N (found by trying one element per conjugacy class) into P/N (the action on
    cosets) and N, recursively, until simple. Cost: Schreier–Sims per subgroup plus, for non-solvable groups,
    conjugacy classes of the perfect core (limited to order ≤ MAX_EXHAUSTIVE_ORDER unless it is a natural A_n).
    """
    if G.order() == 1:
        return []
    if G.is_solvable:
        return _prime_factors(int(G.order()))
    if isinstance(G, GroupTable):
        G = G.sympy()
    split = _split(G)
    if split is not None:
        return composition_factors(split[0]) + composition_factors(split[1])
    series = G.derived_series()
    out: list[str] = []
    for A, B in zip(series, series[1:]):
        out += _prime_factors(int(A.order() // B.order()))
    return out + _perfect_factors(series[-1])


def is_simple(G: PermutationGroup) -> bool:
    """Whether G is simple: nontrivial with no proper nontrivial normal subgroup."""
    f = composition_factors(G)
    return len(f) == 1


@cache
def _abelian_name(invariants: tuple[int, ...]) -> str:
    """C_a x C_b x … from sympy's abelian invariants (prime powers); cyclic if they are pairwise coprime."""
    inv = sorted(invariants)
    # merge coprime prime powers into cyclic factors (invariant-factor form)
    factors: list[int] = []
    for q in sorted(inv, reverse=True):
        for i, f in enumerate(factors):
            if gcd(f, q) == 1:
                factors[i] = f * q
                break
        else:
            factors.append(q)
    return " x ".join(f"C{f}" for f in sorted(factors))


def group_name(G: PermutationGroup | GroupTable) -> str:
    """A name for the isomorphism type of G in the style of docs/architecture.md, "Vocabulary".

    ``C1``; abelian groups as ``C<n>`` or ``C2 x C2`` (invariant factors); ``S<n>`` and ``A<n>``; dihedral
    ``D<2n>``; ``Q8``; non-abelian simple groups by their Atlas name (``PSL(2,7)``, ``M11``); else ``order N``.
    Recognition uses invariants (order, centre, derived subgroup, element orders), so it names abstract
    groups whatever the action. Cost: a few Schreier–Sims runs; element enumeration only for orders ≤ 10^5. A
    :class:`~fsa2rnn.fsa.group_table.GroupTable` answers the same questions from its element table (no sympy) when
    it is solvable; a non-solvable one is handed to sympy.
    """
    if isinstance(G, GroupTable) and not G.is_solvable:
        G = G.sympy()
    order = int(G.order())
    if order == 1:
        return "C1"
    if G.is_abelian:
        if G.is_cyclic:
            return f"C{order}"
        return _abelian_name(tuple(int(a) for a in G.abelian_invariants()))
    if order == 6:
        return "S3"  # the only non-abelian group of order 6
    if order == 8 and _involutions(G) == 1:
        return "Q8"
    d = _moved_points(G)
    if d >= 4 and order == factorial(d):
        return f"S{d}"  # natural action
    if order % 2 == 0 and order <= 10_000 and G.is_solvable and G.is_dihedral:
        return f"D{order}"
    if G.is_perfect:
        if _is_natural_alternating(G):
            return f"A{_moved_points(G)}"
        if order <= MAX_EXHAUSTIVE_ORDER and _normal_closures_proper(G) is None:
            return _simple_name(G)
        return f"order {order}"
    n = _factorial_degree(order)
    center_trivial = G.center().order() == 1
    D = G.derived_subgroup()
    if n is not None and center_trivial and D.order() * 2 == order and _is_symmetric(G, D, n):
        return f"S{n}"
    half = _factorial_degree(order * 2)
    if half == 4 and center_trivial and D.order() == 4:
        return "A4"
    return f"order {order}"


def _involutions(G: PermutationGroup | GroupTable) -> int:
    if isinstance(G, GroupTable):
        return G.involutions()
    return sum(1 for g in G.generate() if g.order() == 2)


def _factorial_degree(order: int) -> int | None:
    n, f = 1, 1
    while f < order:
        n += 1
        f *= n
    return n if f == order and n >= 3 else None


def _is_symmetric(G: PermutationGroup, D: PermutationGroup, n: int) -> bool:
    """G of order n! with trivial centre and |G:G'| = 2 is S_n when G' ≅ A_n (checked via its name);
    for n = 6 the other two such groups (PGL(2,9), M10) have no element of order 6."""
    if n == 3:
        return True  # the only non-abelian group of order 6
    if n == 4:
        return group_name(D) == "A4"
    if group_name(D) != f"A{n}":
        return False
    if n == 6:
        return any(g.order() == 6 for g in G.generate())
    return True


def smaller_faithful_action(G: PermutationGroup, order: int | None = None, tries: int = 12) -> PermutationGroup:
    """An isomorphic copy of a transitive group G acting on fewer points, when one is found cheaply.

    Greedy: for a few points p, the finest block system with 0 and p in one block (sympy ``minimal_block``)
    gives the action on blocks; it is kept when faithful (same order) and the search repeats on it. Used to
    bring a regular action (a word problem's group acting on its own elements, e.g. M11 on 7920 points)
    down to a small degree before naming. Intransitive groups are returned unchanged. O(tries · d) per round
    plus Schreier–Sims on each smaller candidate; pass ``order`` when known to skip it on G itself.
    """
    from sympy.combinatorics import Permutation, PermutationGroup

    order = int(G.order()) if order is None else int(order)
    while G.degree > 2 and G.is_transitive():
        d = G.degree
        gens = np.array([g.array_form for g in G.generators], dtype=np.int64)
        for p in range(1, min(d, tries + 1)):
            labels = np.unique(np.asarray(G.minimal_block([0, p])), return_inverse=True)[1].ravel()
            nb = int(labels.max()) + 1
            if not 1 < nb < d:
                continue
            reps = np.zeros(nb, dtype=np.int64)
            reps[labels] = np.arange(d)
            H = PermutationGroup([Permutation(labels[g[reps]].tolist()) for g in gens])
            if H.order() == order:
                G = H
                break
        else:
            return G
    return G


# ---------------------------------------------------------------------------------------------- group summaries
#: Full structure descriptions (:func:`group_name`) only for groups of at most this order; a larger group is named
#: when its order and degree alone identify it (S_d or A_d acting on d points), else ``order N``.
MAX_NAMED_ORDER = 10**6
#: Schreier–Sims (sympy) runs on faithful actions of at most this many points; larger actions need the group to be
#: enumerable (MAX_ENUMERATED_CELLS) or recognized as S_d or A_d (Jordan's theorem).
MAX_GROUP_DEGREE = 64
#: A group acting on more than MAX_GROUP_DEGREE points is enumerated (breadth first) up to order × degree cells.
MAX_ENUMERATED_CELLS = 5 * 10**6
#: Solvable groups of at most this many (order × degree) cells are described from their element tables
#: (fsa/group_table.py), without sympy.
MAX_TABLE_CELLS = 1 << 18
#: Random elements (product replacement, seeded) tried for a Jordan witness on a transitive group.
JORDAN_TRIES = 120


@dataclass(frozen=True)
class GroupSummary:
    """Order, name and composition factors of a permutation group, as :func:`describe_group` computes them.

    ``name`` is :func:`group_name`'s for orders up to MAX_NAMED_ORDER (or S_d / A_d recognized from order and
    degree), else ``order N``; ``composition_factors`` lists ``C<p>`` and non-abelian simple names with
    multiplicity (a multiset in a deterministic order); ``degree`` is that of the faithful action used.
    """

    order: int
    name: str
    composition_factors: tuple[str, ...]
    is_abelian: bool
    degree: int

    @property
    def is_solvable(self) -> bool:
        """Solvable iff every composition factor is cyclic of prime order."""
        return all(f.startswith("C") for f in self.composition_factors)

    @property
    def non_abelian_factors(self) -> tuple[str, ...]:
        """The non-abelian simple composition factors (distinct, in order of first appearance)."""
        return tuple(dict.fromkeys(f for f in self.composition_factors if not f.startswith("C")))


def _generator_rows(perms: np.ndarray | Sequence[Sequence[int]], degree: int | None) -> np.ndarray:
    rows = np.asarray(perms, dtype=np.int64).reshape(len(perms), -1) if len(perms) else np.zeros((0, degree or 1))
    d = rows.shape[1] if len(rows) else (degree or 1)
    if len(rows) and np.any(np.sort(rows, axis=1) != np.arange(d)):
        raise ValueError(f"not a permutation of 0..{d - 1}")
    rows = rows[np.any(rows != np.arange(d), axis=1)]
    return np.unique(rows, axis=0).astype(np.int64) if len(rows) else rows.reshape(0, d).astype(np.int64)


def _on_moved_points(gens: np.ndarray) -> np.ndarray:
    """The same group acting on its moved points only (faithful: the others are fixed by every element)."""
    moved = np.flatnonzero(np.any(gens != np.arange(gens.shape[1]), axis=0))
    pos = np.full(gens.shape[1], -1, dtype=np.int64)
    pos[moved] = np.arange(moved.size)
    return pos[gens[:, moved]]


def _commute(gens: np.ndarray) -> bool:
    """Whether the generators commute pairwise (a[b] = b[a] for all pairs), vectorized per generator."""
    return all(np.array_equal(gens[:, a], a[gens]) for a in gens)


def _orbits(gens: np.ndarray) -> np.ndarray:
    """Orbit id of each point (connected components of the graph i — g(i))."""
    d = gens.shape[1]
    return connected_components(np.tile(np.arange(d), len(gens)), gens.reshape(-1), d)


def _cycle_labels(p: np.ndarray) -> np.ndarray:
    """A label per point, equal for the points of one cycle (its smallest point): minima by pointer doubling."""
    label, jump = np.arange(len(p)), p.copy()
    for _ in range(int(np.ceil(np.log2(max(len(p), 2)))) + 1):
        label = np.minimum(label, label[jump])
        jump = jump[jump]
    return label


def _cycle_lengths(p: np.ndarray) -> np.ndarray:
    """The length of the cycle through each point."""
    label = _cycle_labels(p)
    return np.bincount(label, minlength=len(p))[label]


def _is_prime(n: int) -> bool:
    return n >= 2 and all(n % q for q in range(2, int(n**0.5) + 1))


def _jordan_witness(gens: np.ndarray, seed: int = 0) -> bool:
    """True if the transitive group ⟨gens⟩ on d ≥ 8 points provably contains A_d.

    Random elements (product replacement, seeded) are searched for a cycle of prime length p with d/2 < p < d − 2;
    a suitable power of such an element is a p-cycle, a transitive group with a p-cycle for a prime p > d/2 is
    primitive, and a primitive group containing a p-cycle with p ≤ d − 3 contains A_d (Jordan). A False answer
    proves nothing: for S_d or A_d about ln 2 / ln d of the elements are witnesses, so a miss has probability near
    (1 − ln 2 / ln d)^JORDAN_TRIES (below 10⁻⁵ for d ≤ 1000), and the group then takes the other routes.
    """
    d = gens.shape[1]
    if d < 8:
        return False
    good = np.zeros(d + 1, dtype=bool)
    good[[p for p in range(d // 2 + 1, d - 2) if _is_prime(p)]] = True
    rng = np.random.default_rng(seed)
    slots = [gens[i % len(gens)].copy() for i in range(max(10, len(gens)))]
    acc = np.arange(d)
    for t in range(JORDAN_TRIES + 20):
        i, j = rng.choice(len(slots), size=2, replace=False)
        other = slots[j] if rng.random() < 0.5 else np.argsort(slots[j])
        slots[i] = other[slots[i]]  # apply slots[i], then slots[j]^(±1)
        acc = slots[i][acc]
        if t >= 20 and good[_cycle_lengths(acc)].any():
            return True
    return False


def _faithful_orbits(gens: np.ndarray, elements: np.ndarray) -> np.ndarray:
    """The action on a union of orbits that is still faithful (greedy, smallest orbits first): the generators
    restricted to those orbits, relabeled 0..m−1."""
    label = _orbits(gens)
    orbits = sorted((np.flatnonzero(label == o) for o in np.unique(label)), key=len)
    keep: list[np.ndarray] = []
    distinct = 1
    for orb in orbits:
        trial = np.concatenate(keep + [orb])
        n = len(np.unique(elements[:, trial], axis=0))
        if n > distinct:
            keep.append(orb)
            distinct = n
        if distinct == len(elements):
            break
    pts = np.sort(np.concatenate(keep))
    pos = np.full(gens.shape[1], -1, dtype=np.int64)
    pos[pts] = np.arange(len(pts))
    return pos[gens[:, pts]]


def _fewer_generators(gens: np.ndarray) -> list[Permutation]:
    """An irredundant generating subsequence (each generator kept only if outside the group of those before it):
    at most log2 |G| generators, which keeps sympy's normal closures and derived series cheap."""
    from sympy.combinatorics import Permutation, PermutationGroup

    perms = [Permutation(list(map(int, g))) for g in gens]
    if len(perms) <= 4:
        return perms
    kept: list[Permutation] = []
    H: PermutationGroup | None = None
    for p in perms:
        if H is None or not H.contains(p):
            kept.append(p)
            H = PermutationGroup(kept)
    return kept


def _natural_name(order: int, degrees: Sequence[int]) -> str | None:
    """S_d or A_d when the order identifies it on a faithful action of degree d."""
    for d in degrees:
        if d >= 3 and order == factorial(d):
            return f"S{d}"
        if d >= 4 and 2 * order == factorial(d):
            return f"A{d}"
    return None


def describe_group(
    perms: np.ndarray | Sequence[Sequence[int]],
    degree: int | None = None,
    *,
    what: str = "the group",
    other_degrees: Sequence[int] = (),
    max_named_order: int = MAX_NAMED_ORDER,
    seed: int = 0,
) -> GroupSummary:
    """Order, name and composition factors of the group generated by the rows of ``perms`` (image arrays), within a
    stated work budget.

    Steps: drop identities and duplicates and restrict to the moved points; on a transitive action of degree
    d ≥ 8, look for a Jordan witness (then the group is S_d or A_d, by the parity of the generators, with no
    Schreier–Sims at all); on more than MAX_GROUP_DEGREE points enumerate the group (at most MAX_ENUMERATED_CELLS
    order × degree cells) and keep a faithful union of orbits; then sympy's Schreier–Sims gives the order, and
    :func:`composition_factors` the factors. ``other_degrees`` are degrees of other faithful actions of the same
    group (for the S_d / A_d recognition by order). Raises LimitExceededError, naming ``what`` and the budget,
    when the group is beyond it: too large to enumerate on more than MAX_GROUP_DEGREE points and not S_d or A_d,
    or a perfect core too large for the exhaustive simplicity test.
    """
    gens = _generator_rows(perms, degree)
    if len(gens) == 0:
        return GroupSummary(1, "C1", (), True, 0)
    gens = _on_moved_points(gens)
    try:
        budget = (MAX_GROUP_DEGREE, MAX_ENUMERATED_CELLS, MAX_EXHAUSTIVE_ORDER)  # part of the cache key
        return _summary(gens.tobytes(), gens.shape[1], tuple(other_degrees), max_named_order, seed, budget)
    except _OverBudget as exc:
        raise LimitExceededError(f"{what} {exc}") from None


class _OverBudget(Exception):
    """A summary beyond the work budget; the message continues a sentence that names the group."""


@lru_cache(maxsize=4096)
def _summary(
    raw: bytes, d: int, other_degrees: tuple[int, ...], max_named_order: int, seed: int, budget: tuple[int, ...]
) -> GroupSummary:
    """describe_group on cleaned generators (distinct, non-identity, on their moved points), cached by their bytes
    and the budget (max degree for Schreier–Sims, max enumerated cells, max exhaustive order)."""
    max_degree, max_cells, _ = budget
    gens = np.frombuffer(raw, dtype=np.int64).reshape(-1, d)
    if len(gens) == 1:  # cyclic: the order is the lcm of the cycle lengths, on the fewest cycles that reach it
        labels = _cycle_labels(gens[0])
        lengths = sorted(np.bincount(labels)[np.unique(labels)].tolist(), reverse=True)
        order, used = 1, 0
        for n in lengths:
            if lcm(order, n) > order:
                order, used = lcm(order, n), used + n
        return GroupSummary(order, f"C{order}", tuple(_prime_factors(order)), True, used)
    abelian = _commute(gens)
    transitive = bool(np.all(_orbits(gens) == 0))
    if not abelian and transitive and _jordan_witness(gens, seed):
        odd = any((d - len(np.unique(_cycle_labels(g)))) % 2 for g in gens)
        order = factorial(d) // (1 if odd else 2)
        return GroupSummary(order, f"S{d}" if odd else f"A{d}", ("C2", f"A{d}") if odd else (f"A{d}",), False, d)
    if not abelian and transitive and d >= 5 and generates_symmetric(gens, d):  # Sym(d): no group computation
        return GroupSummary(factorial(d), f"S{d}", ("C2", f"A{d}"), False, d)
    known: int | None = None
    if d > max_degree:
        elements = enumerate_group(gens, max_cells // d)
        if elements is None:
            raise _OverBudget(
                f"acts faithfully on {d} points and has more than {max_cells // d:,} elements: group computations "
                f"are limited to actions on at most {max_degree} points, groups of at most {max_cells:,} "
                f"(order × degree) cells, and S_d or A_d recognized by Jordan's theorem"
            )
        known = len(elements)
        gens = _on_moved_points(_faithful_orbits(gens, elements))
        d = gens.shape[1]
    table = GroupTable.of(gens, MAX_TABLE_CELLS)
    if table is not None and table.is_solvable:  # the element table answers without sympy
        order = table.order()
        name = _natural_name(order, [d, *other_degrees])
        if name is None:
            name = group_name(table) if order <= max_named_order else f"order {order}"
        return GroupSummary(order, name, tuple(composition_factors(table)), abelian, d)
    from sympy.combinatorics import PermutationGroup

    G = PermutationGroup(_fewer_generators(gens))
    order = int(G.order()) if known is None else known
    name = _natural_name(order, [d, *other_degrees])
    if name is None:
        name = group_name(G) if order <= max_named_order else f"order {order}"
    try:
        factors = tuple(composition_factors(G))
    except LimitExceededError as exc:
        raise _OverBudget(f"(order {order:,}): {exc}") from None
    return GroupSummary(order, name, factors, abelian, d)


__all__ = [
    "permutation_group",
    "group_name",
    "composition_factors",
    "is_solvable",
    "is_simple",
    "smaller_faithful_action",
    "describe_group",
    "GroupSummary",
    "enumerate_group",
    "MAX_EXHAUSTIVE_ORDER",
    "MAX_NAMED_ORDER",
    "MAX_GROUP_DEGREE",
    "MAX_ENUMERATED_CELLS",
]
