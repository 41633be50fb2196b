"""Throughput of the NFSM table scans on this machine's CPUs, in symbol-steps per second (batch × length / time).

Headline (issue 6): the fastest CPU path at batch 64 × length 2^16 × 16 indices, per-step tables (B, T, d), must
reach 5·10^6 symbol-steps/s. Also: the keyed scan an NFSM layer runs (tables chosen by the symbol), a compiled model
end to end on words of length 10^5, and the slower paths (sequential reference, torch parallel, Triton under the
CPU interpreter) at sizes they finish in seconds. Every path's states are checked against the chunked path.

    python benchmarks/bench_table_scan.py [--quick]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

os.environ.setdefault("TRITON_INTERPRET", "1")  # the Triton path runs on the CPU interpreter here

import numpy as np  # noqa: E402
import torch  # noqa: E402

from fsa2rnn.compiler import compile_nfsm  # noqa: E402
from fsa2rnn.fsa import resolve_spec  # noqa: E402
from fsa2rnn.nn import load_model  # noqa: E402
from fsa2rnn.nn.ops.table_scan import keyed_table_scan, table_scan, triton_available  # noqa: E402

TARGET = 5e6


def _time(fn, repeat: int = 3) -> tuple[float, object]:
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="smaller headline size (for smoke tests)")
    args = ap.parse_args()
    g = torch.Generator().manual_seed(0)
    bsz, length, d = (64, 2**16, 16) if not args.quick else (16, 2**12, 16)
    tables = torch.randint(0, d, (bsz, length, d), generator=g)
    h0 = torch.randint(0, d, (bsz,), generator=g)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs")
    print(f"{'path':<44}{'B':>5}{'T':>8}{'d':>5}{'steps/s':>14}")

    def row(name, b, t, dd, seconds):
        rate = b * t / seconds
        print(f"{name:<44}{b:>5}{t:>8}{dd:>5}{rate:>14.3e}")
        return rate

    secs, ref = _time(lambda: table_scan(tables, h0, impl="chunked"))
    headline = row("chunked (numpy), per-step tables", bsz, length, d, secs)

    bank = torch.randint(0, d, (32, d), generator=g)
    keys = torch.randint(0, 32, (bsz, length), generator=g)
    secs, kref = _time(lambda: keyed_table_scan(bank, keys, h0, impl="chunked"))
    row("chunked (numpy), keyed tables (32 keys)", bsz, length, d, secs)
    secs, _ = _time(lambda: keyed_table_scan(bank, keys[:1].repeat(1, 16), h0[:1], impl="chunked"))
    row("chunked (numpy), keyed, one long sequence", 1, length * 16, d, secs)

    small_t = 2**12
    sl = slice(0, small_t)
    secs, out = _time(lambda: table_scan(tables[:, sl], h0, impl="naive"), repeat=1)
    assert torch.equal(out, ref[:, sl])
    row("naive (torch, sequential reference)", bsz, small_t, d, secs)
    secs, out = _time(lambda: table_scan(tables[:, sl], h0, impl="torch"), repeat=1)
    assert torch.equal(out, ref[:, sl])
    row("torch parallel (Hillis–Steele, CPU)", bsz, small_t, d, secs)
    if triton_available("cpu"):
        tb, tt = 2, 256
        secs, out = _time(lambda: table_scan(tables[:tb, :tt], h0[:tb], impl="triton"), repeat=1)
        assert torch.equal(out, ref[:tb, :tt])
        row("triton (CPU interpreter; GPU: gpu_table_scan.py)", tb, tt, d, secs)

    # a compiled NFSM end to end on words of length 10^5 (S5 as 4 heads of 5 points)
    a = resolve_spec("S5")
    model = load_model(compile_nfsm(a))
    ids = np.random.default_rng(0).integers(0, a.n_symbols, (8, 10**5))
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        model.to(dtype)
        secs, states = _time(lambda: model.predict_states(torch.from_numpy(ids)), repeat=1)
        ok = np.array_equal(states.numpy(), a.run(ids))
        row(f"compiled S5 NFSM, {str(dtype)[6:]}, correct={ok}", 8, 10**5, 5, secs)
        if not ok:
            return 1
    print(
        f"headline: chunked CPU path {headline:.3e} symbol-steps/s at 64 x 2^16 x 16; target {TARGET:.0e}; "
        f"ratio {headline / TARGET:.2f}" + (" (quick size)" if args.quick else "")
    )
    return 0 if headline >= TARGET or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
