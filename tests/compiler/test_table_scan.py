"""The four table scans (sequential, chunked CPU, torch parallel, Triton interpreter) agree exactly."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from fsa2rnn.fsa.errors import LimitExceededError
from fsa2rnn.nn.ops.table_scan import (
    chunked_table_scan,
    keyed_table_scan,
    naive_table_scan,
    table_scan,
    triton_available,
    triton_table_scan,
)

needs_triton = pytest.mark.skipif(not triton_available("cpu"), reason="triton interpreter not available")


def _brute(bank: np.ndarray, keys: np.ndarray, h0: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """Independent oracle: plain Python loops over the recurrence h_t = bank[key_t][h_{t-1}]."""
    out = np.full(keys.shape, -1, dtype=np.int64)
    for b in range(keys.shape[0]):
        h = int(h0[b])
        for t in range(int(lengths[b])):
            h = int(bank[keys[b, t], h])
            out[b, t] = h
    return out


def _sizes(**caps: int) -> dict:
    """Hypothesis strategies for a random scan problem: a seed and sizes from 1 up to each cap (d above 16 included,
    lengths per row drawn below the padded length)."""
    return {"seed": st.integers(0, 10**6), **{name: st.integers(1, cap) for name, cap in caps.items()}}


def _case(seed: int, bsz: int, length: int, d: int, n_keys: int):
    g = np.random.default_rng(seed)
    bank = g.integers(0, d, (n_keys, d))
    keys = g.integers(0, n_keys, (bsz, length))
    h0 = g.integers(0, d, bsz)
    lengths = g.integers(0, length + 1, bsz)
    return bank, keys, h0, lengths


@given(**_sizes(bsz=4, length=70, d=40, n_keys=6), chunk=st.integers(1, 16))
def test_cpu_scans_agree_with_oracle(seed, bsz, length, d, n_keys, chunk):
    bank, keys, h0, lengths = _case(seed, bsz, length, d, n_keys)
    ref = _brute(bank, keys, h0, lengths)
    tb, tk, th, tl = (torch.from_numpy(a) for a in (bank, keys, h0, lengths))
    assert np.array_equal(naive_table_scan(tb, tk, th, tl).numpy(), ref)
    assert np.array_equal(chunked_table_scan(tb, tk, th, tl, chunk=chunk).numpy(), ref)
    assert np.array_equal(chunked_table_scan(tb, tk, th, tl).numpy(), ref)
    assert np.array_equal(keyed_table_scan(tb, tk, th, tl, impl="torch").numpy(), ref)


@needs_triton
@settings(max_examples=20)
@given(**_sizes(bsz=3, length=40, d=33, n_keys=5))
def test_triton_interpreter_agrees(seed, bsz, length, d, n_keys):
    bank, keys, h0, lengths = _case(seed, bsz, length, d, n_keys)
    ref = _brute(bank, keys, h0, lengths)
    tb, tk, th, tl = (torch.from_numpy(a) for a in (bank, keys, h0, lengths))
    for chunk, rows in ((7, True), (64, False)):  # 7: lengths that are not multiples of the chunk
        assert np.array_equal(triton_table_scan(tb, tk, th, tl, chunk=chunk, replay_rows=rows).numpy(), ref)


@needs_triton
@pytest.mark.parametrize("storage", [torch.uint8, torch.int16, torch.int32])
def test_triton_narrow_storage_and_direct_tables(storage):
    g = np.random.default_rng(3)
    bsz, length, d = 3, 45, 20
    tables = g.integers(0, d, (bsz, length, d))
    h0 = g.integers(0, d, bsz)
    lengths = np.array([45, 17, 0])
    ref = _brute(tables.reshape(-1, d), np.arange(bsz * length).reshape(bsz, length), h0, lengths)
    tt = torch.from_numpy(tables).to(storage)
    out = triton_table_scan(
        tt.reshape(-1, d), None, torch.from_numpy(h0), torch.from_numpy(lengths), chunk=8, direct_shape=(bsz, length)
    )
    assert np.array_equal(out.numpy(), ref)
    assert np.array_equal(table_scan(tt, torch.from_numpy(h0), torch.from_numpy(lengths), impl="triton").numpy(), ref)


@needs_triton
def test_triton_largest_tables():
    bank, keys, h0, lengths = _case(11, 2, 20, 256, 3)
    ref = _brute(bank, keys, h0, lengths)
    out = triton_table_scan(*(torch.from_numpy(a) for a in (bank, keys, h0, lengths)), chunk=8)
    assert np.array_equal(out.numpy(), ref)
    big = torch.zeros(1, 257, dtype=torch.long)
    with pytest.raises(LimitExceededError, match="257"):
        triton_table_scan(big, torch.zeros(1, 1, dtype=torch.long), torch.zeros(1, dtype=torch.long))


@pytest.mark.parametrize("impl", ["naive", "chunked", "torch"])
def test_per_step_tables_all_paths(impl):
    g = np.random.default_rng(5)
    tables = g.integers(0, 17, (4, 300, 17))
    h0 = g.integers(0, 17, 4)
    lengths = np.array([300, 299, 1, 150])
    ref = _brute(tables.reshape(-1, 17), np.arange(1200).reshape(4, 300), h0, lengths)
    out = table_scan(torch.from_numpy(tables), torch.from_numpy(h0), torch.from_numpy(lengths), impl=impl)
    assert np.array_equal(out.numpy(), ref)


def test_long_single_sequence_chunked_matches_sequential():
    """B = 1 over 10^5 steps: the cost model chunks the time axis; the result equals the sequential recurrence."""
    bank, keys, h0, _ = _case(7, 1, 100_000, 16, 5)
    tb, tk, th = (torch.from_numpy(a) for a in (bank, keys, h0))
    fast = chunked_table_scan(tb, tk, th)
    seq = chunked_table_scan(tb, tk, th, chunk=100_000)  # one chunk: the plain recurrence
    assert torch.equal(fast, seq)
    assert np.array_equal(fast.numpy()[0, :50], _brute(bank, keys[:, :50], h0, np.array([50]))[0])


def test_unknown_impl():
    z = torch.zeros(1, 1, dtype=torch.long)
    with pytest.raises(ValueError, match="unknown table scan"):
        keyed_table_scan(torch.zeros(1, 2, dtype=torch.long), z, z[0], impl="magic")


@pytest.mark.skipif(not triton_available("cpu"), reason="triton not installed")
def test_kernels_compile_for_the_h200():
    """Ahead-of-time compilation of the GPU kernels for sm_90 down to cubin (no GPU needed), in a fresh process
    without the interpreter."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    script = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu_table_scan.py"
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    res = subprocess.run(
        [sys.executable, str(script), "--compile-only", "--smoke"], env=env, capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stderr[-2000:]
    assert "kernel variants for sm_90" in res.stdout
