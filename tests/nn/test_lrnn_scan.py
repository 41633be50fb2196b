"""Scans of H_t = A_t H_{t−1} + b_t: the parallel log-depth scan agrees with the sequential reference (eq. (1))."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fsa2rnn.nn.ops.lrnn_scan import (
    logdepth_scan_diagonal,
    logdepth_scan_lrnn,
    monomial_form,
    monomial_scan,
    naive_recurrent_diagonal,
    naive_recurrent_gh,
    naive_recurrent_lrnn,
    parallel_scan_diagonal,
    parallel_scan_lrnn,
)


def _err_ratio(ref: torch.Tensor, got: torch.Tensor) -> float:
    """Relative RMSE (flash-linear-attention's get_err_ratio)."""
    return float(((ref - got) ** 2).mean().sqrt() / (ref**2).mean().sqrt().clamp_min(1e-30))


def _tables(r: int, n: int, seed: int, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(r, n, n, generator=g, dtype=torch.float64))
    a = q * torch.rand(r, 1, n, generator=g, dtype=torch.float64)  # ‖A‖ ≤ 1
    b = torch.randn(r, n, generator=g, dtype=torch.float64)
    h0 = torch.randn(n, generator=g, dtype=torch.float64)
    return a.to(dtype), b.to(dtype), h0.to(dtype)


@pytest.mark.parametrize("bsz,length,n,segment", [(2, 63, 3, 2048), (3, 100, 5, 16), (1, 1000, 4, 128), (2, 1, 2, 8)])
def test_parallel_matches_sequential(bsz, length, n, segment):
    a, b, h0 = _tables(7, n, seed=length)
    rows = torch.randint(0, 7, (bsz, length), generator=torch.Generator().manual_seed(1))
    ref = naive_recurrent_lrnn(a, b, rows, h0)
    for chunk in (1, 4, 16):
        assert _err_ratio(ref, parallel_scan_lrnn(a, b, rows, h0, segment=segment, chunk=chunk)) < 1e-10
    assert _err_ratio(ref, logdepth_scan_lrnn(a, b, rows, h0, segment=segment)) < 1e-10


def test_parallel_matches_torch_associative_scan():
    assoc = pytest.importorskip("torch._higher_order_ops.associative_scan")
    a, b, h0 = _tables(5, 3, seed=3)
    rows = torch.randint(0, 5, (2, 50), generator=torch.Generator().manual_seed(2))
    at, bt = a[rows], b[rows]
    bt = bt.clone()
    bt[:, 0] = bt[:, 0] + (at[:, 0] @ h0)  # fold H_0 into the first step

    def combine(x, y):
        return y[0] @ x[0], (y[0] @ x[1].unsqueeze(-1)).squeeze(-1) + y[1]

    _, ref = assoc.associative_scan(combine, (at, bt), dim=1, combine_mode="generic")
    assert _err_ratio(ref, parallel_scan_lrnn(a, b, rows, h0, segment=16)) < 1e-10


def test_factor_by_factor_equals_fused_product():
    g = torch.Generator().manual_seed(0)
    r, k, n = 4, 3, 5
    v = torch.nn.functional.normalize(torch.randn(r, k, n, generator=g, dtype=torch.float64), dim=-1)
    beta = 2 * torch.rand(r, k, generator=g, dtype=torch.float64)
    a = torch.eye(n, dtype=torch.float64).repeat(r, 1, 1)
    for j in range(k):
        a = (torch.eye(n, dtype=torch.float64) - beta[:, j, None, None] * v[:, j, :, None] * v[:, j, None, :]) @ a
    b = torch.randn(r, n, generator=g, dtype=torch.float64)
    h0 = torch.randn(n, generator=g, dtype=torch.float64)
    rows = torch.randint(0, r, (2, 200), generator=g)
    assert _err_ratio(naive_recurrent_lrnn(a, b, rows, h0), naive_recurrent_gh(beta, v, b, rows, h0)) < 1e-10


@pytest.mark.parametrize("length,segment", [(100, 2048), (257, 32)])
def test_diagonal_parallel_matches_sequential(length, segment):
    g = torch.Generator().manual_seed(length)
    ang = 2 * np.pi * torch.rand(6, 3, generator=g, dtype=torch.float64)
    lam = torch.stack([ang.cos(), ang.sin()], -1) * torch.rand(6, 3, 1, generator=g, dtype=torch.float64)
    b = torch.randn(6, 3, 2, generator=g, dtype=torch.float64)
    h0 = torch.randn(3, 2, generator=g, dtype=torch.float64)
    rows = torch.randint(0, 6, (2, length), generator=g)
    ref = naive_recurrent_diagonal(lam, b, rows, h0)
    # the reference itself against complex arithmetic
    lc, bc, hc = (
        torch.view_as_complex(lam.contiguous()),
        torch.view_as_complex(b.contiguous()),
        torch.view_as_complex(h0),
    )
    h = hc.expand(2, -1)
    for t in range(length):
        h = lc[rows[:, t]] * h + bc[rows[:, t]]
    assert torch.allclose(torch.view_as_complex(ref[:, -1].contiguous()), h)
    assert _err_ratio(ref, parallel_scan_diagonal(lam, b, rows, h0, segment=segment, chunk=8)) < 1e-10
    assert _err_ratio(ref, logdepth_scan_diagonal(lam, b, rows, h0, segment=segment)) < 1e-10


def test_permutation_products_stay_exact_in_low_precision():
    # 0/1 matrices: the fused scan is exact at every dtype (integers ≤ 256 are exact in bfloat16)
    perms = torch.stack([torch.eye(5)[torch.randperm(5, generator=torch.Generator().manual_seed(s))] for s in range(4)])
    rows = torch.randint(0, 4, (2, 500), generator=torch.Generator().manual_seed(9))
    h0 = torch.arange(1, 6, dtype=torch.float64)
    ref = naive_recurrent_lrnn(perms.double(), torch.zeros(4, 5, dtype=torch.float64), rows, h0)
    for dt in (torch.float32, torch.bfloat16, torch.float16):
        for scan in (parallel_scan_lrnn, logdepth_scan_lrnn):
            got = scan(perms.to(dt), torch.zeros(4, 5, dtype=dt), rows, h0.to(dt), segment=64)
            assert torch.equal(got.double(), ref)


def _monomial_tables(r: int, n: int, seed: int, signed: bool = True) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Signed permutation matrices, resets (A = 0, B = e_q) and mixtures (some rows reset, the others permuted)."""
    g = torch.Generator().manual_seed(seed)
    a = torch.zeros(r, n, n, dtype=torch.float64)
    b = torch.zeros(r, n, dtype=torch.float64)
    for i in range(r):
        perm = torch.randperm(n, generator=g)
        sign = torch.where(torch.rand(n, generator=g) < (0.3 if signed else 0.0), -1.0, 1.0).double()
        a[i, torch.arange(n), perm] = sign
        reset = torch.rand(n, generator=g) < (0.0 if i % 3 == 0 else 0.4)  # rows of A that are zero, B(r) there
        a[i, reset] = 0
        b[i, reset] = torch.randint(0, 3, (int(reset.sum()),), generator=g).double()
    return a, b, torch.arange(1, n + 1, dtype=torch.float64)


@pytest.mark.parametrize("signed", [True, False])
@pytest.mark.parametrize("bsz,length,n,chunk", [(2, 63, 3, None), (3, 100, 5, 7), (1, 5000, 4, None), (1, 3001, 5, 1)])
def test_monomial_scan_equals_the_sequential_recurrence_bit_for_bit(bsz, length, n, chunk, signed):
    a, b, h0 = _monomial_tables(9, n, seed=length, signed=signed)
    rows = torch.randint(0, 9, (bsz, length), generator=torch.Generator().manual_seed(3))
    for dt in (torch.float64, torch.float32, torch.bfloat16, torch.float16):
        ad, bd, hd = a.to(dt), b.to(dt), h0.to(dt)
        mono = monomial_form(ad, bd)
        assert mono is not None and (mono.scale is None) == (not bool((a == -1).any()))
        ref = naive_recurrent_lrnn(ad, bd, rows, hd)
        assert torch.equal(monomial_scan(mono, rows, hd, chunk=chunk), ref)  # every bracketing is exact


def test_monomial_form_refuses_what_would_round():
    a, b, _ = _monomial_tables(4, 3, seed=0)
    assert monomial_form(a, b) is not None
    half = a.clone()
    half[0, 0, 0] = 0.5  # an entry outside {0, ±1}
    assert monomial_form(half, b) is None
    two = a.clone()
    two[1, 0] = torch.tensor([1.0, 1.0, 0.0], dtype=torch.float64)  # two nonzeros in a row
    assert monomial_form(two, b) is None
    offset = b.clone()
    offset[0, 0] = 1.0  # B ≠ 0 on a row where A is not zero (row 0 of a permutation): a counter, not exact
    assert monomial_form(a, offset) is None
    angle = torch.tensor([[[np.cos(1.0), -np.sin(1.0)], [np.sin(1.0), np.cos(1.0)]]], dtype=torch.float64)
    assert monomial_form(angle, torch.zeros(1, 2, dtype=torch.float64)) is None


def test_chunked_scans_on_long_words_and_batches():
    """Many chunks (the chunk totals are scanned recursively), against the sequential reference."""
    a, b, h0 = _tables(6, 3, seed=5)
    rows = torch.randint(0, 6, (2, 20000), generator=torch.Generator().manual_seed(4))
    assert _err_ratio(naive_recurrent_lrnn(a, b, rows, h0), parallel_scan_lrnn(a, b, rows, h0)) < 1e-10
    g = torch.Generator().manual_seed(6)
    ang = 2 * np.pi * torch.rand(5, 2, generator=g, dtype=torch.float64)
    lam = torch.stack([ang.cos(), ang.sin()], -1)
    bd = torch.zeros(5, 2, 2, dtype=torch.float64)
    hd = torch.tensor([[1.0, 0.0], [0.0, 1.0]], dtype=torch.float64)
    rows = torch.randint(0, 5, (1, 30000), generator=g)
    ref = naive_recurrent_diagonal(lam, bd, rows, hd)
    assert _err_ratio(ref, parallel_scan_diagonal(lam, bd, rows, hd)) < 1e-10


@pytest.mark.parametrize("diagonal", [False, True])
def test_chunked_scan_of_a_word_does_not_depend_on_its_batch(diagonal):
    """The chunk length depends on the word length alone: in low precision, where bracketings round differently,
    a word scanned alone and inside a batch of other words gets the same states."""
    g = torch.Generator().manual_seed(7)
    if diagonal:
        ang = 2 * np.pi * torch.rand(4, 1, generator=g, dtype=torch.float64)
        a, b, h0 = torch.stack([ang.cos(), ang.sin()], -1), torch.zeros(4, 1, 2), torch.tensor([[1.0, 0.0]])
        scan = parallel_scan_diagonal
    else:
        a, b, h0 = _tables(4, 2, seed=8)
        scan = parallel_scan_lrnn
    a, b, h0 = a.to(torch.bfloat16), b.to(torch.bfloat16), h0.to(torch.bfloat16)
    rows = torch.randint(0, 4, (37, 3000), generator=g)
    batch = scan(a, b, rows, h0)
    assert torch.equal(scan(a, b, rows[5:6], h0), batch[5:6])
    assert torch.equal(scan(a, b, rows[:3], h0), batch[:3])
