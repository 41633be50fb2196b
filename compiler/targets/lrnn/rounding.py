"""Correctly rounded float64 values of the exact quantities that linear-RNN model files store.

A model stores floats whose exact values are algebraic: cos(πa/b) and sin(πa/b) (angle reflections, rotation code
points, roots of unity e^{2πik/m} = cos(2πk/m) + i sin(2πk/m)) and 1/√k (the entries of v = (e_i − e_j)/√2). The
compilers store, and compiler/targets/lrnn/exact.py demands, the float64 nearest to each exact value (round to nearest):

- :func:`cos_sin_pi` — (cos πa/b, sin πa/b), vectorized over integer arrays;
- :func:`inv_sqrt` — 1/√k;
- :func:`root_values` — (Re, Im) of roots of unity ζ_m^e (the diagonal layers' eigenvalues and code points).

Method (rigorous, integer arithmetic only): the angle is reduced exactly to h ∈ [0, 1/4] (θ = πh, by the symmetries
of the quadrants and cos(π/2 − θ) = sin θ); π·2^P comes from Machin's formula, and cos and sin from their Taylor
series in P-bit fixed point, with an explicit bound E on the total error (argument, truncation of every term, tail).
The result is the common rounding of the two ends of [v − E, v + E]; when they round differently the computation is
repeated at twice the precision. This terminates: by Niven's theorem the only rational values of cos and sin at
rational multiples of π are 0, ±1/2, ±1, none of them halfway between two floats, and an irrational value is not
halfway either.
"""

from __future__ import annotations

from fractions import Fraction
from functools import lru_cache
from math import gcd, nextafter, sqrt

import numpy as np

#: fixed-point precision of the first attempt (bits)
_START_BITS = 96


def _atan_inv(n: int, bits: int) -> int:
    """floor-ish(atan(1/n)·2^bits), error below (number of terms + 1) units."""
    total, k, power, n2 = 0, 0, (1 << bits) // n, n * n
    while power:
        term = power // (2 * k + 1)
        total += -term if k % 2 else term
        power //= n2
        k += 1
    return total


@lru_cache(maxsize=16)
def _pi_fixed(bits: int) -> int:
    """π·2^bits within one unit (Machin: π = 16 atan(1/5) − 4 atan(1/239), with 32 guard bits)."""
    guard = 32
    return (16 * _atan_inv(5, bits + guard) - 4 * _atan_inv(239, bits + guard)) >> guard


def _cos_sin_fixed(p: int, q: int, bits: int) -> tuple[int, int, int]:
    """(c, s, e): cos(πp/q)·2^bits and sin(πp/q)·2^bits as integers within e units, for 0 ≤ p/q ≤ 1/4."""
    x = _pi_fixed(bits) * p // q  # |x − πp/q·2^bits| < 2 units
    # t_k ≈ x^k / k! (t_0, t_1 exact; each later one within 3 units: x ≤ π/4 keeps the induction bounded)
    c, s, t, k = 1 << bits, x, x, 1
    while t:
        k += 1
        t = (t * x >> bits) // k
        if k % 2:
            s += -t if k % 4 == 3 else t
        else:
            c += -t if k % 4 == 2 else t
    # 3 units per term, a tail below 6 units after the first zero term, 2 units from the argument (|d/dx| ≤ 1)
    return c, s, 3 * k + 10


def _rounded(v: int, e: int, bits: int) -> float | None:
    """The float nearest to every real in [(v − e)/2^bits, (v + e)/2^bits], or None when they differ."""
    lo, hi = float(v - e) / 2.0**bits, float(v + e) / 2.0**bits  # int → float rounds to nearest; scaling is exact
    return lo if lo == hi else None


@lru_cache(maxsize=1 << 16)
def _cos_sin_reduced(p: int, q: int) -> tuple[float, float]:
    """Correctly rounded (cos πh, sin πh) for h = p/q ∈ [0, 1/4] in lowest terms."""
    if p == 0:
        return 1.0, 0.0
    if 4 * p == q:
        r = inv_sqrt(2)
        return r, r
    bits = _START_BITS
    while True:
        c, s, e = _cos_sin_fixed(p, q, bits)
        cr, sr = _rounded(c, e, bits), _rounded(s, e, bits)
        if cr is not None and sr is not None:
            return cr, sr
        bits *= 2


@lru_cache(maxsize=1 << 16)
def _cos_sin_pi_scalar(n: int, d: int) -> tuple[float, float]:
    """Correctly rounded (cos πn/d, sin πn/d) for 0 ≤ n < 2d."""
    quadrant = 2 * n // d  # θ ∈ [quadrant·π/2, (quadrant + 1)·π/2)
    r = 2 * n - quadrant * d  # θ − quadrant·π/2 = π·r/(2d), 0 ≤ r < d
    if 2 * r <= d:  # r/(2d) ≤ 1/4
        g = gcd(r, 2 * d)
        c, s = _cos_sin_reduced(r // g, 2 * d // g)
    else:  # cos(π/2 − φ) = sin φ
        g = gcd(d - r, 2 * d)
        s, c = _cos_sin_reduced((d - r) // g, 2 * d // g)
    for _ in range(quadrant):  # a quarter turn: (c, s) → (−s, c)
        c, s = -s, c
    return c + 0.0, s + 0.0  # + 0.0 turns −0.0 into 0.0


def cos_sin_pi(a: np.ndarray | int, b: np.ndarray | int) -> tuple[np.ndarray, np.ndarray]:
    """The floats nearest to cos(πa/b) and sin(πa/b), elementwise (integer arrays, broadcast; b ≥ 1).

    Zeros are +0.0. Each distinct reduced angle is computed once (and cached across calls).
    """
    if np.ndim(a) == 0 and np.ndim(b) == 0:  # one angle: no array round trip
        a, b = int(a), int(b)
        if b < 1:
            raise ValueError("cos_sin_pi needs denominators b ≥ 1")
        n = a % (2 * b)
        g = gcd(n, b)
        c, s = _cos_sin_pi_scalar(n // g, b // g)
        return np.float64(c), np.float64(s)
    a, b = np.broadcast_arrays(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64))
    if np.any(b < 1):
        raise ValueError("cos_sin_pi needs denominators b ≥ 1")
    num = np.mod(a, 2 * b)
    g = np.gcd(num, b)
    pairs = np.stack([(num // g).ravel(), (b // g).ravel()], axis=1)  # θ = π·num/b in lowest terms
    uniq, inv = np.unique(pairs, axis=0, return_inverse=True)
    vals = np.array([_cos_sin_pi_scalar(int(n), int(d)) for n, d in uniq], dtype=np.float64).reshape(-1, 2)
    out = vals[inv.ravel()]
    return out[:, 0].reshape(a.shape), out[:, 1].reshape(a.shape)


@lru_cache(maxsize=256)
def inv_sqrt(k: int) -> float:
    """The float nearest to 1/√k (k ≥ 1), decided exactly: d is nearest iff 1/k lies between the squares of the
    midpoints to d's neighbours."""
    if k < 1:
        raise ValueError("inv_sqrt needs k ≥ 1")
    target = Fraction(1, k)
    d = 1.0 / sqrt(k)
    for _ in range(8):
        lo = (Fraction(d) + Fraction(nextafter(d, 0.0))) / 2
        hi = (Fraction(d) + Fraction(nextafter(d, 2.0))) / 2
        if lo * lo < target < hi * hi:
            return d
        d = nextafter(d, 0.0) if target <= lo * lo else nextafter(d, 2.0)
    raise AssertionError(f"inv_sqrt({k}) did not converge")  # pragma: no cover - 1/√k is within an ulp of d


def root_values(moduli: np.ndarray, exps: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Real and imaginary parts of ζ_m^e = e^{2πie/m}, correctly rounded, elementwise (broadcast); a modulus 0
    marks a real coordinate whose value is the integer e itself (the diagonal layers' orbit coordinates)."""
    m, e = np.broadcast_arrays(np.asarray(moduli, dtype=np.int64), np.asarray(exps, dtype=np.int64))
    c, s = cos_sin_pi(2 * e, np.where(m > 0, m, 1))
    return np.where(m > 0, c, e.astype(np.float64)), np.where(m > 0, s, 0.0)


__all__ = ["cos_sin_pi", "inv_sqrt", "root_values"]
