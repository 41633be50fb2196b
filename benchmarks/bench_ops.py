"""Differentiable ops of fsa2rnn.nn.ops on this machine's CPUs: each fast torch path against its naive reference.

    python benchmarks/bench_ops.py [--quick] [--only diag_scan,dlr_kernel_conv] [--repeat N] [--clock wall|cpu]

The baseline is the naive reference (a Python loop over ``unbind``: the fair sequential baseline); the ratio is
baseline time / fast time, forward and forward+backward, printed side by side in one process. Two shapes per op:
an overhead-bound one (B = 1, T = 16384, where per-step dispatch cost dominates) and a bandwidth-bound one
(B = 8, T = 2048, D = 256), for which the memory-bound limit is printed: bytes the op must move / the copy
bandwidth measured here (a large ``Tensor.copy_``, read + write). diag_scan's fast row is ``impl="auto"`` (the C
kernel when it builds), with the torch path's row beside it.

Harness: one function per op, registered with ``@section("name")``; it times with ``bench.time`` (best of N) and
reports with ``bench.row``, which checks the optional targets. The script exits 1 when a target is missed (never
with ``--quick``, whose sizes are too small to judge).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

os.environ.setdefault("TRITON_INTERPRET", "1")  # any Triton path runs on the CPU interpreter here

import torch  # noqa: E402

#: (name, function) of every benchmark section, in the order they run.
SECTIONS: list[tuple[str, Callable[[Bench], None]]] = []


def section(name: str) -> Callable[[Callable[[Bench], None]], Callable[[Bench], None]]:
    """Register a benchmark section: ``@section("diag_scan") def bench_diag_scan(bench): ...``."""

    def register(fn: Callable[[Bench], None]) -> Callable[[Bench], None]:
        SECTIONS.append((name, fn))
        return fn

    return register


#: the clock ``best_of`` reads: wall time, or with ``--clock cpu`` this process's CPU time (on a machine shared with
#: other jobs it leaves out the time the process waits for a core, not the time it waits for memory)
CLOCK = {"wall": time.perf_counter, "cpu": time.process_time}
_clock = CLOCK["wall"]


def best_of(fn: Callable[[], object], repeat: int = 3, warmup: int = 1) -> float:
    """Smallest time of ``repeat`` calls of ``fn`` (seconds), after ``warmup`` untimed calls."""
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = _clock()
        fn()
        best = min(best, _clock() - t0)
    return best


def copy_bandwidth(nbytes: int = 2**27, repeat: int = 5) -> float:
    """Memory bandwidth of this machine in bytes/s: a ``copy_`` of ``nbytes`` reads and writes 2·nbytes."""
    src = torch.ones(nbytes // 4, dtype=torch.float32)
    dst = torch.empty_like(src)
    return 2 * nbytes / best_of(lambda: dst.copy_(src), repeat=repeat)


def grad_step(fn: Callable[..., object], inputs: Sequence[torch.Tensor], seed: int = 0) -> Callable[[], object]:
    """A closure running ``fn(*inputs)`` and its backward against fixed random cotangents (one per floating or
    complex output), returning the gradients of the inputs that require them."""
    outs = fn(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    g = torch.Generator().manual_seed(seed)
    keep = [i for i, o in enumerate(outs) if o.is_floating_point() or o.is_complex()]
    cots = [torch.randn(outs[i].shape, generator=g, dtype=outs[i].dtype) for i in keep]
    wrt = [x for x in inputs if isinstance(x, torch.Tensor) and x.requires_grad]

    def run() -> object:
        o = fn(*inputs)
        o = o if isinstance(o, tuple) else (o,)
        return torch.autograd.grad([o[i] for i in keep], wrt, cots)

    return run


def nbytes(*tensors: torch.Tensor) -> int:
    """Bytes held by the tensors (what a fused kernel must read or write once each)."""
    return sum(t.numel() * t.element_size() for t in tensors)


@dataclass
class Bench:
    """State shared by the sections: options, the measured bandwidth, the rows printed and the targets missed."""

    quick: bool = False
    repeat: int = 3
    bandwidth: float = 0.0
    rows: list[dict] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)

    def time(self, fn: Callable[[], object], repeat: int | None = None) -> float:
        return best_of(fn, repeat=self.repeat if repeat is None else repeat)

    def limit(self, bytes_moved: int) -> float:
        """Memory-bound limit in seconds: bytes moved / measured copy bandwidth."""
        return bytes_moved / self.bandwidth

    def row(
        self,
        op: str,
        shape: str,
        mode: str,
        base_s: float,
        fast_s: float,
        *,
        target: float | None = None,
        bytes_moved: int | None = None,
        limit_factor: float | None = None,
    ) -> dict:
        """Print one line: baseline and fast times, their ratio, and — with ``bytes_moved`` — the memory-bound
        limit and fast/limit. ``target``: least acceptable ratio; ``limit_factor``: most acceptable fast/limit."""
        ratio = base_s / fast_s
        lim = self.limit(bytes_moved) if bytes_moved is not None else None
        notes = []
        if target is not None:
            ok = ratio >= target
            notes.append(f"target ≥{target:g}x {'ok' if ok else 'MISSED'}")
            if not ok:
                self.misses.append(f"{op} {shape} {mode}: ratio {ratio:.1f} < {target:g}")
        if lim is not None and limit_factor is not None:
            ok = fast_s <= limit_factor * lim
            notes.append(f"≤{limit_factor:g}x limit {'ok' if ok else 'MISSED'}")
            if not ok:
                self.misses.append(f"{op} {shape} {mode}: {fast_s / lim:.2f}x the memory-bound limit > {limit_factor}")
        lim_txt = f"{lim * 1e3:>10.2f}{fast_s / lim:>8.2f}" if lim is not None else f"{'':>10}{'':>8}"
        print(
            f"{op:<16}{shape:<22}{mode:<9}{base_s * 1e3:>11.2f}{fast_s * 1e3:>10.2f}{ratio:>9.1f}x{lim_txt}  "
            + "; ".join(notes)
        )
        rec = dict(op=op, shape=shape, mode=mode, base_s=base_s, fast_s=fast_s, ratio=ratio, limit_s=lim)
        self.rows.append(rec)
        return rec


def header() -> None:
    print(
        f"{'op':<16}{'shape':<22}{'mode':<9}{'naive ms':>11}{'fast ms':>10}{'ratio':>10}{'limit ms':>10}{'x limit':>8}"
    )


# ----------------------------------------------------------------------------------------------------------------
# sections: one per op (others add theirs below, each a @section function)


@section("diag_scan")
def bench_diag_scan(bench: Bench) -> None:
    """h_t = a_t ⊙ h_{t−1} + b_t: ``impl="auto"`` (what users get: the C kernel when it compiled, else the torch
    path), judged by the targets, and the chunked torch scan (row ``diag_scan/torch``), against the unbind loop."""
    from fsa2rnn.nn.ops import diag_scan
    from fsa2rnn.nn.ops.diag_scan import cpu_kernel

    shapes = [(1, 16384, 64, 10.0, None), (8, 2048, 256, None, 2.0)]  # (B, T, D, ratio target, limit factor)
    if bench.quick:
        shapes = [(1, 1024, 16, None, None), (2, 256, 32, None, None)]
    print(f"# diag_scan impl='auto' on the CPU: {'the C kernel' if cpu_kernel.available() else 'the torch path'}")
    naive = lambda a, b: diag_scan(a, b, impl="naive")  # noqa: E731
    paths = [("diag_scan", "auto"), ("diag_scan/torch", "torch")]  # (row label, impl); targets judge the first
    for bsz, length, d, target, limit_factor in shapes:
        g = torch.Generator().manual_seed(0)
        a = (2 * torch.rand(bsz, length, d, generator=g) - 1).requires_grad_()
        b = torch.randn(bsz, length, d, generator=g).requires_grad_()
        shape = f"B={bsz} T={length} D={d}"
        bulk = bsz > 1  # the memory-bound limit is printed for the bandwidth-bound shape
        fwd_bytes = nbytes(a, b, b)  # read a, b; write h
        # forward (read a, b; write h) + backward (read a, h, ∂L/∂h; write ∂L/∂a, ∂L/∂b): 8 tensors of a's size
        both = nbytes(a) * 8
        with torch.no_grad():
            tn = bench.time(lambda x=(a, b): naive(*x), repeat=1 if length > 4096 else None)
        tn_grad = bench.time(grad_step(naive, (a, b)), repeat=1)
        for label, impl in paths:
            fast = lambda a, b, impl=impl: diag_scan(a, b, impl=impl)  # noqa: E731
            judged = impl == "auto"
            with torch.no_grad():
                tf = bench.time(lambda x=(a, b), f=fast: f(*x))
            bench.row(label, shape, "fwd", tn, tf, bytes_moved=fwd_bytes if bulk else None,
                      limit_factor=limit_factor if judged else None)  # fmt: skip
            tf = bench.time(grad_step(fast, (a, b)))
            bench.row(label, shape, "fwd+bwd", tn_grad, tf, target=target if judged else None,
                      bytes_moved=both if bulk else None, limit_factor=limit_factor if judged else None)  # fmt: skip


@section("dlr_kernel_conv")
def bench_dlr(bench: Bench) -> None:
    """DLR convolution: FFT of size 2L against the direct O(L²) Toeplitz product (H channels, N eigenvalues)."""
    from fsa2rnn.nn.ops import dlr_kernel_conv

    shapes = [
        (1, 2048, 8, 64),
        (8, 512, 64, 64),
    ]  # (B, L, H, N): the direct product is O(B·H·L²) in time and H·L² in memory
    if bench.quick:
        shapes = [(2, 256, 8, 16)]
    for bsz, length, heads, n in shapes:
        g = torch.Generator().manual_seed(0)
        theta = 2 * torch.pi * torch.rand(heads, n, generator=g)
        log_lambda = torch.complex(-0.1 * torch.rand(heads, n, generator=g), theta).requires_grad_()
        w = (torch.randn(heads, n, 2, generator=g) / n).contiguous()
        w = torch.view_as_complex(w).requires_grad_()
        u = torch.randn(bsz, length, heads, generator=g).requires_grad_()
        xs = (log_lambda, w, u)
        shape = f"B={bsz} L={length} H={heads} N={n}"
        for kernel in ("re", "prod"):
            naive = lambda *x, k=kernel: dlr_kernel_conv(*x, kernel=k, impl="naive")  # noqa: E731
            fast = lambda *x, k=kernel: dlr_kernel_conv(*x, kernel=k, impl="fft")  # noqa: E731
            with torch.no_grad():
                tn = bench.time(lambda f=naive, x=xs: f(*x), repeat=1)
                tf = bench.time(lambda f=fast, x=xs: f(*x))
            bench.row("dlr_kernel_conv", shape, f"fwd {kernel}", tn, tf)
            tn = bench.time(grad_step(naive, xs), repeat=1)
            tf = bench.time(grad_step(fast, xs))
            bench.row("dlr_kernel_conv", shape, f"f+b {kernel}", tn, tf)


@section("delta_product")
def bench_delta_product(bench: Bench) -> None:
    """DeltaProduct (n_h Householder steps per token): the chunked WY/UT torch path against the unbind loop."""
    from fsa2rnn.nn.ops import delta_product

    shapes = [(1, 16384, 2, 16, 2, 5.0), (8, 2048, 4, 32, 2, None)]  # (B, T, H, dk = dv, n_h, target)
    if bench.quick:
        shapes = [(1, 512, 2, 8, 2, None)]
    naive = lambda *x: delta_product(*x, impl="naive")  # noqa: E731
    fast = lambda *x: delta_product(*x, impl="torch")  # noqa: E731
    for bsz, length, heads, d, n_h, target in shapes:
        g = torch.Generator().manual_seed(0)
        q = torch.randn(bsz, length, heads, d, generator=g)
        k = torch.nn.functional.normalize(torch.randn(bsz, length, n_h, heads, d, generator=g), dim=-1)
        v = torch.randn(bsz, length, n_h, heads, d, generator=g)
        beta = 2 * torch.rand(bsz, length, n_h, heads, generator=g)
        xs = [x.requires_grad_() for x in (q, k, v, beta)]
        shape = f"B{bsz} T{length} H{heads} d{d} nh{n_h}"
        long = bsz * length * n_h > 8192
        with torch.no_grad():
            tn = bench.time(lambda x=xs: naive(*x), repeat=1 if long else None)
            tf = bench.time(lambda x=xs: fast(*x))
        io = nbytes(*xs) + nbytes(q) if bsz > 1 else None  # read q, k, v, β; write o (dv = dk)
        bench.row("delta_product", shape, "fwd", tn, tf, bytes_moved=io)
        tn = bench.time(grad_step(naive, xs), repeat=1 if long else None)
        tf = bench.time(grad_step(fast, xs))
        bench.row("delta_product", shape, "fwd+bwd", tn, tf, target=target, bytes_moved=io and 3 * io)


@section("st_table_scan")
def bench_st_table_scan(bench: Bench) -> None:
    """NFSM straight-through scan: exact table-scan forward and chunked adjoint-scan backward against the unbind loop
    (H heads of d indices; the bandwidth-bound shape has H·d = 256)."""
    from fsa2rnn.nn.ops import st_table_scan
    from fsa2rnn.nn.ops.st_table_scan import gumbel_noise

    shapes = [(1, 16384, 4, 8, 5.0), (8, 2048, 32, 8, None)]  # (B, T, H, d, target)
    if bench.quick:
        shapes = [(1, 1024, 4, 8, None), (2, 256, 8, 8, None)]
    for bsz, length, heads, d, target in shapes:
        g = torch.Generator().manual_seed(0)
        logits = torch.randn(bsz, length, heads, d, d, generator=g).requires_grad_()
        gumbel = gumbel_noise(logits.shape, generator=g)
        h0 = torch.randint(0, d, (bsz, heads), generator=g)
        shape = f"B={bsz} T={length} H={heads} d={d}"
        naive = lambda x: st_table_scan(x, h0, gumbel=gumbel, impl="naive")  # noqa: E731, B023
        fast = lambda x: st_table_scan(x, h0, gumbel=gumbel, impl="torch")  # noqa: E731, B023
        long = bsz * length > 4096
        with torch.no_grad():
            tn = bench.time(lambda: naive(logits), repeat=1 if long else None)  # noqa: B023
            tf = bench.time(lambda: fast(logits))  # noqa: B023
        n_states = bsz * length * heads * d
        # forward: read θ and g, write the states and the int64 indices; backward: read the states' cotangent and
        # one row of θ and g per step, write the (dense) gradient of θ
        fwd = nbytes(logits, gumbel) + n_states * 4 + bsz * length * heads * 8
        both = fwd + nbytes(logits) + 3 * n_states * 4
        bulk = bsz > 1
        bench.row("st_table_scan", shape, "fwd", tn, tf, bytes_moved=fwd if bulk else None)
        tn = bench.time(grad_step(naive, (logits,)), repeat=1)
        tf = bench.time(grad_step(fast, (logits,)))
        bench.row("st_table_scan", shape, "fwd+bwd", tn, tf, target=target, bytes_moved=both if bulk else None)


@section("pd_scan")
def bench_pd_scan(bench: Bench) -> None:
    """PD-SSM: ``pd_scan`` (P as index arrays; the Hillis–Steele scan of PD pairs) against the step loop, and the
    layer's ``pd_dict_st_scan`` (dictionary mixture in time blocks, the surrogate under checkpointing) against the
    dense straight-through recurrence (complex128 states; no targets: both are references for a future kernel)."""
    from fsa2rnn.nn.ops import pd_dict_st_scan, pd_scan

    shapes = [(1, 16384, 16), (8, 2048, 64)]
    if bench.quick:
        shapes = [(1, 512, 8), (2, 128, 16)]
    for bsz, length, n in shapes:
        g = torch.Generator().manual_seed(0)
        idx = torch.randint(0, n, (bsz, length, n), generator=g)
        diag = torch.polar(torch.rand(bsz, length, n, generator=g, dtype=torch.float64), torch.rand(bsz, length, n,
                           generator=g, dtype=torch.float64) * 6.28).requires_grad_()  # fmt: skip
        b = torch.randn(bsz, length, n, generator=g, dtype=torch.complex128).requires_grad_()
        shape = f"B={bsz} T={length} N={n}"
        naive = lambda d, bb: pd_scan(idx, d, bb, impl="naive")  # noqa: E731, B023
        fast = lambda d, bb: pd_scan(idx, d, bb, impl="torch")  # noqa: E731, B023
        long = bsz * length > 4096
        with torch.no_grad():
            tn = bench.time(lambda: naive(diag, b), repeat=1 if long else None)  # noqa: B023
            tf = bench.time(lambda: fast(diag, b))  # noqa: B023
        bench.row("pd_scan", shape, "fwd", tn, tf)
        tn = bench.time(grad_step(naive, (diag, b)), repeat=1)
        tf = bench.time(grad_step(fast, (diag, b)))
        bench.row("pd_scan", shape, "fwd+bwd", tn, tf)
    bsz, length, n, k = (2, 64, 8, 8) if bench.quick else (8, 256, 32, 8)
    g = torch.Generator().manual_seed(1)
    weights = torch.softmax(torch.randn(bsz, length, k, generator=g, dtype=torch.float64), -1).requires_grad_()
    dictionary = torch.randn(k, n, n, generator=g, dtype=torch.float64).requires_grad_()
    diag = torch.randn(bsz, length, n, generator=g, dtype=torch.complex128).requires_grad_()
    b = torch.randn(bsz, length, n, generator=g, dtype=torch.complex128).requires_grad_()
    inputs = (weights, dictionary, diag, b)
    naive = lambda *x: pd_dict_st_scan(*x, impl="naive")[0]  # noqa: E731
    fast = lambda *x: pd_dict_st_scan(*x, impl="torch")[0]  # noqa: E731
    shape = f"B={bsz} T={length} N={n} K={k}"
    bench.row("pd_dict_st_scan", shape, "fwd+bwd", bench.time(grad_step(naive, inputs), repeat=1),
              bench.time(grad_step(fast, inputs)))  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small shapes (smoke test; targets are not judged)")
    ap.add_argument("--only", help="comma-separated section names")
    ap.add_argument("--repeat", type=int, default=3, help="best of this many runs")
    ap.add_argument(
        "--threads", type=int, default=1, help="torch threads (default 1: on a shared machine more threads contend)"
    )
    ap.add_argument("--clock", choices=sorted(CLOCK), default="wall", help="wall time, or this process's CPU time")
    args = ap.parse_args()
    global _clock
    _clock = CLOCK[args.clock]
    torch.set_num_threads(args.threads)
    only = set(args.only.split(",")) if args.only else None
    if only is not None and not only <= {n for n, _ in SECTIONS}:
        print(f"unknown section(s): {', '.join(sorted(only - {n for n, _ in SECTIONS}))}", file=sys.stderr)
        return 2
    bench = Bench(quick=args.quick, repeat=args.repeat)
    bench.bandwidth = copy_bandwidth(2**24 if args.quick else 2**27)
    print(
        f"torch {torch.__version__}, {torch.get_num_threads()} threads, {os.cpu_count()} CPUs, {args.clock} clock; "
        f"copy bandwidth {bench.bandwidth / 1e9:.2f} GB/s"
    )
    header()
    for name, fn in SECTIONS:
        if only is None or name in only:
            fn(bench)
    if bench.misses and not args.quick:
        print("targets missed:\n  " + "\n  ".join(bench.misses))
        return 1
    print("all targets met" if not args.quick else "quick run: targets not judged")
    return 0


if __name__ == "__main__":
    sys.exit(main())
