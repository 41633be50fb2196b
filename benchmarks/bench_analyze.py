"""Monoid analysis and the PD-SSM executor against their baselines, side by side in one run, peak memory beside
every time (docs/monoid.md, "Performance").

1. ``fsa2rnn.fsa.analyze`` (what ``analyze --json`` prints; in process, imports done) against libsemigroups'
   FroidurePin (the size) plus Konieczny (D, L, R, H classes), the identity adjoined, on the random automata
   ``np.random.default_rng(seed).integers(0, n, (k, n))`` of :data:`AUTOMATA` (seeds listed per size class; the
   largest maximal subgroup's order is printed). Target: ratio ≤ 3 from 10^5 elements. The counts are checked
   against libsemigroups' in the same run.
2. The whole ``fsa2rnn analyze --json`` command (a fresh process: Python, imports, analysis) on the 10^4-element
   automata, and ``show parity`` / ``analyze parity``: under 1 s wall (CPU time beside it: wall ≫ CPU means the
   machine was busy).
3. ``green_classes`` of T_7, T_8, T_9 against Konieczny (medians of 3): ≤ 1×.
4. The PD-SSM executors (numpy, and the torch module on CPU) against the NFSM executors, on S3 and S5, batches
   (1, 10^6) and (64, 10^4): ≤ 2×. For information: ``fsa2rnn run`` on one 10^6-symbol word of S3 per target.

Peak memory: each timed call is run once more in a forked child, whose peak RSS beyond the fork is printed
(``resource.getrusage``); a command's is its process's own peak (``os.wait4``).

    python benchmarks/bench_analyze.py            # everything (several minutes on two busy cores)
    python benchmarks/bench_analyze.py --quick    # one automaton per size class, T_7..T_8, S3 only
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from fsa2rnn.fsa import Automaton, analyze, green_classes
from fsa2rnn.fsa.monoid import full_transformation_generators

#: (n states, k symbols, seeds) per size class of the monoid: ~10^4 elements (the whole command), 10^5–3·10^5
#: (enumerated), 3·10^5–2·10^6 (from the D-classes). Seeds in increasing order, all those of sizes.py's scan that
#: fall in the class for the first listed (n, k), a few of other shapes.
AUTOMATA: dict[str, list[tuple[int, int, int]]] = {
    "10^4": [(9, 3, 13), (12, 3, 10), (11, 2, 17), (12, 2, 27), (9, 3, 9), (10, 2, 17)],
    "10^5": [(8, 3, 19), (8, 3, 21), (9, 3, 15), (10, 2, 12), (10, 3, 1), (12, 3, 0), (12, 3, 1), (9, 3, 24)],
    "10^6": [(9, 3, 10), (11, 2, 1), (12, 2, 4), (10, 3, 11), (12, 2, 8), (10, 3, 12), (10, 3, 7), (12, 3, 3),
             (10, 3, 15), (12, 3, 4)],
}  # fmt: skip
QUICK = {"10^4": [(9, 3, 13)], "10^5": [(8, 3, 19)], "10^6": [(12, 2, 4)]}
ANALYZE_RATIO, COMMAND_S, KONIECZNY_RATIO, EXECUTOR_RATIO = 3.0, 1.0, 1.0, 2.0
MIB = 1 << 20


def automaton(n: int, k: int, seed: int) -> Automaton:
    gens = np.random.default_rng(seed).integers(0, n, (k, n))
    return Automaton.from_spec({"states": n, "symbols": [f"x{i}" for i in range(k)],
                                "transitions": {f"x{i}": g.tolist() for i, g in enumerate(gens)}})  # fmt: skip


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def peak_mib(fn: Callable[[], Any]) -> float:
    """Peak RSS beyond its start (MiB) of ``fn`` run in a forked child."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: run, report, exit without cleanup
        os.close(read)
        with open("/proc/self/statm") as f:
            base = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
        fn()
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        os.write(write, pickle.dumps(max(0, peak - base) / MIB))
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        data = f.read()
    os.waitpid(pid, 0)
    return pickle.loads(data) if data else float("nan")


def _libsemigroups(gens: np.ndarray) -> Callable[[], dict[str, int]] | None:
    try:
        import libsemigroups_pybind11 as ls
    except ImportError:  # pragma: no cover - the dev extra installs it
        return None
    n = gens.shape[1]
    elts = [ls.Transf([int(v) for v in g]) for g in gens] + [ls.Transf(list(range(n)))]

    def run() -> dict[str, int]:
        guard = ls.ReportGuard(False)  # noqa: F841 - silences libsemigroups while alive
        S = ls.FroidurePin(elts)
        S.run()
        K = ls.Konieczny(elts)
        return {"size": S.size(), "d_classes": K.number_of_D_classes(), "l_classes": K.number_of_L_classes(),
                "r_classes": K.number_of_R_classes(), "h_classes": K.number_of_H_classes()}  # fmt: skip

    return run


def bench_analysis(classes: dict[str, list[tuple[int, int, int]]]) -> list[bool]:
    print("1. analyze (in process, imports done) against libsemigroups FroidurePin + Konieczny, identity adjoined")
    for module in ("scipy.sparse.csgraph", "sympy.combinatorics"):  # imported inside functions on large inputs
        __import__(module)
    analyze(automaton(6, 2, 0))
    print(f"   {'automaton':<12} {'size':>10} {'D':>6} {'max H':>5}  {'ours':>14}  {'libsemigroups':>14}  ratio")
    verdicts = []
    for label, specs in classes.items():
        for n, k, seed in specs:
            a = automaton(n, k, seed)
            theirs = _libsemigroups(np.asarray(a.transitions))
            t_ours, report = timed(lambda a=a: analyze(a))
            m_ours = peak_mib(lambda a=a: analyze(a))
            m = report["monoid"]
            largest = max(h["order"] for h in m["subgroups"])
            line = f"   {n},{k},{seed:<7} {m['size']:>10,} {m['d_classes']:>6} {largest:>5}"
            line += f"  {t_ours:6.2f} s {m_ours:4.0f} MiB"
            if theirs is not None:
                t_ls, counts = timed(theirs)
                m_ls = peak_mib(theirs)
                assert all(counts[key] == m[key] for key in counts), f"{n},{k},{seed}: {counts} against {m}"
                ratio = t_ours / t_ls
                ok = label == "10^4" or ratio <= ANALYZE_RATIO
                verdicts.append(ok)
                line += f"  {t_ls:6.2f} s {m_ls:4.0f} MiB  {ratio:4.1f}x" + ("" if label == "10^4" else f" {_v(ok)}")
            print(line, flush=True)
    print(f"   target (from 10^5 elements): ratio ≤ {ANALYZE_RATIO:g}; counts equal to libsemigroups' (checked)")
    return verdicts


#: Runs the CLI and records its process's peak RSS (VmHWM, which exec resets; ru_maxrss would count the parent's).
_CLI = """import atexit, os, runpy, sys
def _peak():
    with open("/proc/self/status") as f:
        kib = next(int(line.split()[1]) for line in f if line.startswith("VmHWM"))
    with open(os.environ["PEAK_FILE"], "w") as f:
        f.write(str(kib))
atexit.register(_peak)
sys.argv = ["fsa2rnn", *sys.argv[1:]]
runpy.run_module("fsa2rnn.cli", run_name="__main__")
"""


def _command(args: list[str], stdin: Any = None) -> tuple[float, float, float, str]:
    """(wall s, CPU s, peak MiB, stdout) of one `fsa2rnn …` process."""
    with tempfile.NamedTemporaryFile() as peak_file:
        env = {**os.environ, "PEAK_FILE": peak_file.name}
        t = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-c", _CLI, *args], stdin=stdin, stdout=subprocess.PIPE, env=env)
        out = proc.stdout.read().decode() if proc.stdout else ""
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        assert os.waitstatus_to_exitcode(status) == 0, args
        return wall, usage.ru_utime + usage.ru_stime, int(Path(peak_file.name).read_text()) / 1024, out


def bench_commands(specs: list[tuple[int, int, int]]) -> list[bool]:
    print("2. whole commands (fresh process, imports included)")
    verdicts = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(["show", "parity"], "show parity"), (["analyze", "parity", "--json"], "analyze parity")]
        for n, k, seed in specs:
            path = Path(tmp) / f"a{n}_{k}_{seed}.json"
            automaton(n, k, seed).save(path)
            cases.append((["analyze", str(path), "--json"], f"analyze {n},{k},{seed}"))
        _command(["show", "parity"])  # warms the bytecode cache
        for args, label in cases:
            wall, cpu, peak, out = _command(args)
            size = json.loads(out)["monoid"]["size"] if args[0] == "analyze" else None
            ok = wall < COMMAND_S
            verdicts.append(ok)
            what = f" ({size:,} elements)" if size and size > 10 else ""
            print(f"   {label + what:<40} wall {wall:5.2f} s  CPU {cpu:5.2f} s  peak {peak:4.0f} MiB  "
                  f"target < {COMMAND_S:g} s: {_v(ok)}", flush=True)  # fmt: skip
    return verdicts


def bench_full_transformations(ns: list[int]) -> list[bool]:
    print("3. green_classes of T_n against Konieczny, medians of 3")
    verdicts = []
    for n in ns:
        gens = full_transformation_generators(n)
        ls_run = _konieczny(gens)
        ours, theirs = [], []
        for _ in range(3):
            ours.append(timed(lambda gens=gens: green_classes(gens).size)[0])
            if ls_run is not None:
                theirs.append(timed(ls_run)[0])
        mine = float(np.median(ours))
        line = f"   T_{n}: ours {mine * 1e3:8.2f} ms {peak_mib(lambda gens=gens: green_classes(gens).size):4.0f} MiB"
        if ls_run is not None:
            k = float(np.median(theirs))
            ok = mine <= KONIECZNY_RATIO * k
            verdicts.append(ok)
            line += f"  Konieczny {k * 1e3:8.2f} ms {peak_mib(ls_run):4.0f} MiB  ratio {mine / k:5.3f}x  {_v(ok)}"
        print(line, flush=True)
    return verdicts


def _konieczny(gens: np.ndarray) -> Callable[[], int] | None:
    try:
        import libsemigroups_pybind11 as ls
    except ImportError:  # pragma: no cover
        return None
    elts = [ls.Transf([int(v) for v in g]) for g in gens] + [ls.Transf(list(range(gens.shape[1])))]

    def run() -> int:
        guard = ls.ReportGuard(False)  # noqa: F841
        K = ls.Konieczny(elts)
        return K.number_of_D_classes() + K.number_of_L_classes() + K.number_of_R_classes() + K.number_of_H_classes()

    return run


def bench_executors(specs: list[str]) -> list[bool]:
    import torch

    from fsa2rnn.compiler import compile_nfsm, compile_pdssm, load_executor
    from fsa2rnn.fsa import resolve_spec
    from fsa2rnn.nn import load_model

    torch.set_num_threads(1)
    print("4. PD-SSM executors against the NFSM executors (in process, one thread)")
    verdicts = []
    for spec in specs:
        a = resolve_spec(spec)
        pd, nf = compile_pdssm(a), compile_nfsm(a)
        runners = {
            "numpy": (load_executor(pd).predict_states, load_executor(nf).predict_states, np.asarray),
            "torch": (load_model(pd).predict_states, load_model(nf).predict_states, torch.from_numpy),
        }
        for bsz, length in ((1, 10**6), (64, 10**4)):
            ids = np.random.default_rng(0).integers(0, a.n_symbols, (bsz, length))
            want = a.run(ids, start=np.full(bsz, a.initial))
            for engine, (run_pd, run_nf, to) in runners.items():
                x = to(ids)
                t_pd, out = timed(lambda run_pd=run_pd, x=x: run_pd(x))
                t_nf, _ = timed(lambda run_nf=run_nf, x=x: run_nf(x))
                assert np.array_equal(np.asarray(out), want)
                m_pd = peak_mib(lambda run_pd=run_pd, x=x: run_pd(x))
                m_nf = peak_mib(lambda run_nf=run_nf, x=x: run_nf(x))
                ok = t_pd <= EXECUTOR_RATIO * t_nf
                verdicts.append(ok)
                print(f"   {spec} ({bsz}, {length:.0e}) {engine}: pdssm {t_pd:6.3f} s {m_pd:4.0f} MiB  nfsm "
                      f"{t_nf:6.3f} s {m_nf:4.0f} MiB  ratio {t_pd / t_nf:4.2f}x  {_v(ok)}", flush=True)  # fmt: skip
    return verdicts


def bench_run(spec: str = "S3", length: int = 10**6) -> None:
    from fsa2rnn.compiler import compile_householder, compile_nfsm, compile_pdssm
    from fsa2rnn.fsa import resolve_spec

    a = resolve_spec(spec)
    print(f"   for information, `fsa2rnn run` on one word of {length:.0e} symbols of {spec} (whole process):")
    with tempfile.TemporaryDirectory() as tmp:
        word = Path(tmp) / "word.jsonl"
        ids = np.random.default_rng(0).integers(0, a.n_symbols, length)
        word.write_text(json.dumps([a.symbols[i] for i in ids]) + "\n")
        for name, compile_ in (("householder", compile_householder), ("nfsm", compile_nfsm), ("pdssm", compile_pdssm)):
            model = Path(tmp) / f"{name}.safetensors"
            compile_(a).save(model)
            with word.open() as fin:
                wall, cpu, peak, _ = _command(["run", str(model)], stdin=fin)
            print(f"     {name:<12} wall {wall:5.2f} s  CPU {cpu:5.2f} s  peak {peak:4.0f} MiB", flush=True)


def _v(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one automaton per size class, T_7..T_8, S3 only")
    args = ap.parse_args()
    classes = QUICK if args.quick else AUTOMATA
    verdicts = bench_analysis(classes)
    verdicts += bench_commands(classes["10^4"])
    verdicts += bench_full_transformations([7, 8] if args.quick else [7, 8, 9])
    verdicts += bench_executors(["S3"] if args.quick else ["S3", "S5"])
    bench_run()
    print(f"{sum(verdicts)} of {len(verdicts)} targets met")


if __name__ == "__main__":
    main()
