"""Green's classes of a transformation monoid without enumerating it: orbits of images and kernels, Schützenberger
groups from their strongly connected components, D-classes as double cosets (Lallement & McFadden 1990; Linton,
Pfeiffer, Robertson & Ruškuc 1998; Konieczny 1994).

Conventions as in fsa/monoid.py: s·t = "apply s, then t" = ``t[s]``. For s ∈ M with image A and kernel K (rank r):

- images move on the right: im(s·u) = u(A); the **image orbit** Λ is the orbit of {0..n−1} under the generators,
  and s·u R s ⇔ u(A) lies in the strongly connected component (SCC) of A. The **λ-group** G_λ(A) = {u|_A : u ∈ M,
  u(A) = A} ≤ Sym(A) depends on A's SCC only (conjugate along it);
- kernels move on the left: ker(u·s) = u⁻¹(ker s); the **kernel orbit** P is the orbit of the discrete partition,
  u·s L s ⇔ u⁻¹(K) lies in the SCC of K, and the **ρ-group** G_ρ(K) ≤ Sym(blocks of K) is induced by the u with
  u⁻¹(K) = K;
- both groups come from Schreier generators: with M_B a bijection root → B along a breadth-first tree inside the
  SCC, the edge A → B of generator g gives M_B⁻¹ ∘ g ∘ M_A (every closed walk of a strongly connected component
  is realized by a monoid element, and inverses are powers);
- writing s = A₀[φ(label(i))] with A₀, K₀ the roots of the SCCs of im s and ker s, after moving s there by
  multipliers (which stay in its R- and L-class), φ : blocks(K₀) → A₀ is a bijection and the D-class of s is the
  double coset G_λ φ G_ρ: s D t ⇔ same two SCCs and φ_t ∈ G_λ φ_s G_ρ;
- with G = G_λ ∩ φ G_ρ φ⁻¹ (≅ the H-class of s): |H| = |G|, #L-classes in D = |Λ_s|·|G_λ|/|G|, #R-classes =
  |P_s|·|G_ρ|/|G|, |D| = #R·#L·|G|. D is regular ⇔ some image of Λ_s is a transversal of some kernel of P_s; then
  G_λ = G_ρ = G and its idempotents are the (kernel, image) transversal pairs.

D-classes are found from the identity's: L is a right congruence, so every L-class is the L-class of ℓ·g for an
L-class representative ℓ already found and a generator g; the representatives of a D-class are its element moved to
every image of its SCC by the tree multipliers, times left coset representatives of G in G_λ.

Cost: the two orbits (O(|Λ|·k·n + |P|·k·n)), one enumerated Schützenberger group per D-class (and a second one
for non-regular D-classes), and k·#L candidates tested against the double cosets — never the monoid itself.
Limits (LimitExceededError, module constants scaled by ``max_bytes``): orbit points, group elements.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np

from .errors import LimitExceededError
from .graphs import breadth_first_predecessors, strong_components
from .green import subgroup_record
from .group_table import generates_symmetric, row_keys
from .groups import GroupSummary, describe_group
from .monoid import MAX_BYTES, TransitionMonoid, _as_generators

#: Bytes of an orbit point beyond its row: edges (4 per generator), edge bijections (2·n per generator), the
#: forward/inverse tree maps (2·2·n), keys and bookkeeping.
ORBIT_BYTES_FIXED = 64
#: Temporary bytes per (point, generator, state) entry while acting on a frontier (products, labels, maps).
ACT_BYTES_PER_ENTRY = 48
#: Schützenberger groups are enumerated up to this many elements × points at the default memory limit (scaled).
GROUP_CELLS = 1 << 27
#: (candidates × group elements) compositions per vectorized membership step.
MEMBERSHIP_CHUNK = 1 << 22
#: Double cosets G_λ φ G_ρ with |G_λ|·|G_ρ| up to this many products are named by their least element (one
#: vectorized pass over all candidates); larger ones are tested one D-class at a time.
CANONICAL_PRODUCTS = 1 << 10


# ---------------------------------------------------------------------------------------------------- row keys
def _relabel(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First-occurrence relabelling of each row (the normal form of its kernel), and for each row the map
    raw value → new label (the values that do not occur take the remaining labels in increasing order, so the map is
    a permutation of 0..n−1). A fixed number of vectorized steps: a stable sort of each row, its runs' first
    positions, and their ranks by a cumulative sum."""
    b, n = raw.shape
    rows = np.arange(b)[:, None]
    order = np.argsort(raw, axis=1, kind="stable")
    srt = np.take_along_axis(raw, order, axis=1)
    start = np.ones((b, n), dtype=bool)
    start[:, 1:] = srt[:, 1:] != srt[:, :-1]
    run_start = np.maximum.accumulate(np.where(start, np.arange(n)[None, :], 0), axis=1)
    first_pos = np.take_along_axis(order, run_start, axis=1)  # first occurrence of each sorted entry's value
    is_first = np.zeros((b, n), dtype=np.int64)
    is_first[rows, first_pos] = 1
    rank_at = np.cumsum(is_first, axis=1) - 1  # label of the value first seen at each position
    out = np.empty((b, n), dtype=np.int64)
    out[rows, order] = np.take_along_axis(rank_at, first_pos, axis=1)
    mapping = np.full((b, n), -1, dtype=np.int64)
    mapping[rows, raw] = out
    missing = mapping < 0
    count = is_first.sum(axis=1)
    fill = count[:, None] + np.cumsum(missing, axis=1) - 1
    mapping[missing] = fill[missing]
    return out, mapping


# ---------------------------------------------------------------------------------------------------- orbits
@dataclass
class _Orbit:
    """An orbit of images (rows: 0/1 masks) or kernels (rows: normal-form labels) under the generators.

    ``edges[p, g]`` is the point reached from p by generator g and ``emaps[p, g]`` the bijection it induces from
    the positions of p (sorted points of an image, block labels of a kernel) to those of the target, padded with the
    identity beyond the rank. ``scc``, ``root``, ``fwd`` (root positions → p positions along a BFS tree inside the
    SCC) and ``inv`` (its inverse) are filled by :meth:`_close`."""

    rows: np.ndarray
    rank: np.ndarray
    edges: np.ndarray
    emaps: np.ndarray
    scc: np.ndarray = field(init=False)
    roots: np.ndarray = field(init=False)
    fwd: np.ndarray = field(init=False)
    inv: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self._close()
        order = np.argsort(row_keys(self.rows), kind="stable")
        self._sorted_keys = row_keys(self.rows)[order]
        self._order = order

    def members(self, c: int) -> np.ndarray:
        """The points of SCC c, increasing."""
        if not hasattr(self, "_members"):
            order = np.argsort(self.scc, kind="stable")
            bounds = np.searchsorted(self.scc[order], np.arange(len(self.roots) + 1))
            self._members = (order, bounds)
        order, bounds = self._members
        return order[bounds[c] : bounds[c + 1]]

    def find(self, rows: np.ndarray) -> np.ndarray:
        """Orbit ids of rows (every row must be in the orbit)."""
        keys = row_keys(rows.astype(self.rows.dtype))
        pos = np.searchsorted(self._sorted_keys, keys)
        pos = np.minimum(pos, len(self._order) - 1)
        ids = self._order[pos]
        if not np.array_equal(self.rows[ids], rows):  # pragma: no cover - every image and kernel of M is in it
            raise AssertionError("a row outside its orbit")
        return ids

    def _close(self) -> None:
        m, k = self.edges.shape
        n = self.rows.shape[1]
        src = np.repeat(np.arange(m), k)
        dst = self.edges.reshape(-1)
        scc = strong_components(src, dst, m)
        self.scc = scc
        _, first = np.unique(scc, return_index=True)  # the smallest point of each SCC is its root
        self.roots = first
        intra = scc[src] == scc[dst]
        # breadth-first trees inside every SCC at once: a super-root m joined to every SCC root
        rs = np.concatenate([src[intra], np.full(len(first), m)])
        rd = np.concatenate([dst[intra], first])
        pred = breadth_first_predecessors(rs, rd, m + 1, m)[:m]
        is_root = np.zeros(m, dtype=bool)
        is_root[first] = True
        ident = np.arange(n, dtype=self.emaps.dtype)
        F = np.tile(ident, (m, 1))
        anc = np.arange(m)
        nr = np.flatnonzero(~is_root)
        if len(nr):
            u = pred[nr]
            gen = np.argmax(self.edges[u] == nr[:, None], axis=1)
            F[nr] = self.emaps[u, gen]
            anc[nr] = u
        while np.any(anc[anc] != anc):  # pointer doubling: F[p] maps the positions of anc[p] to those of p
            F = np.take_along_axis(F, F[anc].astype(np.intp), axis=1)
            anc = anc[anc]
        self.fwd = F
        self.inv = np.argsort(F, axis=1).astype(F.dtype)

    def schreier_generators(self, c: int) -> np.ndarray:
        """Schreier generators of the group at the root of SCC c, as permutations of its rank positions."""
        pts = np.flatnonzero(self.scc == c)
        r = int(self.rank[self.roots[c]])
        tgt = self.edges[pts]
        keep = self.scc[tgt] == c
        a = np.repeat(pts, keep.sum(axis=1))
        g = np.nonzero(keep)[1]
        b = tgt[keep]
        e = self.emaps[a, g]
        s = np.take_along_axis(e, self.fwd[a].astype(np.intp), axis=1)  # g ∘ M_a
        s = np.take_along_axis(self.inv[b], s.astype(np.intp), axis=1)  # M_b⁻¹ ∘ g ∘ M_a
        return np.unique(s[:, :r].astype(np.int64), axis=0)


def _orbit(start: np.ndarray, act: Any, gens: np.ndarray, limit: int, what: str) -> _Orbit:
    """Breadth-first orbit of ``start`` (one row) under ``act(rows, g) → (rows, bijections)``, vectorized per
    layer and generator; LimitExceededError as soon as it passes ``limit`` points."""
    k, n = gens.shape
    rows = [start[None, :]]
    seen_keys = row_keys(start[None, :])
    seen_ids = np.zeros(1, dtype=np.int64)
    edges, emaps = [], []
    frontier, size = start[None, :], 1
    while len(frontier):
        b = len(frontier)
        img, em = act(frontier, gens)  # (b·k, n) in (point, generator) order, bijections (b, k, n)
        keys = row_keys(img)
        order = np.argsort(seen_keys, kind="stable")
        sk = seen_keys[order]
        pos = np.minimum(np.searchsorted(sk, keys), len(sk) - 1)
        hit = sk[pos] == keys
        e = np.empty(b * k, dtype=np.int64)
        e[hit] = seen_ids[order[pos[hit]]]
        miss = np.flatnonzero(~hit)
        if len(miss):
            uk, first, inverse = np.unique(keys[miss], return_index=True, return_inverse=True)
            if size + len(uk) > limit:
                raise LimitExceededError(f"the {what} orbit has more than {limit:,} points, over {_why(limit)}")
            ids = size + np.arange(len(uk))
            e[miss] = ids[inverse.ravel()]
            frontier = img[miss[first]]
            seen_keys = np.concatenate([seen_keys, uk])
            seen_ids = np.concatenate([seen_ids, ids])
            size += len(uk)
        else:
            frontier = frontier[:0]
        edges.append(e.reshape(b, k))
        emaps.append(em)
        rows.append(frontier)
    allrows = np.concatenate(rows)
    rank = allrows.sum(axis=1) if what == "image" else allrows.max(axis=1) + 1
    return _Orbit(allrows, rank.astype(np.int64), np.concatenate(edges), np.concatenate(emaps))


def _why(limit: int) -> str:
    return f"the limit of {limit:,} points that the memory limit holds"


def _act_on_images(masks: np.ndarray, gens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """g(A) for 0/1 masks A and every generator g ((b·k, n), point-major), and the bijections sorted(A) positions
    → sorted(g(A)) positions ((b, k, n), identity padded beyond the rank)."""
    b, n = masks.shape
    k = len(gens)
    pts = np.where(masks.astype(bool)[:, None, :], gens[None, :, :], n).reshape(b * k, n)
    out = np.zeros((b * k, n + 1), dtype=np.uint8)
    out[np.arange(b * k)[:, None], pts] = 1
    out = out[:, :n]
    pos_b = (np.cumsum(out, axis=1) - 1).reshape(b, k, n)  # rank of each point in g(A)
    order_a = np.argsort(1 - masks, axis=1, kind="stable")  # the points of A first, increasing
    through = gens[np.arange(k)[None, :, None], order_a[:, None, :]]  # g(A[j])
    bij = np.take_along_axis(pos_b, through, axis=2)
    r = masks.sum(axis=1)
    pad = np.arange(n)[None, None, :] >= r[:, None, None]
    bij = np.where(pad, np.arange(n)[None, None, :], bij)
    return out, bij.astype(np.int32)


def _act_on_kernels(labels: np.ndarray, gens: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """g⁻¹(K) = normal form of K's labels read through g, for every generator g ((b·k, n), point-major), and the
    bijections blocks(K) → blocks(g⁻¹(K)) (the relabelling, (b, k, n); padded with the identity)."""
    b, n = labels.shape
    raw = labels[:, gens].reshape(b * len(gens), n).astype(np.int64)  # raw[(p, g), i] = label_p(g(i))
    out, mapping = _relabel(raw)
    return out.astype(labels.dtype), mapping.reshape(b, len(gens), n).astype(np.int32)


# ---------------------------------------------------------------------------------------------------- groups
class _Group:
    """A permutation group given by generators, enumerated (all elements, sorted void keys) on first use."""

    def __init__(self, gens: np.ndarray, r: int, max_elements: int) -> None:
        ident = np.arange(r)
        gens = gens[np.any(gens != ident, axis=1)] if len(gens) else gens.reshape(0, r)
        self.r, self.gens, self.max_elements = r, gens.astype(np.int64), max_elements

    @cached_property
    def elements(self) -> np.ndarray:
        if len(self.gens) == 0:
            return np.arange(self.r, dtype=np.int32)[None, :]
        try:
            M = TransitionMonoid(self.gens, max_elements=self.max_elements)
        except LimitExceededError:
            raise LimitExceededError(
                f"a Schützenberger group on {self.r} points has more than {self.max_elements:,} elements, over the "
                "limit that the memory limit holds"
            ) from None
        return M.elements.astype(np.int32)

    @property
    def order(self) -> int:
        return math.factorial(self.r) if self.symmetric else len(self.elements)

    @cached_property
    def keys(self) -> np.ndarray:
        return np.sort(row_keys(self.elements.astype(np.int32)))

    @cached_property
    def symmetric(self) -> bool:
        """Whether the group is Sym(r): its transpositions join all r points (they then generate Sym(r)), or
        else its enumerated order is r!."""
        if generates_symmetric(self.gens, self.r):
            return True
        return len(self.elements) == math.factorial(self.r)

    def contains(self, perms: np.ndarray) -> np.ndarray:
        """Membership of each row (permutations of 0..r−1)."""
        if self.symmetric:
            return np.ones(len(perms), dtype=bool)
        return np.isin(row_keys(perms.astype(np.int32)), self.keys)


def _compose(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Row-wise p ∘ q (apply q, then p): (p ∘ q)[..., j] = p[..., q[..., j]]; leading axes broadcast."""
    p, q = np.asarray(p), np.asarray(q).astype(np.intp, copy=False)
    if p.ndim == 1:
        return p[q]
    if q.ndim == 1:
        return p[..., q]
    if p.shape[:-1] != q.shape[:-1]:
        shape = np.broadcast_shapes(p.shape[:-1], q.shape[:-1])
        p, q = np.broadcast_to(p, shape + p.shape[-1:]), np.broadcast_to(q, shape + q.shape[-1:])
    return np.take_along_axis(p, q, axis=-1)


def _inverse(p: np.ndarray) -> np.ndarray:
    return np.argsort(p, axis=-1)


def _in_double_coset(phi: np.ndarray, x_phi: np.ndarray, G_lam: _Group, G_rho: _Group) -> np.ndarray:
    """For rows phi: φ ∈ G_λ ∘ φ_x ∘ G_ρ, looping (vectorized, chunked) over the smaller group."""
    if G_lam.symmetric or G_rho.symmetric:
        return np.ones(len(phi), dtype=bool)
    x_inv = _inverse(x_phi)
    out = np.zeros(len(phi), dtype=bool)
    if G_rho.order <= G_lam.order:
        # φ σ⁻¹ φ_x⁻¹ ∈ G_λ for some σ ∈ G_ρ
        small, big = _inverse(G_rho.elements), G_lam
        build = lambda f, s: _compose(_compose(f[:, None, :], s[None, :, :]), x_inv)  # noqa: E731
    else:
        # φ_x⁻¹ π⁻¹ φ ∈ G_ρ for some π ∈ G_λ
        small, big = _inverse(G_lam.elements), G_rho
        build = lambda f, s: _compose(x_inv, _compose(s[None, :, :], f[:, None, :]))  # noqa: E731
    step = max(1, MEMBERSHIP_CHUNK // max(1, len(small) * phi.shape[1]))
    for c0 in range(0, len(phi), step):
        f = phi[c0 : c0 + step]
        cand = build(f, small)
        out[c0 : c0 + step] = big.contains(cand.reshape(-1, phi.shape[1])).reshape(len(f), -1).any(axis=1)
    return out


# ---------------------------------------------------------------------------------------------------- D-classes
@dataclass
class DClass:
    """One D-class: its rank, the sizes of its image and kernel SCCs, the orders of its Schützenberger groups
    (G_λ, G_ρ, and G = their intersection ≅ each H-class), regularity, and the counts they give."""

    index: int
    rank: int
    images: int
    kernels: int
    lambda_order: int
    rho_order: int
    group_order: int
    regular: bool
    idempotents: int
    group_generators: np.ndarray = field(repr=False)

    @property
    def l_classes(self) -> int:
        return self.images * self.lambda_order // self.group_order

    @property
    def r_classes(self) -> int:
        return self.kernels * self.rho_order // self.group_order

    @property
    def h_classes(self) -> int:
        return self.l_classes * self.r_classes

    @property
    def size(self) -> int:
        return self.h_classes * self.group_order


@dataclass
class SubgroupSummary:
    """The maximal subgroup of a regular D-class (the Schützenberger group G, acting on the image of a
    representative), described by fsa.groups.describe_group within its work budget."""

    d_class: int
    rank: int
    order: int
    generators: np.ndarray = field(repr=False)
    natural_action: np.ndarray | None = field(default=None, repr=False)

    @cached_property
    def summary(self) -> Any:
        if self.order == 1:
            return GroupSummary(1, "C1", (), True, 0)
        if self.natural_action is not None:  # a group automaton's own action (as fsa.green does), when faithful
            natural = describe_group(self.natural_action, what=f"the maximal subgroup of D-class {self.d_class}")
            if natural.order == self.order:
                return natural
        return describe_group(self.generators, degree=self.rank, what=f"the maximal subgroup of D-class {self.d_class}")

    @property
    def name(self) -> str:
        return self.summary.name

    @property
    def composition_factors(self) -> list[str]:
        return list(self.summary.composition_factors)

    @property
    def is_abelian(self) -> bool:
        return bool(self.summary.is_abelian)

    @property
    def is_solvable(self) -> bool:
        return bool(self.summary.is_solvable)

    def to_dict(self) -> dict[str, Any]:
        return subgroup_record(self)


class GreenClasses:
    """Green's structure of a transformation monoid from its D-classes (:func:`green_classes`).

    Offers the counts a TransitionMonoid gives (``size``, ``number_of_idempotents``,
    ``number_of_{D,R,L,H}_classes``, ``number_of_regular_D_classes``), ``d_classes`` (:class:`DClass`, the
    identity's first, then in the order found) and ``maximal_subgroups`` (one per regular D-class);
    ``generators``/``n_states``, and ``green`` (itself), so that fsa.classify and fsa.realizability accept it.
    """

    def __init__(self, gens: np.ndarray, d_classes: list[DClass], automaton: Any = None) -> None:
        self.generators = gens
        self.n_states = gens.shape[1]
        self.n_generators = gens.shape[0]
        self.automaton = automaton
        self.d_classes = d_classes

    @property
    def green(self) -> GreenClasses:
        return self

    @property
    def size(self) -> int:
        return sum(d.size for d in self.d_classes)

    def __len__(self) -> int:
        return self.size

    @property
    def number_of_idempotents(self) -> int:
        return sum(d.idempotents for d in self.d_classes)

    @property
    def number_of_D_classes(self) -> int:
        return len(self.d_classes)

    @property
    def number_of_regular_D_classes(self) -> int:
        return sum(d.regular for d in self.d_classes)

    @property
    def number_of_R_classes(self) -> int:
        return sum(d.r_classes for d in self.d_classes)

    @property
    def number_of_L_classes(self) -> int:
        return sum(d.l_classes for d in self.d_classes)

    @property
    def number_of_H_classes(self) -> int:
        return sum(d.h_classes for d in self.d_classes)

    @cached_property
    def maximal_subgroups(self) -> list[SubgroupSummary]:
        gens = self.generators
        natural = None
        a = self.automaton
        if a is not None and a.action is not None and np.all(np.sort(gens, axis=1) == np.arange(self.n_states)):
            natural = np.asarray(a.action)
        return [
            SubgroupSummary(d.index, d.rank, d.group_order, d.group_generators, natural if d.index == 0 else None)
            for d in self.d_classes
            if d.regular
        ]

    def __repr__(self) -> str:
        return (
            f"GreenClasses(size={self.size}, D={self.number_of_D_classes}, R={self.number_of_R_classes}, "
            f"L={self.number_of_L_classes}, H={self.number_of_H_classes})"
        )


def _transversal_pairs(kernels: np.ndarray, images: np.ndarray, r: int) -> int:
    """Number of (kernel, image) pairs whose image meets every block once (kernels: labels (p, n); images: masks
    (l, n), all of rank r). Chunked over kernels."""
    pts = np.argsort(1 - images, axis=1, kind="stable")[:, :r]  # (l, r) the points of each image
    full = (1 << r) - 1 if r < 63 else None
    total = 0
    step = max(1, (1 << 22) // max(1, len(pts) * r))
    for c0 in range(0, len(kernels), step):
        lab = kernels[c0 : c0 + step][:, pts]  # (p, l, r)
        if full is not None:
            hit = np.bitwise_or.reduce(np.left_shift(1, lab.astype(np.int64)), axis=2) == full
        else:
            hit = np.all(np.sort(lab, axis=2) == np.arange(r), axis=2)
        total += int(hit.sum())
    return total


class _Builder:
    """The D-class search of :func:`green_classes`."""

    def __init__(self, gens: np.ndarray, max_bytes: int) -> None:
        self.gens = gens.astype(np.int64)
        k, n = gens.shape
        self.n, self.k = n, k
        # a point's row, edges, bijections, tree maps and keys, plus the temporaries of acting on it (int64 rows)
        point_bytes = n + ORBIT_BYTES_FIXED + k * (8 + 4 * n) + 8 * n + 3 * n + ACT_BYTES_PER_ENTRY * k * n
        self.point_limit = max(1, max_bytes // 2 // point_bytes)
        self.group_limit = max(1, int(GROUP_CELLS * max_bytes / MAX_BYTES) // max(1, n))
        ident = np.arange(n)
        self.images = _orbit(np.ones(n, dtype=np.uint8), _act_on_images, self.gens, self.point_limit, "image")
        self.kernels = _orbit(ident.astype(np.int32), _act_on_kernels, self.gens, self.point_limit, "kernel")
        self.lam_groups: dict[int, _Group] = {}
        self.rho_groups: dict[int, _Group] = {}
        self.reps: dict[tuple[int, int], list[tuple[int, np.ndarray]]] = {}  # (cλ, cρ) → [(D index, φ)]
        self.d_classes: list[DClass] = []
        self.keys: list[tuple[int, int]] = []  # (image SCC, kernel SCC) of each D-class
        self.canon: dict[tuple[int, int, int], int] = {}  # (cλ, cρ, double-coset key) → D index (see canonical)
        self.pairs: dict[tuple[int, int], int] = {}  # (cλ, cρ) → transversal (kernel, image) pairs
        self.moves: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # cλ → (tree maps, points) of its images

    def lam_group(self, c: int) -> _Group:
        if c not in self.lam_groups:
            r = int(self.images.rank[self.images.roots[c]])
            self.lam_groups[c] = _Group(self.images.schreier_generators(c), r, self.group_limit)
        return self.lam_groups[c]

    def rho_group(self, c: int) -> _Group:
        if c not in self.rho_groups:
            r = int(self.kernels.rank[self.kernels.roots[c]])
            self.rho_groups[c] = _Group(self.kernels.schreier_generators(c), r, self.group_limit)
        return self.rho_groups[c]

    def coordinates(self, ys: np.ndarray) -> tuple[np.ndarray, ...]:
        """For transformations ys (b, n): rank, image SCC, kernel SCC, φ (b, n; the first rank entries) of the
        element moved to the SCC roots (module docstring), and the image's orbit id."""
        b, n = ys.shape
        masks = np.zeros((b, n), dtype=np.uint8)
        masks[np.arange(b)[:, None], ys] = 1
        labels, _ = _relabel(ys)
        ia = self.images.find(masks)
        ik = self.kernels.find(labels.astype(np.int32))
        rank = masks.sum(axis=1).astype(np.int64)
        pos_a = np.cumsum(masks, axis=1) - 1  # position of each point in the image
        psi = np.tile(np.arange(n), (b, 1))  # ψ: kernel labels → image positions (identity padded)
        psi[np.arange(b)[:, None], labels] = np.take_along_axis(pos_a, ys, axis=1)
        phi = _compose(self.images.inv[ia], _compose(psi, self.kernels.fwd[ik]))
        return rank, self.images.scc[ia], self.kernels.scc[ik], phi, ia

    def canonical(self, coords: tuple[np.ndarray, ...]) -> np.ndarray:
        """For each element, a key of its double coset G_λ φ G_ρ among those with its two SCCs (then s D t ⇔ same
        SCCs and same key): 0 when either group is the symmetric group (one double coset), else the least
        product λ∘φ∘ρ (its mixed-radix code); −1 where the groups are too large for this (CANONICAL_PRODUCTS) or
        the rank too large for 63-bit codes — those are tested one D-class at a time (:meth:`find`)."""
        rank, cl, cr, phi, _ = coords
        out = np.full(len(cl), -1, dtype=np.int64)
        pair = cl.astype(np.int64) * (int(cr.max()) + 1) + cr
        _, first, inverse = np.unique(pair, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(len(first) + 1))
        for g, i in enumerate(first):
            sel = order[bounds[g] : bounds[g + 1]]
            r = int(rank[i])
            G_lam, G_rho = self.lam_group(int(cl[i])), self.rho_group(int(cr[i]))
            if not len(G_lam.gens) and not len(G_rho.gens) and r <= 15:
                out[sel] = row_keys(phi[sel, :r])
            elif G_lam.symmetric or G_rho.symmetric:
                out[sel] = 0
            elif r <= 15 and G_lam.order * G_rho.order <= CANONICAL_PRODUCTS:
                L, R = G_lam.elements.astype(np.intp), G_rho.elements.astype(np.intp)
                step = max(1, MEMBERSHIP_CHUNK // (len(L) * len(R) * r))
                for c0 in range(0, len(sel), step):
                    f = phi[sel[c0 : c0 + step], :r]
                    fr = f[np.arange(len(f))[:, None, None], R[None, :, :]]  # φ∘ρ: (c, |R|, r)
                    lfr = L[np.arange(len(L))[None, :, None, None], fr[:, None, :, :]]  # λ∘φ∘ρ: (c, |L|, |R|, r)
                    out[sel[c0 : c0 + step]] = row_keys(lfr.reshape(-1, r)).reshape(len(f), -1).min(axis=1)
        return out

    def find(self, coords: tuple[np.ndarray, ...], out: np.ndarray, only: int | None = None) -> None:
        """Fill ``out`` (−1 where unknown; other negative entries are skipped) with the D-class index of each
        element given by its coordinates, testing the D-classes found so far (or only D-class ``only``)."""
        _, cl, cr, phi, _ = coords
        todo_all = np.flatnonzero(out == -1)
        if only is not None:
            keys = {self.keys[only]}
        else:
            keys = set(zip(cl[todo_all].tolist(), cr[todo_all].tolist(), strict=True))
        for key in keys:
            sel = todo_all[(cl[todo_all] == key[0]) & (cr[todo_all] == key[1])]
            for d, x_phi in self.reps.get(key, []):
                if only is not None and d != only:
                    continue
                todo = sel[out[sel] == -1]
                if not len(todo):
                    break
                r = len(x_phi)
                G_lam = self.lam_group(key[0])
                if self.d_classes[d].regular:  # G_λ φ_x G_ρ = G_λ φ_x
                    inside = G_lam.contains(_compose(phi[todo, :r], _inverse(x_phi)[None, :]))
                else:
                    inside = _in_double_coset(phi[todo, :r], x_phi, G_lam, self.rho_group(key[1]))
                out[todo[inside]] = d

    def add(self, y: np.ndarray, coords: tuple[np.ndarray, ...], i: int) -> np.ndarray:
        """Make the D-class of y (row i of the batch whose ``coordinates`` are given); return the candidates ℓ·g
        for its L-class representatives ℓ."""
        rank, cl, cr, phi, ia = (c[i] for c in coords)
        r, cl, cr, ia = int(rank), int(cl), int(cr), int(ia)
        x_phi = phi[:r]
        img_pts = self.images.members(cl)
        ker_pts = self.kernels.members(cr)
        if (cl, cr) not in self.pairs:
            kernels = self.kernels.rows[ker_pts].astype(np.int64)
            self.pairs[cl, cr] = _transversal_pairs(kernels, self.images.rows[img_pts], r)
        pairs = self.pairs[cl, cr]
        regular = pairs > 0
        G_lam = self.lam_group(cl)
        if regular:
            G_rho, G = G_lam, G_lam
            group_order, gens = G_lam.order, G_lam.gens
        else:
            G_rho = self.rho_group(cr)
            if not len(G_lam.gens) or not len(G_rho.gens):
                conj = np.arange(r)[None, :]  # one group is trivial: so is G
            else:
                conj = _compose(_compose(x_phi, G_rho.elements), _inverse(x_phi))  # φ G_ρ φ⁻¹ on image positions
                conj = conj[G_lam.contains(conj)]
            G = _Group(conj, r, self.group_limit)
            G.__dict__["elements"] = conj
            group_order, gens = len(conj), conj
        index = len(self.d_classes)
        dc = DClass(
            index=index,
            rank=r,
            images=len(img_pts),
            kernels=len(ker_pts),
            lambda_order=G_lam.order,
            rho_order=G_rho.order,
            group_order=group_order,
            regular=regular,
            idempotents=pairs if regular else 0,  # regular: G_λ = G_ρ = G, one H-class per (kernel, image) pair
            group_generators=gens,
        )
        self.d_classes.append(dc)
        self.reps.setdefault((cl, cr), []).append((index, x_phi))
        self.keys.append((cl, cr))
        # L-class representatives: π∘x moved to every image A of the SCC, π over left cosets πG of G in G_λ
        if group_order == G_lam.order:
            cosets = np.arange(r)[None, :]
        else:
            prods = _compose(G_lam.elements[:, None, :], G.elements[None, :, :])  # π∘h
            keys = row_keys(prods.reshape(-1, r).astype(np.int32)).reshape(len(G_lam.elements), -1)
            canon = np.sort(keys, axis=1)[:, 0]
            _, first = np.unique(canon, return_index=True)
            cosets = G_lam.elements[np.sort(first)]
        # y moved to the root image by the tree inverse (y·m̄, in y's R-class), as positions in A₀
        own = (np.cumsum(self.images.rows[ia]) - 1)[y]  # position of y(i) in im(y)
        x_root = self.images.inv[ia][own]  # positions in A₀ of y·m̄ (same R-class as y)
        base = _compose(cosets, x_root)  # (c, n): π∘x in positions of A₀
        if cl not in self.moves:
            fwd = self.images.fwd[img_pts][:, :r].astype(np.intp)  # (a, r): positions of A₀ → positions of each A
            pts = np.argsort(1 - self.images.rows[img_pts], axis=1, kind="stable")[:, :r]  # the points of each A
            self.moves[cl] = fwd, pts
        fwd, pts = self.moves[cl]
        moved = fwd[:, base.reshape(-1)]  # (a, c·n)
        ells = np.take_along_axis(pts, moved, axis=1).reshape(-1, self.n)  # L-class representatives
        return np.concatenate([g[ells] for g in self.gens])  # ℓ·g = g ∘ ℓ


def _full_transformation_classes(gens: np.ndarray) -> list[DClass] | None:
    """The D-classes of T_n when the generators generate it — Sym(n) (recognized from the permutations among them,
    fsa.group_table.generates_symmetric) and a map of rank n − 1 generate T_n (Howie, Fundamentals of Semigroup
    Theory, 1995, §1.9 and Exercise 1.7) — else None. T_n has one D-class per rank r, the maps of rank r: C(n, r)
    L-classes (their images), S(n, r) R-classes (their kernels, Stirling numbers of the second kind), maximal
    subgroups Sym(r), and C(n, r)·r^(n−r) idempotents (an image and a map of the other points into it)."""
    k, n = gens.shape
    perms = gens[np.all(np.sort(gens, axis=1) == np.arange(n), axis=1)]
    ranks = np.array([len(np.unique(g)) for g in gens])
    if n < 3 or not np.any(ranks == n - 1) or not generates_symmetric(perms, n):
        return None
    stirling = [[1]]  # S(m, j) for m ≤ n
    for m in range(1, n + 1):
        prev = stirling[-1] + [0]
        stirling.append([0] + [j * prev[j] + prev[j - 1] for j in range(1, m + 1)])
    out = []
    for r in range(n, 0, -1):
        group = math.factorial(r)
        swap = np.arange(r)
        swap[:2] = swap[:2][::-1]
        gen_rows = np.stack([np.roll(np.arange(r), -1), swap])[: 2 if r > 1 else 0]
        out.append(
            DClass(
                index=n - r,
                rank=r,
                images=math.comb(n, r),
                kernels=stirling[n][r],
                lambda_order=group,
                rho_order=group,
                group_order=group,
                regular=True,
                idempotents=math.comb(n, r) * r ** (n - r),
                group_generators=gen_rows.reshape(-1, r).astype(np.int64),
            )
        )
    return out


def green_classes(source: Any, *, max_bytes: int = MAX_BYTES) -> GreenClasses:
    """Green's D, R, L, H classes, regular D-classes, maximal subgroups, size and idempotents of the transition
    monoid of ``source`` (anything TransitionMonoid accepts) without enumerating it (module docstring).

    Limits: the image and kernel orbits may hold as many points as half of ``max_bytes`` allows, and each
    Schützenberger group as many elements as GROUP_CELLS (scaled by ``max_bytes``) cells; LimitExceededError
    beyond either.
    """
    gens, automaton = _as_generators(source)
    full = _full_transformation_classes(np.asarray(gens, dtype=np.int64))
    if full is not None:
        return GreenClasses(np.asarray(gens), full, automaton)
    b = _Builder(np.asarray(gens, dtype=np.int64), int(max_bytes))
    queue = np.arange(b.n)[None, :]
    while len(queue):
        queue = np.unique(queue, axis=0)
        coords = b.coordinates(queue)
        _, cl, cr, _, _ = coords
        canon = b.canonical(coords)
        keyed = canon >= 0
        where = np.full(len(queue), -1, dtype=np.int64)
        triples = list(zip(cl.tolist(), cr.tolist(), canon.tolist(), strict=True))
        where[keyed] = [b.canon.get(t, -1) for t, k in zip(triples, keyed, strict=True) if k]
        rest = np.where(keyed, -2, where)  # only the unkeyed are tested one D-class at a time
        b.find(coords, rest)
        where[~keyed] = rest[~keyed]
        # the keyed elements grouped by (cλ, cρ, key): one group per D-class
        _, group, inverse = np.unique(np.stack([cl, cr, canon], axis=1), axis=0, return_index=True, return_inverse=True)
        inverse = inverse.ravel()
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(len(group) + 1))
        found, first = [], 0
        while True:
            while first < len(where) and where[first] >= 0:  # the first element still without a D-class
                first += 1
            if first == len(where):
                break
            found.append(b.add(queue[first], coords, first))
            d = len(b.d_classes) - 1
            if keyed[first]:
                b.canon[triples[first]] = d
                g = inverse[first]
                where[order[bounds[g] : bounds[g + 1]]] = d
            else:
                where[first] = d
                rest = np.where(keyed, -2, where)
                b.find(coords, rest, only=d)
                where[~keyed] = rest[~keyed]
        queue = np.concatenate(found) if found else queue[:0]
    return GreenClasses(np.asarray(gens), b.d_classes, automaton)


__all__ = ["green_classes", "GreenClasses", "DClass", "SubgroupSummary"]
