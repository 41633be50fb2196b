"""The scans' planners against their documented contracts, stated here independently of their formulas, and the
scan bodies at the plan's edges (whole chunks and rests, reverse, several tiles) against float64 loops written here.

diag_scan (torch_scan.py): ``choose_chunk`` gives ``length`` or the power of two in [4, 256] nearest √(T/2) (within a
factor √2), chunks only when the documented cost model says the chunked scan is cheaper (2C + 2√(T/C) dispatches
plus the rest run step by step, plus three extra passes over T·lanes elements, against T dispatches), and the loop
wins from about 4000 lanes on; ``choose_tile`` gives the fewest tiles of at most a quarter of a 32 MiB L3 (a, b and
out), balanced."""

from __future__ import annotations

import math

import pytest
import torch

from fsa2rnn.nn.ops.delta_product import chunk as delta_chunk
from fsa2rnn.nn.ops.diag_scan import selective, torch_scan
from fsa2rnn.nn.ops.lrnn_scan import torch_scan as lrnn_scan
from fsa2rnn.nn.ops.pd_scan import torch_scan as pd_scan

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _loop(a, b, h, reverse=False):
    """h_t = a_t h_{t−1} + b_t over dim 1 in float64/complex128, written out; the states and the last one."""
    dtype = torch.complex128 if a.is_complex() or b.is_complex() else torch.float64
    a, b, h = a.to(dtype), b.to(dtype), h.to(dtype)
    out = torch.empty_like(b)
    for t in range(b.shape[1] - 1, -1, -1) if reverse else range(b.shape[1]):
        h = a[:, t] * h + b[:, t]
        out[:, t] = h
    return out, h


def _case(bsz, length, d, seed, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    a = (2 * torch.rand(bsz, length, d, generator=g, dtype=torch.float64) - 1).to(dtype)
    b = torch.randn(bsz, length, d, generator=g, dtype=torch.float64).to(dtype)
    h0 = torch.randn(bsz, d, generator=g, dtype=torch.float64).to(dtype)
    return a, b, h0


# ---------------------------------------------------------------- diag_scan: choose_chunk


def _diag_candidates(length):
    """The powers of two in [4, 256] within a factor √2 of √(T/2) clamped into [4, 256] (two at an exact tie)."""
    target = min(256.0, max(4.0, math.sqrt(length / 2)))
    return [p for p in (4, 8, 16, 32, 64, 128, 256) if abs(math.log2(p / target)) <= 0.5 + 1e-12]


def _diag_chunked_cheaper(length, lanes, c):
    """The documented cost model: the chunked scan costs 2C + 2√(T/C) dispatches, plus one per step of the rest
    (after the last whole chunk, run sequentially), plus three passes over the T·lanes elements; the loop T
    dispatches. Chunking is chosen only when strictly cheaper."""
    rest = length - (length // c) * c
    chunked = (2 * c + 2 * math.sqrt(length / c) + rest) * torch_scan._STEP_COST
    chunked += 3 * length * lanes * torch_scan._ELEM_COST
    return chunked < length * torch_scan._STEP_COST


def test_diag_choose_chunk_one_lane_every_length():
    """One lane, T = 1 … 70000: the result is ``length`` or a documented power of two; a chunk is taken exactly
    when T ≥ 4C and the cost model prefers it (with one lane: whenever T ≥ 4C)."""
    for length in range(1, 70_001):
        got = torch_scan.choose_chunk(length, 1)
        cands = _diag_candidates(length)
        if got == length:
            assert all(length < 4 * c for c in cands), (length, cands)
        else:
            assert got in cands, (length, got, cands)
            assert length >= 4 * got and _diag_chunked_cheaper(length, 1, got), (length, got)
    # very long sequences: the largest chunk, 256
    assert torch_scan.choose_chunk(10**7, 1) == 256
    assert torch_scan.choose_chunk(2 * 10**6 + 17, 1) == 256


@pytest.mark.parametrize(("length", "expected"), [(1, 1), (8, 8), (12, 12), (15, 15), (16, 4), (31, 4), (65, 8)])
def test_diag_choose_chunk_short_sequences(length, expected):
    """T < 4C: no chunking; T = 16 is the first length with chunks (C = 4); T = 65: √32.5 is nearer 8 than 4 by
    ratio (C = 8 ≤ 65/4)."""
    assert torch_scan.choose_chunk(length, 1) == expected


def test_diag_choose_chunk_follows_the_cost_model_at_the_crossover():
    """For every T in 16 … 6000 and a few long ones: at the lane counts just below and just above the model's
    crossover the plan is the model's (C below, the loop above)."""
    lengths = [*range(16, 6001), 10**4 + 3, 65_537, 10**5, 10**6 + 5]
    for length in lengths:
        c = torch_scan.choose_chunk(length, 1)
        if c == length:
            continue
        rest = length - (length // c) * c
        dispatches = 2 * c + 2 * math.sqrt(length / c) + rest
        cross = (length - dispatches) * torch_scan._STEP_COST / (3 * length * torch_scan._ELEM_COST)
        for lanes in {max(1, math.floor(cross) - 1), max(1, math.floor(cross)), math.floor(cross) + 1,
                      math.floor(cross) + 2}:  # fmt: skip
            want = c if _diag_chunked_cheaper(length, lanes, c) else length
            assert torch_scan.choose_chunk(length, lanes) == want, (length, lanes, cross)


@pytest.mark.parametrize("length", [10**5, 10**6, 3 * 10**6 + 1])
def test_diag_choose_chunk_loop_wins_from_about_4000_lanes(length):
    """The documented crossover: long sequences chunk up to about 3900 lanes, and run the loop from 4000 lanes."""
    assert torch_scan.choose_chunk(length, 3900) != length
    assert torch_scan.choose_chunk(length, 4000) == length
    assert torch_scan.choose_chunk(length, 10**6) == length
    assert torch_scan.choose_chunk(length, 1) == 256


def test_diag_choose_chunk_crossover_of_shorter_sequences():
    """At T = 1000 the extra dispatches move the crossover down a little, still 'about 4000' (3500 … 4000)."""
    assert torch_scan.choose_chunk(1000, 3500) == 16
    assert torch_scan.choose_chunk(1000, 4000) == 1000


def test_diag_choose_chunk_a_tie_keeps_the_loop():
    """T = 16 over 1000 lanes: the chunked scan's cost equals the loop's exactly; chunking must be strictly
    cheaper, the loop is kept."""
    assert not _diag_chunked_cheaper(16, 1000, 4)
    assert torch_scan.choose_chunk(16, 1000) == 16
    assert torch_scan.choose_chunk(16, 999) == 4


# ---------------------------------------------------------------- diag_scan: choose_tile

_L3_QUARTER = 32 * 2**20 // 4


def _fits(steps, lanes, itemsize):
    return steps == 1 or 3 * steps * lanes * itemsize <= _L3_QUARTER


@pytest.mark.parametrize("itemsize", [2, 4, 8, 16])
@pytest.mark.parametrize("lanes", [1, 7, 683, 2048, 4096, 10**5, 2**20, 2**22])
def test_diag_choose_tile_fewest_balanced_tiles(lanes, itemsize):
    """The tiles fit (3·T'·lanes·itemsize ≤ a quarter of 32 MiB, or T' = 1); their number is the least of any
    fitting tiling; they are balanced (T' = ⌈T/n⌉: n·T' − T < n)."""
    for length in (1, 2, 3, 100, 340, 341, 342, 683, 1000, 4097, 10**5):
        tile = torch_scan.choose_tile(length, lanes, itemsize)
        assert 1 <= tile <= length
        n = -(-length // tile)
        assert _fits(tile, lanes, itemsize), (length, tile)
        assert n * tile - length < n, (length, tile)
        assert n == 1 or not _fits(-(-length // (n - 1)), lanes, itemsize), (length, tile, n)
        if 3 * length * lanes * itemsize <= _L3_QUARTER:
            assert tile == length


def test_diag_choose_tile_at_the_budget():
    """2048 float32 lanes: 341 steps fit the 8 MiB budget (3·341·2048·4 = 8,380,416 bytes), 342 do not."""
    assert torch_scan.choose_tile(341, 2048, 4) == 341
    assert torch_scan.choose_tile(342, 2048, 4) == 171
    assert torch_scan.choose_tile(683, 2048, 4) == 228
    assert torch_scan.choose_tile(5, 2**22, 8) == 1  # one step already exceeds the budget


# ---------------------------------------------------------------- diag_scan: the scan body


def _forced_chunk(monkeypatch, chunk):
    monkeypatch.setattr(torch_scan, "choose_chunk", lambda length, lanes: chunk if length >= 2 * chunk else length)


def _spy_carry(monkeypatch):
    """Record the lengths of the recursive carry scans (the module calls scan_into by its global name)."""
    calls, real = [], torch_scan.scan_into

    def spy(a, b, h, out, *, reverse=False):
        calls.append(a.shape[1])
        return real(a, b, h, out, reverse=reverse)

    monkeypatch.setattr(torch_scan, "scan_into", spy)
    return real, calls


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("length", [9, 10, 11, 14, 15, 16, 20])
def test_diag_scan_around_two_chunks(monkeypatch, length, reverse):
    """C = 5: T = 9 is one chunk (the loop); 10 … 14 two chunks with a rest of 0 … 4 = C − 1; 15, 16, 20 three or
    four. From two chunks on the carry runs as a scan over the K − 1 chunks that pass a state on."""
    _forced_chunk(monkeypatch, 5)
    real, calls = _spy_carry(monkeypatch)
    a, b, h0 = _case(2, length, 3, seed=length)
    out = torch.empty_like(b)
    last = real(a, b, h0, out, reverse=reverse)
    ref, h = _loop(a, b, h0, reverse)
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(last, h, rtol=1e-12, atol=1e-12)
    k = length // 5
    assert calls[:1] == ([k - 1] if k >= 2 else [])


def test_diag_scan_plans_by_all_lanes(monkeypatch):
    """The chunk is planned for the tile's B·D lanes."""
    seen, real = [], torch_scan.choose_chunk
    monkeypatch.setattr(
        torch_scan, "choose_chunk", lambda length, lanes: seen.append((length, lanes)) or real(length, lanes)
    )
    a, b, h0 = _case(3, 40, 5, seed=1)
    torch_scan.scan_into(a, b, h0, torch.empty_like(b))
    assert seen[0] == (40, 15)


@pytest.mark.parametrize("reverse", [False, True])
def test_diag_scan_chunks_of_one_step(monkeypatch, reverse):
    """C = 1 is a valid plan (every chunk one step): still the scan."""
    monkeypatch.setattr(torch_scan, "choose_chunk", lambda length, lanes: 1 if length >= 2 else length)
    a, b, h0 = _case(2, 6, 3, seed=2)
    out = torch.empty_like(b)
    last = torch_scan.scan_into(a, b, h0, out, reverse=reverse)
    ref, h = _loop(a, b, h0, reverse)
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(last, h, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reverse", [False, True])
def test_diag_scan_several_tiles_real_plans(monkeypatch, reverse):
    """A tile budget of 40 steps over 203 steps (six tiles of 34 or 33, each chunked by choose_chunk itself)."""
    lanes, itemsize = 2 * 3, 8
    monkeypatch.setattr(torch_scan, "_TILE_BYTES", 3 * 40 * lanes * itemsize)
    real, calls = _spy_carry(monkeypatch)
    a, b, h0 = _case(2, 203, 3, seed=3)
    out = torch.empty_like(b)
    last = real(a, b, h0, out, reverse=reverse)
    ref, h = _loop(a, b, h0, reverse)
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(last, h, rtol=1e-12, atol=1e-12)
    assert len(calls) == 6  # one carry per tile (34 steps: C = 4, K = 8)


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize(("bsz", "d"), [(0, 3), (2, 0)])
@pytest.mark.parametrize("length", [1, 4])
def test_diag_scan_without_lanes(bsz, d, length, reverse):
    """No lanes: nothing to scan; the last state is an empty (B, D) tensor; T = 0 returns h itself."""
    a, b, h0 = torch.ones(bsz, length, d), torch.ones(bsz, length, d), torch.ones(bsz, d)
    last = torch_scan.scan_into(a, b, h0, torch.empty_like(b), reverse=reverse)
    assert last.shape == (bsz, d)
    empty = torch.ones(bsz, 0, d)
    assert torch_scan.scan_into(empty, empty, h0, empty.clone(), reverse=reverse) is h0


# ---------------------------------------------------------------- selective scan: _chunk_length

_SELECTIVE_CHUNK = 2**17  # elements (B·L·D·N) of one time chunk of the fused path (selective.CHUNK_ELEMENTS)


@pytest.mark.parametrize("lanes", [1, 3, 64, 1000, 2**16, 2**17, 2**17 + 1, 2**20])
def test_selective_chunk_holds_at_most_chunk_elements(lanes):
    """Default: the longest chunk of at most 2^17 elements (one step when a step alone is more), never past T."""
    for length in (1, 2, 5, 100, 131, 2049, 10**5):
        got = selective._chunk_length(length, lanes, None)
        assert 1 <= got <= length
        assert got == 1 or got * lanes <= _SELECTIVE_CHUNK, (length, lanes, got)
        assert got == length or (got + 1) * lanes > _SELECTIVE_CHUNK, (length, lanes, got)
    assert selective.CHUNK_ELEMENTS == _SELECTIVE_CHUNK
    assert selective._chunk_length(5, 0, None) == 5  # no lanes: one chunk


@pytest.mark.parametrize(("length", "chunk", "expected"), [(10, 3, 3), (10, 10, 10), (10, 50, 10), (10, 0, 1),
                                                          (10, -2, 1), (10, 3.7, 3), (1, 1, 1)])  # fmt: skip
def test_selective_forced_chunk(length, chunk, expected):
    """``chunk`` forces the chunk length, clamped into [1, T]."""
    assert selective._chunk_length(length, 12345, chunk) == expected


def _selective_inputs(bsz, length, d, n, seed=0):
    g = torch.Generator().manual_seed(seed)
    dt = torch.rand(bsz, length, d, generator=g, dtype=torch.float64) + 0.1
    x = torch.randn(bsz, length, d, generator=g, dtype=torch.float64)
    A = torch.rand(d, n, generator=g, dtype=torch.float64) + 0.5
    B = torch.randn(bsz, length, n, generator=g, dtype=torch.float64)
    C = torch.randn(bsz, length, n, generator=g, dtype=torch.float64)
    h0 = torch.randn(bsz, d, n, generator=g, dtype=torch.float64)
    return dt, x, A, B, C, h0


@pytest.mark.parametrize(("shape", "chunk", "expected"), [((2, 10, 3, 4), 3, [3, 3, 3, 1]),
                                                          ((2, 10, 128, 128), None, [4, 4, 2]),
                                                          ((2, 10, 3, 4), None, [10])])  # fmt: skip
def test_selective_scan_runs_the_planned_chunks(monkeypatch, shape, chunk, expected):
    """The fused path runs time chunks of the planned length (B·D·N lanes; 2·128·128 = 2^15: 4 steps), and its
    outputs are the materialized scan's."""
    seen, real = [], selective._chunk_eigs
    monkeypatch.setattr(selective, "_chunk_eigs", lambda dt_c, m, neg: seen.append(dt_c.shape[1]) or real(dt_c, m, neg))
    args = _selective_inputs(*shape)
    y, h = selective.selective_scan(*args, impl="torch", chunk=chunk)
    assert seen == expected
    y_ref, h_ref = selective.selective_scan(*args, impl="naive")
    torch.testing.assert_close(y, y_ref, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(h, h_ref, rtol=1e-10, atol=1e-10)


# ---------------------------------------------------------------- lrnn_scan: default_chunk


@pytest.mark.parametrize("state_size", [1, 2, 3, 8, 64, 1000, 2**16, 2**17 + 3])
def test_lrnn_default_chunk(state_size):
    """Words up to 64 steps: one chunk; longer: the shortest C ≥ 64 with at most 2^16 state numbers of the word
    per vectorized step ((T/C)·state_size ≤ 2^16), never past the word."""
    for length in [*range(1, 200), 1000, 4095, 4096, 4097, 10**5, 10**6 + 1]:
        got = lrnn_scan.default_chunk(length, state_size)
        if length <= 64:
            assert got == length
            continue
        assert 64 <= got <= length
        if got < length:
            assert length * state_size <= got * 2**16, (length, state_size, got)
        if got > 64:
            assert length * state_size > (got - 1) * 2**16, (length, state_size, got)


def test_lrnn_scan_plans_by_the_word_and_its_state(monkeypatch):
    """The chunk is planned from the word length and one state's size (n, or 2n numbers (re, im)), not the batch;
    the carry over K chunks is planned again (length K)."""
    seen, real = [], lrnn_scan.default_chunk
    monkeypatch.setattr(
        lrnn_scan, "default_chunk", lambda length, size: seen.append((length, size)) or real(length, size)
    )
    g = torch.Generator().manual_seed(0)
    n, rows = 3, torch.randint(0, 4, (2, 70), generator=g)
    lam, b, h0 = torch.rand(4, n, 2, generator=g) * 0.5, torch.randn(4, n, 2, generator=g), torch.randn(n, 2)
    lrnn_scan.parallel_scan_diagonal(lam, b, rows, h0)
    assert seen[0] == (70, 2 * n)
    a, b, h0 = torch.rand(4, n, n, generator=g) * 0.5, torch.randn(4, n, generator=g), torch.randn(n)
    seen.clear()
    lrnn_scan.parallel_scan_lrnn(a, b, rows, h0)
    assert seen[0] == (70, n)


# ---------------------------------------------------------------- pd_scan: the chunk of torch_pd_scan


@pytest.mark.parametrize("length", [1, 2, 3, 4, 5, 8, 9, 10, 15, 16, 17, 99, 100, 101])
def test_pd_scan_chunks_of_about_sqrt_t(monkeypatch, length):
    """C ≈ √T: the least C with C chunks of C steps covering T (C² ≥ T), so about 2√T sequential steps; the states
    are the sequential recurrence's."""
    seen, real = [], pd_scan._prefixes
    monkeypatch.setattr(pd_scan, "_prefixes", lambda i, d, b: seen.append(tuple(b.shape)) or real(i, d, b))
    g = torch.Generator().manual_seed(length)
    bsz, n = 2, 3
    idx = torch.stack([torch.stack([torch.randperm(n, generator=g) for _ in range(length)]) for _ in range(bsz)])
    diag = torch.rand(bsz, length, n, generator=g, dtype=torch.float64) * 2 - 1
    b = torch.randn(bsz, length, n, generator=g, dtype=torch.float64)
    h0 = torch.randn(bsz, n, generator=g, dtype=torch.float64)
    out = pd_scan.torch_pd_scan(idx, diag, b, h0)
    c = seen[0][1]
    assert c * c >= length and (c - 1) ** 2 < length, (length, c)
    assert seen[0][0] == bsz * -(-length // c)
    h, ref = h0, torch.empty_like(b)
    for t in range(length):  # h_t[P_t[j]] = D_t[j] h_{t−1}[j] + b_t[P_t[j]]
        h = torch.zeros_like(h).scatter(1, idx[:, t], diag[:, t] * h) + b[:, t]
        ref[:, t] = h
    torch.testing.assert_close(out, ref, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- delta_product: default_chunk


def test_delta_product_default_chunk():
    """A power of two in [16, 64] that depends on B·H·(dk + dv) alone: 64 up to 64, falling as 1/√(B·H·(dk + dv))
    (within a factor √2 of 64·√(64/x)), never rising; 16 for wide batches."""
    prev = 64
    for x in range(1, 20_000):
        got = delta_chunk.default_chunk(x, 1, 1, 0)
        assert got in (16, 32, 64) and got <= prev, (x, got)
        prev = got
        if x <= 64:
            assert got == 64, x
        target = min(64.0, max(16.0, 64 * math.sqrt(64 / x)))
        assert abs(math.log2(got / target)) <= 0.5 + 1e-12, (x, got)
    for bsz, heads, dk, dv in [(1, 1, 1, 1), (2, 3, 5, 7), (4, 2, 16, 16), (7, 1, 3, 100), (8, 8, 32, 32)]:
        x = bsz * heads * (dk + dv)
        want = delta_chunk.default_chunk(x, 1, 1, 0)
        for args in [(bsz, heads, dk, dv), (heads, bsz, dv, dk), (x, 1, 0, 1), (1, x, 1, 0)]:
            assert delta_chunk.default_chunk(*args) == want, (args, want)
    assert delta_chunk.default_chunk(0, 4, 8, 8) == 64  # no lanes: the overhead-bound end
    assert delta_chunk.default_chunk(10**6, 1, 1, 1) == 16


@pytest.mark.parametrize("diagonal", [False, True])
def test_lrnn_logdepth_default_segments_of_2048_steps(monkeypatch, diagonal):
    """The log-depth scans cut a word into segments of 2048 steps by default (memory B·S·n² per segment); the
    states are the recurrence's across the segment boundary."""
    name = "_scan_diagonal" if diagonal else "_scan_matrix"
    seen, real = [], getattr(lrnn_scan, name)
    monkeypatch.setattr(lrnn_scan, name, lambda a, b: seen.append(a.shape[1]) or real(a, b))
    g = torch.Generator().manual_seed(5)
    rows = torch.randint(0, 2, (1, 2050), generator=g)
    if diagonal:  # (re, im) in the last dimension: unit-modulus eigenvalues keep the states bounded
        theta = torch.rand(2, 2, generator=g, dtype=torch.float64)
        lam = torch.stack([theta.cos(), theta.sin()], -1)
        b, h0 = torch.randn(2, 2, 2, generator=g, dtype=torch.float64), torch.randn(2, 2, dtype=torch.float64)
        out = lrnn_scan.logdepth_scan_diagonal(lam, b, rows, h0)
        ref = lrnn_scan.parallel_scan_diagonal(lam, b, rows, h0)
    else:  # rotations: bounded states
        theta = torch.rand(2, generator=g, dtype=torch.float64)
        a = torch.stack([torch.stack([theta.cos(), -theta.sin()], -1), torch.stack([theta.sin(), theta.cos()], -1)], 1)
        b, h0 = torch.randn(2, 2, generator=g, dtype=torch.float64), torch.randn(2, dtype=torch.float64)
        out = lrnn_scan.logdepth_scan_lrnn(a, b, rows, h0)
        ref = lrnn_scan.parallel_scan_lrnn(a, b, rows, h0)
    assert seen == [2048, 2]
    torch.testing.assert_close(out, ref, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize(("n_h", "chunk", "rows"), [(3, 10, 9), (3, 2, 3), (2, 64, 64), (1, 5, 5), (3, None, 63)])
def test_delta_product_chunk_rounded_down_to_whole_tokens(monkeypatch, n_h, chunk, rows):
    """``chunk`` delta steps per chunk (default: default_chunk, 64 for a small batch), rounded down to a multiple
    of n_h, at least one token: the UT transform solves over that many rows, for ⌈T/tokens⌉ chunks; the outputs are
    the naive recurrence's."""
    from fsa2rnn.nn.ops.delta_product.naive import naive_delta_product

    seen, real = [], torch.linalg.solve_triangular
    monkeypatch.setattr(torch.linalg, "solve_triangular", lambda a, *r, **kw: seen.append(a.shape) or real(a, *r, **kw))
    g = torch.Generator().manual_seed(n_h)
    bsz, length, heads, dk, dv = 1, 11, 1, 2, 2
    q = torch.randn(bsz, length, heads, dk, generator=g, dtype=torch.float64)
    k = torch.nn.functional.normalize(
        torch.randn(bsz, length, n_h, heads, dk, generator=g, dtype=torch.float64), dim=-1
    )
    v = torch.randn(bsz, length, n_h, heads, dv, generator=g, dtype=torch.float64)
    beta = torch.rand(bsz, length, n_h, heads, generator=g, dtype=torch.float64)
    o, s = delta_chunk.chunk_delta_product(q, k, v, beta, chunk=chunk)
    assert seen[0][-1] == rows and seen[0][0] == -(-length // (rows // n_h)), seen[0]
    o_ref, s_ref = naive_delta_product(q, k, v, beta)
    torch.testing.assert_close(o, o_ref, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(s, s_ref, rtol=1e-10, atol=1e-10)
