"""Small permutation groups through their element tables: numpy only, no sympy.

A :class:`GroupTable` is a subgroup of an enumerated permutation group (every element an image row, the identity
first): its members as element indices and a few generators. Products are row gathers looked up by exact keys,
subgroups are closures under right multiplication by their generators, normal closures add the conjugates of the
generators until nothing new appears, and the commutator subgroup is the normal closure of the generators'
commutators. That answers what naming a solvable group needs (fsa.groups.group_name accepts a GroupTable as it
accepts a sympy PermutationGroup: ``order``, ``is_abelian``, ``is_cyclic``, ``abelian_invariants``, ``is_solvable``,
``is_dihedral``, ``is_perfect``, ``center``, ``derived_subgroup``) and what the series sizes need
(:meth:`GroupTable.quotient_invariants`: the abelian invariants of A/B from the number of elements a with
a^(p^k) ∈ B). Cost: O(|G|·generators) gathers per closure; groups are enumerated only up to a stated number of
(order × degree) cells (:meth:`GroupTable.of` returns None beyond it).
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import numpy as np


def row_keys(rows: np.ndarray) -> np.ndarray:
    """Exact keys of rows whose entries lie in 0..max(2, width)−1 (image masks, kernel labels, permutations): the
    mixed-radix int64 code when it fits in 63 bits, else one opaque (void) value per row. Either sorts, and works
    with np.unique, np.searchsorted and np.isin; rows of one width always get the same kind of key."""
    rows = np.ascontiguousarray(rows)
    width = rows.shape[1]
    base = max(2, width)
    if width * math.log2(base) < 63:
        return rows.astype(np.int64) @ (base ** np.arange(width, dtype=np.int64))
    return rows.view(np.dtype((np.void, rows.dtype.itemsize * width))).ravel()


def prime_factors(n: int) -> list[tuple[int, int]]:
    """(p, e) with p^e ∥ n, increasing p, by trial division (orders of permutation groups have small primes)."""
    out, p = [], 2
    while p * p <= n:
        e = 0
        while n % p == 0:
            n, e = n // p, e + 1
        if e:
            out.append((p, e))
        p += 1 if p == 2 else 2
    if n > 1:
        out.append((n, 1))
    return out


def generates_symmetric(gens: np.ndarray, d: int) -> bool:
    """A cheap sufficient test that permutations of 0..d−1 generate Sym(d): their transpositions connect all d
    points (transpositions along a spanning tree generate Sym(d)), or one of them is a d-cycle c and a
    transposition (a b) has b = c^k(a) with gcd(k, d) = 1 (the classical generators (1 2 … d), (1 2), conjugated)."""
    if d <= 1:
        return True
    gens = np.asarray(gens, dtype=np.int64).reshape(-1, d)
    moved = gens != np.arange(d)
    t = gens[moved.sum(axis=1) == 2]
    if not len(t):
        return False
    from .graphs import connected_components

    pairs = np.nonzero(t != np.arange(d))[1].reshape(-1, 2)
    if np.all(connected_components(pairs[:, 0], pairs[:, 1], d) == 0):
        return True
    for c in gens[moved.sum(axis=1) == d]:
        orbit = np.zeros(d, dtype=np.int64)  # orbit[i] = c^i(0)
        for i in range(1, d):
            orbit[i] = c[orbit[i - 1]]
        if len(np.unique(orbit)) < d:
            continue
        step = np.empty(d, dtype=np.int64)
        step[orbit] = np.arange(d)
        if np.any(np.gcd((step[pairs[:, 1]] - step[pairs[:, 0]]) % d, d) == 1):
            return True
    return False


class _Elements:
    """All elements of a permutation group as image rows (int16/int32), with exact key lookup."""

    def __init__(self, rows: np.ndarray) -> None:
        self.rows = rows
        self.n, self.degree = rows.shape
        keys = row_keys(rows)
        self.order = np.argsort(keys, kind="stable")
        self.sorted = keys[self.order]

    def index(self, rows: np.ndarray) -> np.ndarray:
        """Element index of each row (every row must be an element)."""
        pos = np.searchsorted(self.sorted, row_keys(rows.astype(self.rows.dtype)))
        return self.order[np.minimum(pos, self.n - 1)]

    def mul(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Indices of a·b = "apply a, then b" (broadcast)."""
        a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
        rows = np.take_along_axis(self.rows[b.ravel()], self.rows[a.ravel()].astype(np.intp), axis=1)
        return self.index(rows).reshape(a.shape)

    @cached_property
    def inverse(self) -> np.ndarray:
        return self.index(np.argsort(self.rows, axis=1))

    @cached_property
    def element_orders(self) -> np.ndarray:
        """The order of every element: the lcm of its cycle lengths (cycles found by pointer doubling)."""
        rows = self.rows.astype(np.intp)
        label, jump = np.broadcast_to(np.arange(self.degree), rows.shape).copy(), rows
        for _ in range(max(1, int(self.degree).bit_length())):
            label = np.minimum(label, np.take_along_axis(label, jump, axis=1))
            jump = np.take_along_axis(jump, jump, axis=1)
        flat = label + self.degree * np.arange(self.n)[:, None]
        lengths = np.bincount(flat.ravel(), minlength=self.n * self.degree)[flat]
        return np.lcm.reduce(lengths, axis=1)

    def power(self, a: np.ndarray, e: int) -> np.ndarray:
        """Indices of a^e (binary exponentiation over element indices)."""
        result = np.zeros_like(a)
        base = a.copy()
        while e:
            if e & 1:
                result = self.mul(result, base)
            base = self.mul(base, base)
            e >>= 1
        return result


class GroupTable:
    """A subgroup of an enumerated permutation group: ``members`` (sorted element indices) and ``gens`` (element
    indices generating it). Build one with :meth:`of`."""

    def __init__(self, elements: _Elements, members: np.ndarray, gens: np.ndarray) -> None:
        self._e = elements
        self.members = members
        self.gens = gens[gens != 0]

    @classmethod
    def of(cls, gens: np.ndarray, max_cells: int, elements: np.ndarray | None = None) -> GroupTable | None:
        """The group generated by image rows ``gens`` (enumerated, or its ``elements`` when given), or None when it
        has more than ``max_cells`` (order × degree) cells."""
        from .groups import enumerate_group

        gens = np.asarray(gens, dtype=np.int64)
        d = gens.shape[1]
        if elements is None:
            elements = enumerate_group(gens, max(1, max_cells // max(d, 1))) if len(gens) else np.arange(d)[None, :]
            if elements is None:
                return None
        dt = np.int16 if d < 2**15 else np.int32
        table = _Elements(np.asarray(elements).astype(dt))
        return cls(table, np.arange(table.n), table.index(gens) if len(gens) else np.zeros(0, dtype=np.int64))

    def sympy(self) -> Any:
        """The same group as a sympy PermutationGroup (for what the table does not answer: non-solvable groups)."""
        from .groups import permutation_group

        return permutation_group(self._e.rows[self.gens], degree=self._e.degree)

    # ---------------------------------------------------------------------------------------- subgroups
    def subgroup(self, gens: np.ndarray) -> GroupTable:
        """The subgroup generated by element indices ``gens``: breadth-first closure under right multiplication."""
        gens = np.unique(gens[gens != 0])
        seen = np.zeros(self._e.n, dtype=bool)
        seen[0] = True
        frontier = np.zeros(1, dtype=np.int64)
        while len(frontier) and len(gens):
            prod = np.unique(self._e.mul(frontier[:, None], gens[None, :]))
            frontier = prod[~seen[prod]]
            seen[frontier] = True
        return GroupTable(self._e, np.flatnonzero(seen), gens)

    def normal_closure(self, seeds: np.ndarray) -> GroupTable:
        """The smallest subgroup containing ``seeds`` that this group's generators normalize (the normal closure
        in this group): add the generators' conjugates of the subgroup's generators until none is new."""
        H = self.subgroup(seeds)
        inv = self._e.inverse
        while len(H.gens) and len(self.gens):
            conj = np.unique(self._e.mul(self._e.mul(inv[self.gens][None, :], H.gens[:, None]), self.gens[None, :]))
            new = conj[~np.isin(conj, H.members)]
            if not len(new):
                return H
            H = self.subgroup(np.concatenate([H.gens, new]))
        return H

    def derived_subgroup(self) -> GroupTable:
        """[G, G]: the normal closure of the commutators a⁻¹b⁻¹ab of the generators."""
        g, inv = self.gens, self._e.inverse
        ab = self._e.mul(g[:, None], g[None, :])
        comm = self._e.mul(self._e.mul(inv[g][:, None], inv[g][None, :]), ab).ravel()
        return self.normal_closure(comm)

    def center(self) -> GroupTable:
        """Z(G): the members that commute with every generator."""
        m = self.members
        ok = np.ones(len(m), dtype=bool)
        for g in self.gens:
            ok &= self._e.mul(m, g) == self._e.mul(g, m)
        z = m[ok]
        return GroupTable(self._e, z, z)

    @cached_property
    def derived_series(self) -> list[GroupTable]:
        """G ⊵ G' ⊵ G'' ⊵ … until it stops (at 1 for a solvable group, at the perfect core otherwise)."""
        series = [self]
        while series[-1].order() > 1:
            nxt = series[-1].derived_subgroup()
            if nxt.order() == series[-1].order():
                break
            series.append(nxt)
        return series

    # ---------------------------------------------------------------------------------------- invariants
    def order(self) -> int:
        return len(self.members)

    @property
    def is_abelian(self) -> bool:
        g = self.gens
        return bool(np.all(self._e.mul(g[:, None], g[None, :]) == self._e.mul(g[None, :], g[:, None])))

    @property
    def is_cyclic(self) -> bool:
        return bool(np.any(self._e.element_orders[self.members] == self.order()))

    @property
    def is_solvable(self) -> bool:
        return self.derived_series[-1].order() == 1

    @property
    def is_perfect(self) -> bool:
        return self.order() == 1 or self.derived_subgroup().order() == self.order()

    def involutions(self) -> int:
        """The number of elements of order 2."""
        return int(np.sum(self._e.element_orders[self.members] == 2))

    def moved_points(self) -> int:
        """The number of points some element moves."""
        rows = self._e.rows[self.gens] if len(self.gens) else self._e.rows[:1]
        return int(np.sum(np.any(rows != np.arange(self._e.degree), axis=0)))

    def power(self, idx: np.ndarray, e: int) -> np.ndarray:
        """Element indices of the e-th powers of the elements ``idx``."""
        return self._e.power(np.asarray(idx), e)

    def contains(self, idx: np.ndarray) -> np.ndarray:
        return np.isin(idx, self.members)

    @property
    def is_dihedral(self) -> bool:
        """Whether G ≅ D_2n (sympy's convention: C2 and C2 x C2 are dihedral): for a non-abelian G of order 2n ≥ 6,
        an element x of order n and any y outside ⟨x⟩ with y² = 1 and y x y = x⁻¹ (in D_2n every element of order
        n ≥ 3 is a rotation and every element outside the rotations a reflection)."""
        order = self.order()
        if order % 2 or order < 2:
            return False
        if order == 2:
            return True
        if order == 4:
            return not self.is_cyclic
        if self.is_abelian:
            return False
        n = order // 2
        e = self._e
        xs = self.members[e.element_orders[self.members] == n]
        if not len(xs):
            return False
        x = xs[:1]
        rot = self.subgroup(x).members
        y = self.members[~np.isin(self.members, rot)][:1]
        return bool(e.mul(y, y)[0] == 0 and e.mul(e.mul(y, x), y)[0] == e.inverse[x[0]])

    def abelian_invariants(self) -> list[int]:
        """The prime-power invariants of an abelian G (sympy's ``abelian_invariants``, increasing)."""
        return self.quotient_invariants(GroupTable(self._e, np.zeros(1, dtype=np.int64), np.zeros(0, dtype=np.int64)))

    def quotient_invariants(self, normal: GroupTable) -> list[int]:
        """The prime-power invariants of the abelian quotient G/N (N ⊴ G): for each prime p, the number of cyclic
        factors of order ≥ p^k is c_k − c_{k−1}, where p^{c_k} = |{g ∈ G : g^(p^k) ∈ N}| / |N|."""
        index = self.order() // normal.order()
        out: list[int] = []
        for p, e in prime_factors(index):
            counts, k, g = [0], 0, self.members
            while counts[-1] < e:
                k += 1
                g = self._e.power(g, p)  # g^(p^k) for the original members, in the same order
                inside = int(np.sum(normal.contains(g))) // normal.order()
                counts.append(round(math.log(inside, p)))
            at_least = [counts[i] - counts[i - 1] for i in range(1, len(counts))]  # factors of order ≥ p^i
            for i, c in enumerate(at_least):
                nxt = at_least[i + 1] if i + 1 < len(at_least) else 0
                out += [p ** (i + 1)] * (c - nxt)
        return sorted(out)


def invariant_factors(prime_powers: list[int]) -> list[int]:
    """The invariant factors d_1 | d_2 | … (increasing, all > 1) of an abelian group from its prime-power
    invariants: d_last is the product of each prime's largest power, and so on down."""
    by_prime: dict[int, list[int]] = {}
    for q in prime_powers:
        by_prime.setdefault(prime_factors(q)[0][0], []).append(q)
    r = max((len(v) for v in by_prime.values()), default=0)
    out = [1] * r
    for powers in by_prime.values():
        for i, q in enumerate(sorted(powers, reverse=True)):
            out[r - 1 - i] *= q
    return out


__all__ = ["GroupTable", "row_keys", "prime_factors", "invariant_factors", "generates_symmetric"]
