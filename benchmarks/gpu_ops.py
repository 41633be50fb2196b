"""Triton kernels of fsa2rnn.nn.ops on a GPU: each kernel's time and effective GB/s against the H200's 4.8 TB/s.

One short run (a minute or two, most of it Triton compiling each variant once):

    python benchmarks/gpu_ops.py [--only diag_scan] [--json results.json]

Without a CUDA device it prints "no GPU" and exits 0. Two checks need no GPU: ``--compile-only`` compiles every
kernel variant ahead of time for the H200 (sm_90) down to a cubin, and ``--smoke`` runs the timing code on tiny
shapes under the CPU interpreter. Every timed result is first checked against the op's torch path on the same
device. Bytes counted per call are what a fused kernel must move (inputs read once, outputs written once);
GB/s = bytes / time (CUDA events, median of repeats).

Harness: ``@gpu_section("op")`` registers a timing function (it receives a :class:`Run` and reports through
``run.row``), ``@compile_section("op")`` a function that compiles that op's kernels with :func:`aot_compile` and
returns how many variants it compiled.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

H200_BANDWIDTH = 4.8e12  # bytes/s, HBM3e peak
GPU_SECTIONS: list[tuple[str, Callable[[Run], bool]]] = []
COMPILE_SECTIONS: list[tuple[str, Callable[[bool], int]]] = []


def gpu_section(name: str):
    """Register a timing section: ``fn(run) -> bool`` (False: a result did not match its reference)."""

    def register(fn):
        GPU_SECTIONS.append((name, fn))
        return fn

    return register


def compile_section(name: str):
    """Register an ahead-of-time compile section: ``fn(quick) -> number of kernel variants compiled``."""

    def register(fn):
        COMPILE_SECTIONS.append((name, fn))
        return fn

    return register


def aot_compile(
    fn, signature: dict[str, str], constexprs: dict[str, object], arch: int = 90, num_warps: int | None = None
) -> None:
    """Compile one variant of the Triton kernel ``fn`` for the CUDA ``arch`` (sm_90: H200) to a cubin, no GPU needed.
    ``signature`` maps every runtime argument to its Triton type ("*fp32", "i32", ...), ``constexprs`` every
    tl.constexpr argument to its value; ``num_warps`` as the launch passes it (None: Triton's default)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig = {**signature, **{c: "constexpr" for c in constexprs}}
    idx = {(fn.arg_names.index(c),): v for c, v in constexprs.items()}
    options = {"num_warps": num_warps} if num_warps is not None else None
    triton.compile(ASTSource(fn=fn, signature=sig, constexprs=idx), target=GPUTarget("cuda", arch, 32), options=options)


@dataclass
class Run:
    """What a timing section needs: torch, the device, repeats, smoke mode, and the rows it has printed."""

    torch: object
    device: object
    repeat: int = 5
    smoke: bool = False
    rows: list[dict] = field(default_factory=list)

    def time(self, fn: Callable[[], object]) -> float:
        """Median seconds of ``fn`` over the repeats (CUDA events; wall time on the interpreter), after one warmup."""
        torch = self.torch
        fn()
        times = []
        for _ in range(self.repeat):
            if self.device.type == "cuda":
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                fn()
                end.record()
                torch.cuda.synchronize()
                times.append(start.elapsed_time(end) / 1e3)
            else:
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
        return statistics.median(times)

    def row(self, op: str, kernel: str, shape: str, dtype: str, seconds: float, nbytes: int, **extra) -> dict:
        gbs = nbytes / seconds / 1e9
        frac = nbytes / seconds / H200_BANDWIDTH
        print(f"{op:<14}{kernel:<18}{shape:<24}{dtype:<11}{seconds * 1e3:>10.3f}{gbs:>10.1f}{frac:>11.4f}")
        rec = dict(op=op, kernel=kernel, shape=shape, dtype=dtype, seconds=seconds, bytes=nbytes, gb_per_s=gbs,
                   fraction_of_peak=frac, **extra)  # fmt: skip
        self.rows.append(rec)
        return rec


def _rel_rmse(ref, got) -> float:
    ref, got = (x.detach().cdouble() if x.is_complex() else x.detach().double() for x in (ref, got))
    return float(((ref - got).abs() ** 2).mean().sqrt() / (ref.abs() ** 2).mean().sqrt().clamp_min(1e-30))


# ----------------------------------------------------------------------------------------------------------------
# diag_scan


@gpu_section("diag_scan")
def gpu_diag_scan(run: Run) -> bool:
    """Forward (chunk totals + carry + replay) and backward (the same in reverse, with ∂L/∂a fused) kernels."""
    torch = run.torch
    from fsa2rnn.nn.ops import diag_scan

    shapes = [(1, 16384, 64), (8, 2048, 256), (16, 8192, 1024)] if not run.smoke else [(1, 40, 8), (2, 24, 70)]
    dtypes = (torch.float32, torch.bfloat16, torch.complex64)
    ok = True
    for bsz, length, d in shapes:
        for dtype in dtypes:
            g = torch.Generator(device=run.device).manual_seed(0)
            real = torch.float32 if dtype != torch.complex64 else torch.complex64
            a = (torch.rand(bsz, length, d, generator=g, device=run.device, dtype=torch.float32) * 2 - 1).to(real)
            if dtype == torch.complex64:
                a = a * torch.exp(1j * torch.rand(bsz, length, d, generator=g, device=run.device))
            a = a.to(dtype).requires_grad_()
            b = torch.randn(bsz, length, d, generator=g, device=run.device, dtype=real).to(dtype).requires_grad_()
            cot = torch.randn(bsz, length, d, generator=g, device=run.device, dtype=real).to(dtype)
            h = diag_scan(a, b, impl="triton")
            ref = diag_scan(a.detach().to(real), b.detach().to(real), impl="torch")
            ga, gb = torch.autograd.grad(h, (a, b), cot)
            ra, rb = torch.autograd.grad(diag_scan(a.to(real), b.to(real), impl="torch"), (a, b), cot.to(real))
            errs = [_rel_rmse(ref, h), _rel_rmse(ra, ga), _rel_rmse(rb, gb)]
            tol = 1e-2 if dtype == torch.bfloat16 else 1e-5
            if max(errs) > tol:
                print(f"MISMATCH diag_scan {bsz}x{length}x{d} {dtype}: rel RMSE {errs} > {tol}")
                ok = False
                continue
            shape, name = f"B={bsz} T={length} D={d}", str(dtype).removeprefix("torch.")
            elt = a.element_size()
            with torch.no_grad():
                secs = run.time(lambda: diag_scan(a, b, impl="triton"))  # noqa: B023
            run.row("diag_scan", "forward", shape, name, secs, 3 * a.numel() * elt)
            h = diag_scan(a, b, impl="triton")
            secs = run.time(lambda: torch.autograd.grad(h, (a, b), cot, retain_graph=True))  # noqa: B023
            # backward: read a, g and h; write ∂L/∂a and ∂L/∂b
            run.row("diag_scan", "backward", shape, name, secs, 5 * a.numel() * elt)
    return ok


@compile_section("diag_scan")
def compile_diag_scan(quick: bool) -> int:
    """Every variant the op launches: real/complex × forward/adjoint × float32/bfloat16/float16/float64 storage."""
    import triton.language as tl

    from fsa2rnn.nn.ops.diag_scan import triton as k

    n = 0
    stores = ("*fp32",) if quick else ("*fp32", "*bf16", "*fp16", "*fp64")
    for store in stores:
        acc, acc_ptr = (tl.float64, "*fp64") if store == "*fp64" else (tl.float32, "*fp32")
        for cplx in (False,) if quick else (False, True):
            for adjoint in (False, True):
                dims = {"T": "i32", "D": "i32", "n_c": "i32", "chunk": "i32"}
                common = {"BLOCK_D": k.BLOCK_D, "ADJOINT": adjoint, "COMPLEX": cplx, "ACC": acc}
                aot_compile(
                    k._chunk_totals,
                    {"coef": store, "inp": store, "lengths": "*i64", "p_out": acc_ptr, "c_out": acc_ptr, **dims},
                    common,
                    num_warps=k.NUM_WARPS,
                )
                sig = {"coef": store, "inp": store, "lengths": "*i64", "h_in": acc_ptr, "out": store, "hs": store,
                       "h0": store, "grad_a": store, **dims}  # fmt: skip
                aot_compile(k._replay, sig, {**common, "GRAD_A": adjoint}, num_warps=k.NUM_WARPS)
                n += 2
            aot_compile(
                k._carry,
                {"p": acc_ptr, "c": acc_ptr, "h0": store, "h_in": acc_ptr, "D": "i32", "n_c": "i32"},
                {"BLOCK_D": k.BLOCK_D, "COMPLEX": cplx, "ACC": acc},
                num_warps=k.NUM_WARPS,
            )
            n += 1
    return n


# ----------------------------------------------------------------------------------------------------------------
# delta_product


def _delta_inputs(torch, device, bsz, length, heads, d, n_h, dtype, seed=0):
    """Unit keys, β over all of [0, 2] (reflections and projections included), q, k, v, β with gradients."""
    g = torch.Generator(device=device).manual_seed(seed)
    f32 = dict(generator=g, device=device, dtype=torch.float32)
    q = torch.randn(bsz, length, heads, d, **f32)
    k = torch.nn.functional.normalize(torch.randn(bsz, length, n_h, heads, d, **f32), dim=-1)
    v = torch.randn(bsz, length, n_h, heads, d, **f32)
    beta = 2 * torch.rand(bsz, length, n_h, heads, **f32)
    return [x.to(dtype).requires_grad_() for x in (q, k, v, beta)]


def _time_delta(run: Run, impl: str, xs, cots, refs, tol: float, shape: str, name: str):
    """Check one impl against the float64 reference (o, S_T, gradients of q, k, v, β), then time forward and
    forward + backward; None when it fails, or when the Triton path does not match."""
    torch = run.torch
    from fsa2rnn.nn.ops import delta_product

    try:
        out = delta_product(*xs, impl=impl)
        grads = torch.autograd.grad(out, xs, cots)
    except Exception as e:  # fla: report and go on
        print(f"delta_product {impl} {shape} {name}: {type(e).__name__}: {e}")
        return None
    errs = [_rel_rmse(r.detach(), x.detach()) for r, x in zip(refs, (*out, *grads))]
    if max(errs) > tol:
        print(f"MISMATCH delta_product {impl} {shape} {name}: rel RMSE {[f'{e:.2e}' for e in errs]} > {tol}")
        if impl != "fla":  # fla is timed anyway (a comparison); ours must match
            return None
    with torch.no_grad():
        fwd = run.time(lambda: delta_product(*xs, impl=impl))
    io = sum(x.numel() * x.element_size() for x in (*xs, *out))  # read q, k, v, β; write o, S_T
    run.row("delta_product", f"{impl} forward", shape, name, fwd, io)
    both = run.time(lambda: torch.autograd.grad(delta_product(*xs, impl=impl), xs, cots))
    # forward + backward: the forward's bytes, then read q, k, v, β, ∂o and write their gradients
    run.row("delta_product", f"{impl} fwd+bwd", shape, name, both, 3 * io)
    return fwd, both


@gpu_section("delta_product")
def gpu_delta_product(run: Run) -> bool:
    """The fused recurrent kernels (forward; backward = checkpoint replay + reverse walk), and fla's chunk kernels
    (chunk_delta_rule for n_h = 1, chunk_gated_delta_product otherwise) at the same shapes when fla is installed."""
    torch = run.torch
    from fsa2rnn.nn.ops import delta_product

    try:
        import fla  # noqa: F401

        has_fla = run.device.type == "cuda"
    except ImportError:
        has_fla = False
        print("delta_product: flash-linear-attention is not installed; no fla comparison")
    shapes = [(1, 16384, 2, 16, 2), (8, 2048, 4, 32, 2), (8, 4096, 8, 64, 1), (4, 2048, 4, 128, 2)]
    if run.smoke:
        shapes = [(1, 9, 1, 4, 2), (2, 5, 2, 8, 1)]
    ok = True
    for bsz, length, heads, d, n_h in shapes:
        shape = f"B={bsz} T={length} H={heads} d={d} nh={n_h}"
        for dtype in (torch.float32, torch.bfloat16):
            xs = _delta_inputs(torch, run.device, bsz, length, heads, d, n_h, dtype)
            g = torch.Generator(device=run.device).manual_seed(1)
            do = torch.randn(bsz, length, heads, d, generator=g, device=run.device).to(dtype)
            ds = torch.randn(bsz, heads, d, d, generator=g, device=run.device).to(dtype)
            ref_in = [x.detach().double().requires_grad_() for x in xs]  # the same rounded inputs, in float64
            ref = delta_product(*ref_in, impl="torch")
            ref_g = torch.autograd.grad(ref, ref_in, (do.double(), ds.double()))
            tol = 1e-2 if dtype == torch.bfloat16 else 1e-5
            name = str(dtype).removeprefix("torch.")
            impls = ["triton"] + (["fla"] if has_fla and dtype == torch.bfloat16 else [])
            times = {}
            for impl in impls:
                res = _time_delta(run, impl, xs, (do, ds), (*ref, *ref_g), tol, shape, name)
                if res is None:
                    ok = ok and impl != "triton"  # fla is a comparison, not ours to fail on
                else:
                    times[impl] = res
            if "fla" in times and "triton" in times:
                (tf, tb), (ff, fb) = times["triton"], times["fla"]
                print(f"{'':<14}triton / fla time: forward {tf / ff:.2f}x, forward+backward {tb / fb:.2f}x")
    return ok


@compile_section("delta_product")
def compile_delta_product(quick: bool) -> int:
    """The forward (with and without h0, lengths and checkpoints) and backward kernels for each storage dtype at
    widths 16, 64 and 128 (quick: float32, width 16, n_h = 2)."""
    import triton.language as tl

    from fsa2rnn.nn.ops.delta_product import triton as k

    n = 0
    stores = ("*fp32",) if quick else ("*fp32", "*bf16", "*fp16", "*fp64")
    widths = ((16, 2),) if quick else ((16, 2), (64, 1), (128, 2))
    for store in stores:
        acc, acc_ptr = (tl.float64, "*fp64") if store == "*fp64" else (tl.float32, "*fp32")
        for d, n_h in widths:
            bk, bv, ct = k._blocks(d, d, n_h)
            common = {"NH": n_h, "DK": d, "DV": d, "BK": bk, "BV": bv, "CT": ct, "ACC": acc}
            dims = {"T": "i32", "H": "i32", "NC": "i32"}
            inp = {"q": store, "k": store, "v": store, "beta": store}
            for flags in (False, True):
                fwd_sig = {**inp, "h0": store, "lengths": "*i32", "o": store, "ht": store, "ckpt": acc_ptr, **dims}
                aot_compile(k._fwd, fwd_sig, {**common, "HAS_H0": flags, "HAS_LEN": flags, "SAVE": flags})
                bwd_sig = {**inp, "lengths": "*i32", "ckpt": acc_ptr, "do": store, "dht": store,
                           **{g: acc_ptr for g in ("dq", "dk", "dv", "dbeta", "dh0", "scratch")},
                           "T": "i32", "H": "i32", "B": "i32", "NC": "i32"}  # fmt: skip
                aot_compile(k._bwd, bwd_sig, {**common, "HAS_DHT": True, "HAS_LEN": flags})
                n += 2
    return n


# ----------------------------------------------------------------------------------------------------------------
# st_table_scan


@gpu_section("st_table_scan")
def gpu_st_table_scan(run: Run) -> bool:
    """The NFSM straight-through scan: the hard-table kernel, the table scan on its uint8 tables, the whole forward,
    and the backward (adjoint compose / carry / replay with the realized rows' softmax), checked against the torch
    path on the same device."""
    torch = run.torch
    from fsa2rnn.nn.ops import st_table_scan
    from fsa2rnn.nn.ops.st_table_scan import gumbel_noise
    from fsa2rnn.nn.ops.st_table_scan.triton import hard_tables
    from fsa2rnn.nn.ops.table_scan.triton import triton_table_scan

    shapes = [(1, 16384, 4, 8), (8, 2048, 32, 8), (64, 8192, 4, 16), (16, 4096, 4, 64)]  # (B, T, H, d)
    if run.smoke:
        shapes = [(1, 20, 2, 4), (2, 9, 1, 5)]
    ok = True
    for bsz, length, heads, d in shapes:
        shape = f"B={bsz} T={length} H={heads} d={d}"
        for dtype in (torch.float32, torch.bfloat16):
            g = torch.Generator(device=run.device).manual_seed(0)
            f32 = dict(generator=g, device=run.device, dtype=torch.float32)
            logits = torch.randn(bsz, length, heads, d, d, **f32).to(dtype).requires_grad_()
            gumbel = gumbel_noise(logits.shape, dtype=dtype, device=run.device)
            h0 = torch.randint(0, d, (bsz, heads), generator=g, device=run.device)
            cot = torch.randn(bsz, length, heads, d, **f32).to(dtype)
            states, idx = st_table_scan(logits, h0, gumbel=gumbel, impl="triton")
            (grad,) = torch.autograd.grad(states, logits, cot)
            ref_s, ref_i = st_table_scan(logits, h0, gumbel=gumbel, impl="torch")
            (ref_g,) = torch.autograd.grad(ref_s, logits, cot)
            err = _rel_rmse(ref_g, grad)
            tol = 1e-2 if dtype == torch.bfloat16 else 1e-5
            same = torch.equal(idx, ref_i) and torch.equal(states, ref_s)
            if not same or err > tol:
                print(f"MISMATCH st_table_scan {shape} {dtype}: forward equal {same}, gradient rel RMSE {err:.2e}")
                ok = False
                continue
            name = str(dtype).removeprefix("torch.")
            elt, n_states = logits.element_size(), bsz * length * heads * d
            big = 2 * logits.numel() * elt  # θ and g
            with torch.no_grad():
                sigma = hard_tables(logits, gumbel)
                secs = run.time(lambda: hard_tables(logits, gumbel))  # noqa: B023
                run.row("st_table_scan", "hard tables", shape, name, secs, big + n_states)  # read θ, g; write σ
                h0s = h0.reshape(-1)
                scan = lambda: triton_table_scan(sigma.view(-1, d), None, h0s, direct_shape=(bsz * heads, length))  # noqa: E731, B023
                secs = run.time(scan)
                # compose reads σ, replay reads σ's rows again, the states are written as int64
                run.row("st_table_scan", "table scan", shape, name, secs, 2 * n_states + bsz * length * heads * 8)
                secs = run.time(lambda: st_table_scan(logits, h0, gumbel=gumbel, impl="triton"))  # noqa: B023
                run.row("st_table_scan", "forward", shape, name, secs, big + n_states * elt + bsz * length * heads * 8)
            states, _ = st_table_scan(logits, h0, gumbel=gumbel, impl="triton")
            secs = run.time(lambda: torch.autograd.grad(states, logits, cot, retain_graph=True))  # noqa: B023
            # backward: read ∂states, σ and one row of θ and g per step; write the dense gradient of θ
            run.row("st_table_scan", "backward", shape, name, secs, logits.numel() * elt + n_states * (2 + 2 * elt))
    return ok


@compile_section("st_table_scan")
def compile_st_table_scan(quick: bool) -> int:
    """The hard-table kernel and the adjoint kernels for each logits dtype and d_pad, and the table scan's kernels
    on the op's uint8 per-step tables (quick: float32, d_pad 8)."""
    from fsa2rnn.nn.ops.st_table_scan import triton as k
    from fsa2rnn.nn.ops.table_scan import triton as ts

    n = 0
    stores = ("*fp32",) if quick else ("*fp32", "*bf16", "*fp16", "*fp64")
    pads = (8,) if quick else (2, 8, 16, 64, 256)
    dims = {"T": "i32", "H": "i32", "n_c": "i32", "d": "i32"}
    for store in stores:
        acc = "*fp64" if store == "*fp64" else "*fp32"
        for d_pad in pads:
            rows = max(1, min(128, 4096 // d_pad))
            for has_g in (False, True):
                sig = {"z": store, "g": store, "sigma": "*u8", "n_rows": "i32", "T": "i32", "H": "i32", "d": "i32"}
                wide = store == "*fp64"
                aot_compile(k._hard_tables, sig, {"HAS_G": has_g, "WIDE": wide, "ROWS": rows, "D_PAD": d_pad})
                sig = {"gbar": acc, "sigma": "*u8", "enter": acc, "logits": store, "g": store, "h0": "*i64",
                       "idx": "*i64", "grad": store, "inv_tau": "fp32", **dims}  # fmt: skip
                aot_compile(k._adj_replay, sig, {"HAS_G": has_g, "CHUNK": 64, "D_PAD": d_pad})
                n += 2
            sig = {"gbar": acc, "sigma": "*u8", "loc": acc, "comp": "*i32", **dims}
            aot_compile(k._adj_compose, sig, {"CHUNK": 64, "D_PAD": d_pad})
            aot_compile(k._adj_carry, {"loc": acc, "comp": "*i32", "enter": acc, "n_c": "i32", "d": "i32"},
                        {"D_PAD": d_pad})  # fmt: skip
            n += 2
    for d_pad in pads:  # the forward's table scan: direct uint8 tables
        common = {"T": "i32", "n_c": "i32", "d": "i32"}
        aot_compile(ts._compose, {"bank": "*u8", "keys": "*i64", "comp": "*i64", **common},
                    {"CHUNK": 64, "D_PAD": d_pad, "DIRECT": True})  # fmt: skip
        aot_compile(ts._replay, {"bank": "*u8", "keys": "*i64", "starts": "*i64", "out": "*i64", **common},
                    {"CHUNK": 64, "D_PAD": d_pad, "DIRECT": True, "ROWS": True})  # fmt: skip
        n += 2
    aot_compile(ts._carry, {"comp": "*i64", "h0": "*i64", "starts": "*i64", "n_c": "i32", "d": "i32"}, {})
    return n + 1


# ----------------------------------------------------------------------------------------------------------------


def compile_only(quick: bool, only: set[str] | None) -> int:
    os.environ.pop("TRITON_INTERPRET", None)  # compile real kernels, never the interpreter
    import triton

    total = 0
    for name, fn in COMPILE_SECTIONS:
        if only is None or name in only:
            n = fn(quick)
            print(f"{name}: {n} kernel variants")
            total += n
    print(f"compiled {total} kernel variants for sm_90 (H200) to cubin, triton {triton.__version__}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", help="also write the results to this file")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", help="comma-separated section names")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes on the CPU interpreter (no GPU needed)")
    ap.add_argument(
        "--compile-only", action="store_true", help="compile the kernels for sm_90 (no GPU needed; with --smoke: a few)"
    )
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    if args.compile_only:
        return compile_only(args.smoke, only)
    if args.smoke:
        os.environ["TRITON_INTERPRET"] = "1"
    elif os.environ.get("TRITON_INTERPRET") == "1":
        del os.environ["TRITON_INTERPRET"]
    import torch

    if not args.smoke and not torch.cuda.is_available():
        print("no GPU: torch.cuda.is_available() is False; nothing to measure")
        return 0
    dev = torch.device("cpu" if args.smoke else "cuda")
    name = "CPU interpreter (smoke)" if args.smoke else torch.cuda.get_device_name(dev)
    print(f"{name}, torch {torch.__version__}")
    print(f"{'op':<14}{'kernel':<18}{'shape':<24}{'dtype':<11}{'ms':>10}{'GB/s':>10}{'of 4.8TB/s':>11}")
    run = Run(torch, dev, repeat=1 if args.smoke else args.repeat, smoke=args.smoke)
    ok = True
    for sec, fn in GPU_SECTIONS:
        if only is None or sec in only:
            ok = fn(run) and ok
    if args.json:
        with open(args.json, "w") as f:
            json.dump(run.rows, f, indent=1)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
