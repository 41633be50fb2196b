"""GH factors (compiler/gh.py): reflections per transposition (Figure 3), resets as β = 1 factors, exact products."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fsa2rnn.compiler.targets.lrnn import gh


@st.composite
def permutations(draw, max_n: int = 9):
    n = draw(st.integers(1, max_n))
    return np.array(draw(st.permutations(list(range(n)))))


@given(permutations())
def test_reflections_compose_to_the_permutation_matrix(p):
    n = len(p)
    factors = gh.reflections_of_permutation(p)
    # one reflection per transposition: n − (number of cycles)
    cycles = len({min(_cycle(p, i)) for i in range(n)})
    assert len(factors) == n - cycles
    want = np.zeros((n, n))
    want[p, np.arange(n)] = 1  # P e_i = e_p(i), built independently of gh.permutation_matrix
    assert np.allclose(gh.product(factors, n), want, atol=1e-12)
    assert np.array_equal(gh.integer_product(factors, n), want)
    assert np.array_equal(np.array(gh.exact_product(factors, n), dtype=float), want)
    for f in factors:
        assert f.beta == 2 and np.isclose(np.linalg.norm(f.direction(n)), 1)
        v = f.direction(n)
        assert sorted(np.round(v * np.sqrt(2)).tolist()).count(0) == n - 2  # v = (e_i − e_j)/√2


def _cycle(p, i):
    out, j = [i], int(p[i])
    while j != i:
        out.append(j)
        j = int(p[j])
    return out


@pytest.mark.parametrize("n", [1, 2, 5])
def test_zero_as_projections(n):
    fs = gh.zero_as_projections(n)
    assert len(fs) == n and all(f.beta == 1 for f in fs)
    assert np.allclose(gh.product(fs, n), 0)
    assert np.array_equal(gh.integer_product(fs, n), np.zeros((n, n)))


@pytest.mark.parametrize("m,k", [(3, 1), (5, 2), (60, 7), (60, 0)])
def test_two_angle_reflections_are_a_rotation(m, k):
    a = gh.product([gh.GHFactor("angle", 0, m), gh.GHFactor("angle", k, m)], 2)
    th = 2 * np.pi * k / m
    assert np.allclose(a, [[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]], atol=1e-12)


@given(permutations(6))
def test_every_factor_has_eigenvalue_in_unit_interval_and_norm_at_most_one(p):
    n = len(p)
    fs = gh.reflections_of_permutation(p) + gh.zero_as_projections(n) + [gh.GHFactor("negate", 0)]
    for f in fs:
        assert -1 <= 1 - f.beta <= 1
        assert np.linalg.norm(f.matrix(n), 2) <= 1 + 1e-12


def test_pack_unpack_round_trip():
    rows = [gh.reflections_of_permutation([1, 2, 0]), gh.zero_as_projections(3), []]
    packed = gh.pack(rows, 3)
    assert packed["v"].shape == (3, 3, 3) and packed["beta"].shape == (3, 3)
    back = gh.unpack(packed["fkind"], packed["fargs"])
    assert [[f for f in r if f.kind != "identity"] for r in back] == rows
    assert gh.factors_per_row(packed["fkind"]).tolist() == [2, 3, 0]
    assert np.allclose(packed["beta"][2], 0)  # padding is the identity (β = 0)


def test_unknown_kind_rejected():
    with pytest.raises(ValueError):
        gh.GHFactor("shear", 0, 1)
