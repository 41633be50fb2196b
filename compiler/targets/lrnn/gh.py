"""Generalized Householder (GH) factors C = I − β v vᵀ with ‖v‖ = 1 (negative-eigenvalues §3.1, Proposition 1).

A factor is stored with its *exact* description next to its float direction (each entry the float nearest to its
exact value, compiler/targets/lrnn/rounding.py), so that products can be multiplied out in rational arithmetic
(compiler/targets/lrnn/exact.py) and the float weights checked against them for equality:

==========  ==========  =====================================  ==========================================
kind        args        v                                      β and meaning
==========  ==========  =====================================  ==========================================
identity    –           e_0 (unused)                           β = 0: C = I (padding)
swap        (i, j)      (e_i − e_j)/√2                         β = 2: the transposition (i j) (Figure 3)
project     (j, –)      e_j                                    β = 1: C = I − e_j e_jᵀ (eigenvalue 0)
negate      (j, –)      e_j                                    β = 2: C = I − 2 e_j e_jᵀ (eigenvalue −1)
angle       (a, den)    (cos πa/den, sin πa/den)  (width 2)    β = 2: reflection across the line ⟂ v
==========  ==========  =====================================  ==========================================

Factors are listed in *application order*: A = C_k ⋯ C_2 C_1, so h ← C_1 h first (as DeltaProduct applies them).
Every kind has 1 − β ∈ {1, −1, 0} ⊂ [−1, 1], hence ‖C‖ ≤ 1 and ‖A‖ ≤ 1 (Proposition 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .rounding import cos_sin_pi, inv_sqrt

#: integer codes of the factor kinds, as stored in model files (tensor ``<layer>.fkind``)
KINDS = ("identity", "swap", "project", "negate", "angle")
KIND_CODE = {k: i for i, k in enumerate(KINDS)}
_BETA = {"identity": 0, "swap": 2, "project": 1, "negate": 2, "angle": 2}


@dataclass(frozen=True)
class GHFactor:
    """One GH factor I − β v vᵀ given exactly by its kind and two integer arguments (see the module table)."""

    kind: str
    a: int = 0
    b: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KIND_CODE:
            raise ValueError(f"unknown GH factor kind {self.kind!r}")

    @property
    def beta(self) -> int:
        return _BETA[self.kind]

    def direction(self, n: int) -> np.ndarray:
        """The unit vector v (float64, length n): each entry the float nearest to its exact value."""
        v = np.zeros(n)
        if self.kind == "identity":
            v[0] = 1.0
        elif self.kind == "swap":
            v[self.a], v[self.b] = inv_sqrt(2), -inv_sqrt(2)
        elif self.kind in ("project", "negate"):
            v[self.a] = 1.0
        else:
            c, s = cos_sin_pi(self.a, self.b)
            v[0], v[1] = float(c), float(s)
        return v

    def exact_direction(self, n: int) -> list[Fraction] | None:
        """An unnormalized rational direction u ∥ v (so vvᵀ = uuᵀ/uᵀu is rational), or None for ``angle``."""
        if self.kind == "angle":
            return None
        u = [Fraction(0)] * n
        if self.kind == "identity":
            u[0] = Fraction(1)
        elif self.kind == "swap":
            u[self.a], u[self.b] = Fraction(1), Fraction(-1)
        else:
            u[self.a] = Fraction(1)
        return u

    def matrix(self, n: int) -> np.ndarray:
        """I − β v vᵀ in float64."""
        v = self.direction(n)
        return np.eye(n) - self.beta * np.outer(v, v)

    def exact_matrix(self, n: int) -> list[list[Fraction]]:
        """I − β uuᵀ/(uᵀu) in rational arithmetic (not for ``angle`` factors)."""
        u = self.exact_direction(n)
        if u is None:
            raise ValueError("angle factors have irrational entries; use angle-index arithmetic")
        norm2 = sum(x * x for x in u)
        beta = Fraction(self.beta)
        return [[Fraction(int(i == j)) - beta * u[i] * u[j] / norm2 for j in range(n)] for i in range(n)]

    def angle_map(self, den2: int) -> tuple[int, int]:
        """The action on angle indices (units of π/den) of this reflection: θ ↦ s − θ, returned as (s mod 2den, −1).

        Reflection across the line at angle φ_v + π/2 maps angle θ to 2φ_v + π − θ. Only for ``angle`` factors.
        """
        if self.kind != "angle":
            raise ValueError("angle_map is for angle factors")
        if self.b != den2:
            raise ValueError(f"angle factor with denominator {self.b}, expected {den2}")
        return (2 * self.a + den2) % (2 * den2), -1


def angle_action(factors: Sequence[GHFactor], den: int) -> tuple[int, int]:
    """The product of angle reflections (and identity padding) as a map of angle indices a ↦ s·a + o (mod 2den),
    angles in units of π/den: returns (s, o) with s = ±1 (a rotation by πo/den when s = 1, else a reflection)."""
    mod = 2 * den
    s, o = 1, 0
    for f in factors:
        if f.kind == "identity":
            continue
        if f.kind != "angle" or f.b != den:
            raise ValueError(f"factor {f} is not an angle reflection with denominator {den}")
        c, _ = f.angle_map(den)  # θ ↦ c − θ
        s, o = -s, (c - o) % mod
    return s, o


def angle_matrix(sign: np.ndarray | int, off: np.ndarray | int, den: int) -> np.ndarray:
    """The 2×2 matrices of a ↦ sign·a + off on unit vectors at angles πa/den, entries correctly rounded
    (shape (..., 2, 2)): the rotation [[c, −s], [s, c]] (sign 1) or the reflection [[c, s], [s, −c]] (sign −1),
    with (c, s) = (cos πoff/den, sin πoff/den)."""
    sign = np.asarray(sign)
    c, s = cos_sin_pi(off, den)
    rot = sign == 1
    return np.stack([np.stack([c, np.where(rot, -s, s)], -1), np.stack([s, np.where(rot, c, -c)], -1)], -2) + 0.0


def unit_vectors(angles: np.ndarray | int, den: int) -> np.ndarray:
    """(cos πa/den, sin πa/den) for each angle index a, correctly rounded (shape (..., 2))."""
    c, s = cos_sin_pi(angles, den)
    return np.stack([c, s], axis=-1)


def transpositions(perm: Sequence[int] | np.ndarray) -> list[tuple[int, int]]:
    """The permutation as transpositions in application order (a k-cycle gives k − 1 of them).

    For a cycle c0 → c1 → … → c_{k−1} → c0 the transpositions (c0 c1), (c0 c2), …, (c0 c_{k−1}) applied in this
    order compose to it.
    """
    p = np.asarray(perm)
    seen = np.zeros(len(p), dtype=bool)
    out: list[tuple[int, int]] = []
    for start in range(len(p)):
        if seen[start]:
            continue
        cycle = [start]
        seen[start] = True
        j = int(p[start])
        while j != start:
            cycle.append(j)
            seen[j] = True
            j = int(p[j])
        out.extend((cycle[0], c) for c in cycle[1:])
    return out


def reflections_of_permutation(perm: Sequence[int] | np.ndarray) -> list[GHFactor]:
    """P_σ (P_σ e_i = e_σ(i)) as a product of reflections with v = (e_i − e_j)/√2, one per transposition."""
    return [GHFactor("swap", i, j) for i, j in transpositions(perm)]


def zero_as_projections(n: int) -> list[GHFactor]:
    """The zero matrix as ∏_j (I − e_j e_jᵀ): n GH factors with β = 1 (Theorem 4's resets)."""
    return [GHFactor("project", j) for j in range(n)]


def permutation_matrix(perm: Sequence[int] | np.ndarray) -> np.ndarray:
    """P_σ with P_σ e_i = e_σ(i) (integer entries)."""
    p = np.asarray(perm, dtype=np.int64)
    m = np.zeros((len(p), len(p)), dtype=np.int64)
    m[p, np.arange(len(p))] = 1
    return m


def product(factors: Sequence[GHFactor], n: int) -> np.ndarray:
    """A = C_k ⋯ C_1 in float64 (factor by factor)."""
    a = np.eye(n)
    for f in factors:
        a = f.matrix(n) @ a
    return a


def exact_product(factors: Sequence[GHFactor], n: int) -> list[list[Fraction]]:
    """A = C_k ⋯ C_1 in rational arithmetic (every factor must have a rational direction)."""
    a = [[Fraction(int(i == j)) for j in range(n)] for i in range(n)]
    for f in factors:
        c = f.exact_matrix(n)
        a = [[sum(c[i][l] * a[l][j] for l in range(n)) for j in range(n)] for i in range(n)]
    return a


def integer_product(factors: Sequence[GHFactor], n: int) -> np.ndarray:
    """A = C_k ⋯ C_1 for integer factor kinds, exactly in int64: C·M swaps rows i, j (swap), zeroes row j
    (project) or negates row j (negate) of M."""
    a = np.eye(n, dtype=np.int64)
    for f in factors:
        if f.kind == "swap":
            a[[f.a, f.b]] = a[[f.b, f.a]]
        elif f.kind == "project":
            a[f.a] = 0
        elif f.kind == "negate":
            a[f.a] = -a[f.a]
        elif f.kind == "angle":
            raise ValueError("angle factors have irrational entries")
    return a


def pack(rows: Sequence[Sequence[GHFactor]], n: int) -> dict[str, np.ndarray]:
    """Per-row factor lists → padded tensors: fkind (R,k), fargs (R,k,2), beta (R,k), v (R,k,n).

    Rows are padded with identity factors (β = 0) up to k = max(1, longest row).
    """
    k = max([1] + [len(r) for r in rows])
    r_count = len(rows)
    fkind = np.zeros((r_count, k), dtype=np.int64)
    fargs = np.zeros((r_count, k, 2), dtype=np.int64)
    beta = np.zeros((r_count, k))
    v = np.zeros((r_count, k, n))
    v[:, :, 0] = 1.0
    for r, fs in enumerate(rows):
        for j, f in enumerate(fs):
            fkind[r, j] = KIND_CODE[f.kind]
            fargs[r, j] = (f.a, f.b)
            beta[r, j] = f.beta
            v[r, j] = f.direction(n)
    return {"fkind": fkind, "fargs": fargs, "beta": beta, "v": v}


def unpack(fkind: np.ndarray, fargs: np.ndarray) -> list[list[GHFactor]]:
    """The inverse of :func:`pack` on the exact descriptions (identity padding kept)."""
    return [[GHFactor(KINDS[int(c)], int(a), int(b)) for c, (a, b) in zip(kr, ar)] for kr, ar in zip(fkind, fargs)]


def factors_per_row(fkind: np.ndarray) -> np.ndarray:
    """Number of non-identity factors in each row."""
    return (np.asarray(fkind) != KIND_CODE["identity"]).sum(axis=1)


# --- Proposition 1 (negative-eigenvalues paper): general matrices as products of float GH factors -----------------


@dataclass(frozen=True)
class FloatGH:
    """A GH factor I − β v vᵀ with a float unit vector v and β ∈ [0, 2] (for matrices with no exact description)."""

    v: np.ndarray
    beta: float

    def matrix(self) -> np.ndarray:
        return np.eye(len(self.v)) - self.beta * np.outer(self.v, self.v)


def float_product(factors: Sequence[FloatGH], n: int) -> np.ndarray:
    """A = C_k ⋯ C_1 (application order: C_1 acts first) in float64."""
    a = np.eye(n)
    for f in factors:
        a = a - f.beta * np.outer(f.v, f.v @ a)
    return a


def orthogonal_as_reflections(q: np.ndarray, *, atol: float = 1e-9) -> list[FloatGH]:
    """An orthogonal n×n matrix as at most n reflections (β = 2), in application order: Proposition 1, M_n^n({−1, 1}).

    Householder QR with the sign chosen so that each column is sent to +e_i: step i reflects the current column i
    (a unit vector in span(e_i..e_{n−1})) onto e_i — no factor when it already is e_i. After n − 1 steps the rest is
    diag(1, …, 1, ±1), a last reflection along e_{n−1} when it is −1. H_k ⋯ H_1 Q = I, so Q = H_1 ⋯ H_k: the
    reflections apply in the reverse order of the QR steps.
    """
    q = np.asarray(q, dtype=np.float64)
    n = q.shape[0]
    if q.ndim != 2 or q.shape != (n, n):
        raise ValueError(f"orthogonal_as_reflections: expected a square matrix, got shape {q.shape}")
    if not np.allclose(q.T @ q, np.eye(n), atol=atol):
        raise ValueError("orthogonal_as_reflections: the matrix is not orthogonal (QᵀQ ≠ I)")
    r = q.copy()
    steps: list[FloatGH] = []
    for i in range(n - 1):
        x = r[:, i].copy()
        x[:i] = 0.0
        u = x.copy()
        u[i] -= 1.0
        norm = np.linalg.norm(u)
        if norm <= atol:
            continue
        f = FloatGH(u / norm, 2.0)
        r = r - 2.0 * np.outer(f.v, f.v @ r)
        steps.append(f)
    if r[n - 1, n - 1] < 0:
        e = np.zeros(n)
        e[n - 1] = 1.0
        steps.append(FloatGH(e, 2.0))
    return steps[::-1]


def contraction_as_gh(m: np.ndarray, *, atol: float = 1e-9) -> list[FloatGH]:
    """Any M with ‖M‖₂ ≤ 1 as at most 3n GH factors with β ∈ [0, 2], application order: Proposition 1, M_{3n}^n.

    SVD M = U Σ Vᵀ: Vᵀ by ≤ n reflections (applied first), Σ = ∏_i (I − (1 − σ_i) e_i e_iᵀ) by n factors with
    β_i = 1 − σ_i ∈ [0, 1] (σ_i = 1 gives the identity and is left out), then U by ≤ n reflections.
    """
    m = np.asarray(m, dtype=np.float64)
    n = m.shape[0]
    if m.ndim != 2 or m.shape != (n, n):
        raise ValueError(f"contraction_as_gh: expected a square matrix, got shape {m.shape}")
    u, s, vt = np.linalg.svd(m)
    if s[0] > 1.0 + atol:
        raise ValueError(f"contraction_as_gh: ‖M‖₂ = {s[0]:.6g} > 1, not a contraction")
    s = np.minimum(s, 1.0)
    sigma = []
    for i in range(n):
        if 1.0 - s[i] > 0.0:
            e = np.zeros(n)
            e[i] = 1.0
            sigma.append(FloatGH(e, float(1.0 - s[i])))
    return orthogonal_as_reflections(vt, atol=atol) + sigma + orthogonal_as_reflections(u, atol=atol)
