"""Proposition 1 (negative-eigenvalues paper) as code: orthogonal matrices by ≤ n reflections, contractions by ≤ 3n
GH factors with β ∈ [0, 2] (compiler/gh.py), checked by reconstruction in float64 and by the determinant's sign."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ortho_group

from fsa2rnn.compiler.targets.lrnn import gh


def _check_factors(factors, n, beta_max):
    for f in factors:
        assert f.v.shape == (n,)
        assert abs(np.linalg.norm(f.v) - 1.0) < 1e-12
        assert 0.0 <= f.beta <= beta_max
        # each factor has the special eigenvalue 1 − β ∈ [−1, 1] and norm ≤ 1
        assert np.linalg.norm(f.matrix(), 2) <= 1.0 + 1e-12


def _random_orthogonal(rng, n):
    return ortho_group.rvs(n, random_state=int(rng.integers(2**31))) if n > 1 else np.array([[rng.choice([-1.0, 1.0])]])


def test_orthogonal_matrices_by_at_most_n_reflections():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(1, 13))
        q = _random_orthogonal(rng, n)
        fs = gh.orthogonal_as_reflections(q)
        assert len(fs) <= n
        _check_factors(fs, n, 2.0)
        assert all(f.beta == 2.0 for f in fs)
        assert np.abs(gh.float_product(fs, n) - q).max() <= 1e-10
        # a product of k reflections has determinant (−1)^k: an independent check of the count's parity
        assert (-1) ** len(fs) == np.sign(np.linalg.det(q))


def test_contractions_by_at_most_3n_gh_factors():
    rng = np.random.default_rng(1)
    for i in range(200):
        n = int(rng.integers(1, 13))
        m = rng.normal(size=(n, n))
        # spectral norms spread over (0, 1], some exactly 1, and some singular matrices
        m *= rng.uniform(0.05, 1.0) / np.linalg.norm(m, 2) if i % 4 else 1.0 / np.linalg.norm(m, 2)
        if i % 7 == 0 and n > 1:
            m[:, 0] = 0.0
        fs = gh.contraction_as_gh(m)
        assert len(fs) <= 3 * n
        _check_factors(fs, n, 2.0)
        assert np.abs(gh.float_product(fs, n) - m).max() <= 1e-10


def test_permutations_need_at_most_n_minus_one_swaps():
    rng = np.random.default_rng(2)
    for _ in range(100):
        n = int(rng.integers(1, 13))
        p = rng.permutation(n)
        fs = gh.reflections_of_permutation(p)
        assert len(fs) <= max(n - 1, 0)
        want = np.zeros((n, n), dtype=np.int64)
        want[p, np.arange(n)] = 1
        assert np.array_equal(gh.integer_product(fs, n), want)


def test_float_product_matches_factor_matrices():
    rng = np.random.default_rng(3)
    fs = [gh.FloatGH(v / np.linalg.norm(v), float(b)) for v, b in zip(rng.normal(size=(5, 4)), rng.uniform(0, 2, 5))]
    want = np.eye(4)
    for f in fs:
        want = f.matrix() @ want
    assert np.allclose(gh.float_product(fs, 4), want, atol=1e-14)


@pytest.mark.parametrize(
    "fn, m, match",
    [
        (gh.orthogonal_as_reflections, np.array([[1.0, 1.0], [0.0, 1.0]]), "not orthogonal"),
        (gh.contraction_as_gh, 2 * np.eye(3), "not a contraction"),
        (gh.contraction_as_gh, np.ones((2, 3)), "square"),
    ],
)
def test_refusals(fn, m, match):
    with pytest.raises(ValueError, match=match):
        fn(m)
