"""The exact check compares every stored float with the correctly rounded exact value it stands for.

Oracles: sympy's exact trigonometric values evaluated to 60 digits and rounded to the nearest float through exact
rational arithmetic (for compiler/rounding.py and for the floats that compiled models store), and numpy's float
spectral norm on small integer matrices (for the exact norm criterion, which separates ‖A‖₂ ≤ 1 from ‖A‖₂ ≥ √2).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
import sympy

from fsa2rnn.compiler import compile_diagonal, compile_householder
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.targets.lrnn.exact import ExactnessError as _Fail
from fsa2rnn.compiler.targets.lrnn.exact import _check_integer_norm, exact_check
from fsa2rnn.compiler.targets.lrnn.rounding import cos_sin_pi, inv_sqrt, root_values
from fsa2rnn.fsa import resolve_spec


def _nearest(x: sympy.Expr) -> float:
    """The float nearest to an exact real (60 significant digits, then exact rational rounding)."""
    v = sympy.N(x, 60)
    return 0.0 if v == 0 else float(Fraction(str(v)))


def _tampered(model: CompiledModel, name: str, fn) -> CompiledModel:
    t = {k: v.copy() for k, v in model.tensors.items()}
    t[name] = fn(t[name])
    return CompiledModel(dict(model.header), t)


# ---------------------------------------------------------------------------------------------- correct rounding
def test_cos_sin_pi_is_correctly_rounded():
    rng = np.random.default_rng(5)
    dens = [1, 2, 3, 4, 6, 8, 12, 7, 60, 97, 360, 1000, 4096, 9973]
    for b in dens + rng.integers(1, 20_000, size=30).tolist():
        a = np.concatenate([rng.integers(-3 * b, 3 * b, size=6), [0, b // 2, b, 2 * b - 1]])
        c, s = cos_sin_pi(a, b)
        for ai, ci, si in zip(a.tolist(), c.tolist(), s.tolist()):
            theta = sympy.pi * sympy.Rational(ai, b)
            assert ci == _nearest(sympy.cos(theta)), (ai, b)
            assert si == _nearest(sympy.sin(theta)), (ai, b)


def test_exact_points_and_signs():
    c, s = cos_sin_pi(np.array([0, 1, 2, 3, 1, 5, 1]), np.array([1, 2, 2, 2, 6, 6, 4]))
    assert c.tolist() == [1.0, 0.0, -1.0, 0.0, _nearest(sympy.sqrt(3) / 2), -_nearest(sympy.sqrt(3) / 2), inv_sqrt(2)]
    assert s.tolist() == [0.0, 1.0, 0.0, -1.0, 0.5, 0.5, inv_sqrt(2)]
    assert not np.any(np.signbit(c[c == 0])) and not np.any(np.signbit(s[s == 0]))  # zeros are +0.0


@pytest.mark.parametrize("k", [1, 2, 3, 5, 7, 10, 99, 12345])
def test_inv_sqrt_is_correctly_rounded(k):
    assert inv_sqrt(k) == _nearest(1 / sympy.sqrt(k))


def test_root_values():
    re, im = root_values(np.array([5, 5, 0, 1]), np.array([2, -2, 7, 4]))
    z = sympy.exp(2 * sympy.pi * sympy.I * sympy.Rational(2, 5))
    assert re[0] == re[1] == _nearest(sympy.re(z)) and im[0] == -im[1] == _nearest(sympy.im(z))
    assert (re[2], im[2]) == (7.0, 0.0) and (re[3], im[3]) == (1.0, 0.0)


def test_compiled_floats_are_the_rounded_exact_values():
    """Independent of the compiler: the stored code points of a rotation and the eigenvalues of a diagonal layer
    are the sympy values rounded to nearest."""
    m = compile_householder(resolve_spec("Z7"))
    codes = m.tensors["L0.codes"]
    for k in range(7):
        theta = 2 * sympy.pi * k / 7
        assert codes[k].tolist() == [_nearest(sympy.cos(theta)), _nearest(sympy.sin(theta))]
    d = compile_diagonal(resolve_spec("Z7"))
    (mod,) = d.tensors["L0.moduli"].tolist()
    for row, (k,) in enumerate(d.tensors["L0.exponents"].tolist()):
        theta = 2 * sympy.pi * sympy.Rational(k, mod)
        assert d.tensors["L0.lam_re"][row, 0] == _nearest(sympy.cos(theta))
        assert d.tensors["L0.lam_im"][row, 0] == _nearest(sympy.sin(theta))


# ---------------------------------------------------------------------------------------------- the norm test
def test_integer_norm_criterion_against_float_norm():
    rng = np.random.default_rng(0)
    mats = rng.integers(-1, 2, size=(4000, 3, 3)) * (rng.random((4000, 3, 3)) < 0.4)
    mats[:50] = np.eye(3, dtype=np.int64)[rng.permutation(3)] * rng.choice([-1, 1], size=(50, 1, 3))
    for a in mats:
        norm = np.linalg.norm(a.astype(float), 2)
        assert norm <= 1 + 1e-12 or norm >= np.sqrt(2) - 1e-12  # integer matrices: the gap the criterion uses
        try:
            _check_integer_norm(0, a[None])
            passed = True
        except _Fail:
            passed = False
        assert passed == (norm <= 1 + 1e-12)


# ---------------------------------------------------------------------------------------------- regressions
def test_diagonal_eigenvalue_off_the_unit_circle_fails():
    a = resolve_spec("Z5")
    m = compile_diagonal(a)
    assert exact_check(m, a)["ok"]
    for part in ("L0.lam_re", "L0.lam_im"):
        res = exact_check(_tampered(m, part, lambda x: x * (1 + 5e-10)), a)  # |λ| = 1 + 5·10⁻¹⁰
        assert not res["ok"] and "eigenvalues" in res["failure"]
    # a real ±1 layer (parity) and a cascade with resets and orbit coordinates (flip-flop)
    for spec in ("parity", "flipflop"):
        b = resolve_spec(spec)
        mb = compile_diagonal(b)
        assert exact_check(mb, b)["ok"]
        res = exact_check(_tampered(mb, "L0.lam_re", lambda x: np.where(x != 0, x * (1 + 5e-10), x)), b)
        assert not res["ok"] and "eigenvalues" in res["failure"]
        for name in ("L0.B_re", "L0.codes_re"):
            assert not exact_check(_tampered(mb, name, lambda x: x + 5e-10), b)["ok"], (spec, name)


def test_reflection_vector_perturbed_fails():
    a = resolve_spec("S5:swaps")
    m = compile_householder(a)
    assert exact_check(m, a)["ok"]
    fkind = m.tensors["L0.fkind"]
    r, j = np.argwhere(fkind == 1)[0]  # a swap factor: v = (e_i − e_j)/√2
    i = int(np.flatnonzero(m.tensors["L0.v"][r, j])[0])

    def nudge(x, r=r, j=j, i=i):
        x[r, j, i] += 5e-10
        return x

    res = exact_check(_tampered(m, "L0.v", nudge), a)
    assert not res["ok"] and "v differs" in res["failure"]


def test_angle_layer_floats_are_checked_to_the_last_bit():
    a = resolve_spec("Z60")
    m = compile_householder(a)
    assert m.header["layers"][0]["exact"] == "angle" and exact_check(m, a)["ok"]

    def ulp(x):
        return np.nextafter(x, 2.0)

    for name in ("L0.v", "L0.A", "L0.codes", "L0.h0"):
        res = exact_check(_tampered(m, name, ulp), a)
        assert not res["ok"], name
    # reflections2 (angles in units of π/2m) as well
    m2 = compile_householder(resolve_spec("Z5"), construction="reflections2")
    assert exact_check(m2, resolve_spec("Z5"))["ok"]
    assert not exact_check(_tampered(m2, "L1.v", lambda x: x + 5e-10), resolve_spec("Z5"))["ok"]
