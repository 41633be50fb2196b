"""Triton table scan on a GPU: throughput in GB/s against the H200's 4.8 TB/s, and symbol-steps per second.

One short run (about a minute, most of it Triton compiling each variant once):

    python benchmarks/gpu_table_scan.py [--json results.json]

Without a CUDA device it prints "no GPU" and exits 0. Two checks need no GPU: ``--compile-only`` compiles every
kernel variant ahead of time for the H200 (sm_90) down to a cubin, and ``--smoke`` runs this script's code on tiny
shapes under the CPU interpreter. For each shape it checks the kernel's states against the torch
parallel scan and, on a slice, against the sequential reference on the CPU, then times the kernel (CUDA events,
median of repeats) for several chunk lengths and both replay variants. Bytes counted per run: the tables read by
the compose pass (B·T·d entries, plus the keys for keyed scans), the replay pass's reads (whole rows, or one entry
per step) and the int64 states written; GB/s = bytes / time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

H200_BANDWIDTH = 4.8e12  # bytes/s, HBM3e peak
SHAPES = [  # (B, T, d, storage, keyed)
    (64, 2**20, 16, "uint8", False),
    (64, 2**20, 16, "uint8", True),
    (64, 2**18, 64, "uint8", False),
    (16, 2**16, 256, "uint8", False),
    (64, 2**20, 16, "int32", False),
]
SMOKE_SHAPES = [(2, 300, 16, "uint8", False), (2, 300, 16, "uint8", True), (1, 100, 256, "int32", False)]
CHUNKS = (32, 64, 128, 256)
SLICE = (2, 4096)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU interpreter (no GPU needed)")
    ap.add_argument(
        "--compile-only", action="store_true", help="compile the kernels for sm_90 (no GPU needed; with --smoke: a few)"
    )
    args = ap.parse_args()
    if args.compile_only:
        return compile_only(quick=args.smoke)
    if args.smoke:
        os.environ["TRITON_INTERPRET"] = "1"
    elif os.environ.get("TRITON_INTERPRET") == "1":  # compile real kernels, never the interpreter
        del os.environ["TRITON_INTERPRET"]
    import torch

    if not args.smoke and not torch.cuda.is_available():
        print("no GPU: torch.cuda.is_available() is False; nothing to measure")
        return 0
    from fsa2rnn.nn.ops.table_scan.triton import HAS_TRITON

    if not HAS_TRITON:
        print("no triton: install the triton extra")
        return 1
    dev = torch.device("cpu" if args.smoke else "cuda")
    name = "CPU interpreter (smoke)" if args.smoke else torch.cuda.get_device_name(dev)
    print(f"{name}, torch {torch.__version__}")
    print(
        f"{'B':>4}{'T':>9}{'d':>5}{'store':>7}{'keyed':>7}{'chunk':>7}{'replay':>8}{'ms':>10}{'GB/s':>9}"
        f"{'of 4.8TB/s':>11}{'steps/s':>11}"
    )
    results = []
    for shape in SMOKE_SHAPES if args.smoke else SHAPES:
        rows = _measure(torch, dev, *shape, chunks=(8, 64) if args.smoke else CHUNKS, repeat=args.repeat)
        if rows is None:
            return 1
        results += rows
    best = max(results, key=lambda r: r["gb_per_s"])
    print(
        f"best: {best['gb_per_s']:.1f} GB/s = {best['fraction_of_peak']:.4f} of the H200's 4.8 TB/s "
        f"(B={best['B']} T={best['T']} d={best['d']} {best['storage']} keyed={best['keyed']} chunk={best['chunk']} "
        f"replay={'rows' if best['replay_rows'] else 'scalar'}); {best['steps_per_s']:.3e} symbol-steps/s"
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


def _measure(torch, dev, bsz, length, d, storage, keyed, *, chunks, repeat):
    from fsa2rnn.nn.ops.table_scan.naive import naive_table_scan
    from fsa2rnn.nn.ops.table_scan.torch_scan import torch_table_scan
    from fsa2rnn.nn.ops.table_scan.triton import triton_table_scan

    store = getattr(torch, storage)
    g = torch.Generator(device=dev).manual_seed(0)
    h0 = torch.randint(0, d, (bsz,), device=dev, generator=g)
    sb, st = min(SLICE[0], bsz), min(SLICE[1], length)
    if keyed:
        bank = torch.randint(0, d, (64, d), device=dev, generator=g).to(store)
        keys = torch.randint(0, 64, (bsz, length), device=dev, generator=g).to(torch.int32)
        direct = None
        table_bytes = bsz * length * (d * bank.element_size() + keys.element_size())
        ref_keys = keys.long()
    else:
        bank = torch.randint(0, d, (bsz * length, d), device=dev, generator=g).to(store)
        keys, direct = None, (bsz, length)
        table_bytes = bsz * length * d * bank.element_size()
        ref_keys = torch.arange(bsz * length, device=dev).view(bsz, length)
    elem = bank.element_size()
    sl_keys = ref_keys[:sb, :st].cpu()
    sl_ref = naive_table_scan(bank.long().cpu(), sl_keys, h0[:sb].cpu())
    ref_full = torch_table_scan(bank, ref_keys, h0) if bsz * length * d <= 2**31 else None
    out_rows = []
    for rows in (True, False):
        for chunk in chunks:
            out = triton_table_scan(bank, keys, h0, chunk=chunk, direct_shape=direct, replay_rows=rows)
            _sync(torch, dev)
            if not torch.equal(out[:sb, :st].cpu(), sl_ref) or (
                ref_full is not None and not torch.equal(out, ref_full)
            ):
                print(f"MISMATCH at B={bsz} T={length} d={d} chunk={chunk} replay_rows={rows}")
                return None
            times = []
            for _ in range(repeat):
                t0 = _tick(torch, dev)
                triton_table_scan(bank, keys, h0, chunk=chunk, direct_shape=direct, replay_rows=rows)
                times.append(_tock(torch, dev, t0))
            secs = statistics.median(times)
            total = table_bytes + bsz * length * (d * elem if rows else elem) + bsz * length * 8
            gbs, rate = total / secs / 1e9, bsz * length / secs
            frac = total / secs / H200_BANDWIDTH
            out_rows.append(
                dict(B=bsz, T=length, d=d, storage=storage, keyed=keyed, chunk=chunk, replay_rows=rows, seconds=secs,
                     bytes=total, gb_per_s=gbs, fraction_of_peak=frac, steps_per_s=rate)
            )  # fmt: skip
            print(
                f"{bsz:>4}{length:>9}{d:>5}{storage:>7}{str(keyed):>7}{chunk:>7}{'rows' if rows else 'scalar':>8}"
                f"{secs * 1e3:>10.3f}{gbs:>9.2f}{frac:>11.4f}{rate:>11.3e}"
            )
    return out_rows


def compile_only(quick: bool = False) -> int:
    """Compile every kernel variant the benchmark launches for sm_90 (H200), without a GPU (``quick``: a few)."""
    os.environ.pop("TRITON_INTERPRET", None)
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from fsa2rnn.nn.ops.table_scan import triton as kernels

    target = GPUTarget("cuda", 90, 32)
    n = 0
    for store in ("*u8",) if quick else ("*u8", "*i16", "*i32", "*i64"):
        for keys in ("*i64",) if quick else ("*i32", "*i64"):
            for d_pad in (16,) if quick else (2, 16, 64, 256):
                for direct in (False, True):
                    common = {"T": "i32", "n_c": "i32", "d": "i32"}
                    variants = [
                        (kernels._compose, {"bank": store, "keys": keys, "comp": "*i64", **common},
                         {"CHUNK": 64, "D_PAD": d_pad, "DIRECT": direct}),
                    ] + [
                        (kernels._replay, {"bank": store, "keys": keys, "starts": "*i64", "out": "*i64", **common},
                         {"CHUNK": 64, "D_PAD": d_pad, "DIRECT": direct, "ROWS": rows})
                        for rows in (True, False)
                    ]  # fmt: skip
                    for fn, sig, consts in variants:
                        sig = {**sig, **{c: "constexpr" for c in consts}}
                        idx = {(fn.arg_names.index(c),): v for c, v in consts.items()}
                        triton.compile(ASTSource(fn=fn, signature=sig, constexprs=idx), target=target)
                        n += 1
    carry = {"comp": "*i64", "h0": "*i64", "starts": "*i64", "n_c": "i32", "d": "i32"}
    triton.compile(ASTSource(fn=kernels._carry, signature=carry, constexprs={}), target=target)
    print(f"compiled {n + 1} kernel variants for sm_90 (H200) to cubin, triton {triton.__version__}")
    return 0


def _sync(torch, dev):
    if dev.type == "cuda":
        torch.cuda.synchronize()


def _tick(torch, dev):
    if dev.type == "cuda":
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        return start, end
    return time.perf_counter()


def _tock(torch, dev, t0):
    if dev.type == "cuda":
        start, end = t0
        end.record()
        torch.cuda.synchronize()
        return start.elapsed_time(end) / 1e3
    return time.perf_counter() - t0


if __name__ == "__main__":
    sys.exit(main())
