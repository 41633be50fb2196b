"""The numpy scans' planners against their documented contracts, stated here independently of their formulas.

table_scan.choose_chunk: C = √(T/2) rounded down (the minimizer of the 2C + T/C dispatches), at least 1, taken only
when the documented cost model makes the chunked scan strictly cheaper than the loop (which wins when B·d is
large); every chunk length gives the same states. affine_scan.chunk_length: the whole word up to 64 steps, else the
shortest C ≥ 64 with at most 2^16 state numbers per vectorized step, the same C as the torch runtime's
(nn/ops/lrnn_scan.default_chunk), so that a word is rounded alike by both."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from fsa2rnn.nn.ops.lrnn_scan import torch_scan as lrnn_scan

# the package exports functions of the modules' names: the modules themselves
table_scan = importlib.import_module("fsa2rnn.compiler.scans.table_scan")
affine_scan = importlib.import_module("fsa2rnn.compiler.scans.affine_scan")

# ---------------------------------------------------------------- table_scan.choose_chunk


def _table_chunked_cheaper(bsz, length, d, c):
    """The docstring's model: chunked (2C + n_c)·step + B·T·(d+1)·elem against the loop's T·step + B·T·elem;
    chunking only when strictly cheaper."""
    n_c = -(-length // c)
    chunked = (2 * c + n_c) * table_scan._STEP_COST + bsz * length * (d + 1) * table_scan._ELEM_COST
    return length * table_scan._STEP_COST + bsz * length * table_scan._ELEM_COST > chunked


@pytest.mark.parametrize(("bsz", "d"), [(1, 1), (1, 2), (3, 5), (40, 10), (1000, 10), (0, 4)])
def test_table_choose_chunk(bsz, d):
    """The result is T or the C with 2C² ≤ T < 2(C+1)² (at least 1), by the cost model."""
    for length in [*range(0, 3000), 10**4, 10**5 + 1, 10**6]:
        got = table_scan.choose_chunk(bsz, length, d)
        c = max(1, math.isqrt(length // 2))
        assert 2 * c * c <= max(2, length) < 2 * (c + 1) ** 2
        assert got == (c if _table_chunked_cheaper(bsz, length, d, c) else length), (bsz, length, d, got)


def test_table_choose_chunk_crossover():
    """Few lanes and long words chunk; a batch with many lanes·states (B·d large) runs the loop; a tie keeps the
    loop."""
    assert table_scan.choose_chunk(1, 10**4, 2) == 70
    assert table_scan.choose_chunk(1, 10**5, 2) == 223
    assert table_scan.choose_chunk(1000, 10**4, 10) == 10**4
    assert table_scan.choose_chunk(10**5, 200, 2) == 200
    assert table_scan.choose_chunk(1, 3, 1) == 3  # 2C + n_c = 5 dispatches > 3


def test_table_choose_chunk_crossover_follows_the_model():
    """At the batch sizes just around the model's crossover, the plan is the model's."""
    for length in (100, 101, 999, 4096, 10**5):
        for d in (1, 3, 16):
            c = max(1, math.isqrt(length // 2))
            n_c = -(-length // c)
            saved = (length - 2 * c - n_c) * table_scan._STEP_COST
            cross = saved / (length * d * table_scan._ELEM_COST)
            for bsz in {max(0, math.floor(cross) + k) for k in (-1, 0, 1, 2)}:
                want = c if _table_chunked_cheaper(bsz, length, d, c) else length
                assert table_scan.choose_chunk(bsz, length, d) == want, (length, d, bsz, cross)


@pytest.mark.parametrize("chunk", [None, 1, 2, 3, 7, 29, 30, 31, 100])
def test_table_scan_every_chunk_same_states(chunk):
    """Every chunk length (forced, clamped into [1, T]) gives the sequential recurrence's states."""
    rng = np.random.default_rng(0 if chunk is None else chunk)
    bank, keys, h0 = rng.integers(0, 5, (4, 5)), rng.integers(0, 4, (3, 30)), rng.integers(0, 5, 3)
    h, ref = h0.copy(), np.empty((3, 30), dtype=np.int64)
    for t in range(30):
        h = bank[keys[:, t], h]
        ref[:, t] = h
    np.testing.assert_array_equal(table_scan.table_scan(bank, keys, h0, chunk), ref)


# ---------------------------------------------------------------- affine_scan.chunk_length


@pytest.mark.parametrize("state_size", [1, 2, 3, 8, 64, 1000, 2**16, 2**17 + 3])
def test_affine_chunk_length(state_size):
    """Words up to 64 steps: one chunk; longer: the shortest C ≥ 64 with (T/C)·state_size ≤ 2^16, never past the
    word; equal to the torch runtime's choice for every word."""
    for length in [*range(0, 200), 1000, 4095, 4096, 4097, 10**5, 10**6 + 1]:
        got = affine_scan.chunk_length(length, state_size)
        assert got == lrnn_scan.default_chunk(length, state_size), (length, state_size)
        if length <= 64:
            assert got == length
            continue
        assert 64 <= got <= length
        if got < length:
            assert length * state_size <= got * 2**16, (length, state_size, got)
        if got > 64:
            assert length * state_size > (got - 1) * 2**16, (length, state_size, got)


@pytest.mark.parametrize("length", [1, 64, 65, 129, 200])
def test_affine_scan_chunks_plans_by_the_word(monkeypatch, length):
    """The chunk is planned from the word length and one state's size (not the batch); the states are the
    sequential recurrence's (signed permutation matrices, integer states: exact)."""
    seen, real = [], affine_scan.chunk_length
    monkeypatch.setattr(affine_scan, "chunk_length", lambda t, s: seen.append((t, s)) or real(t, s))
    rng = np.random.default_rng(length)
    n = 3
    a = np.stack([np.eye(n)[rng.permutation(n)] * rng.choice([-1.0, 1.0], n) for _ in range(4)])
    b = rng.integers(-2, 3, (4, n)).astype(float)
    rows, h0 = rng.integers(0, 4, (2, length)), rng.integers(-2, 3, n).astype(float)
    out = affine_scan.affine_scan(a, b, rows, h0)
    assert seen[0] == (length, n)
    h, ref = np.broadcast_to(h0, (2, n)), np.empty((2, length, n))
    for t in range(length):
        h = np.einsum("bij,bj->bi", a[rows[:, t]], h) + b[rows[:, t]]
        ref[:, t] = h
    np.testing.assert_array_equal(out, ref)
