"""The checks at the speed of the runtime: each figure beside its baseline, with the ratio, in one run.

1. ``verify --eta``: the L_max search along η-trajectories (realize/conditions.py ``robust_report``, random words
   and the witness word) by the fused numpy step (realize/trajectory.py, ``engine="numpy"``) against the
   step-by-step torch loop (``engine="torch"``), on the T4/S5/M11 Householder cascades and the T4/S5 NFSMs at
   η = 0.001, both to the same cap; the reports must be equal. Then the command of the headline,
   ``fsa2rnn verify T4.householder.safetensors --spec T4 --eta 0.001 --perturbation adversarial --lmax --cap
   65536``, end to end in a child process (target < 30 s; the torch loop takes about 2 ms a step, so ≥ 5× is read
   off the ratios above).
2. ``compare`` on a one-layer NFSM: the L_max search (nn/lmax.py ``failing_length``, 512 words) through the
   tables (nn/table_predict.py) against the per-position forward (``predictor(read="logits")``) to the same cap, on
   a trained run (``--run RUN``, e.g. the Z16 counter brandoit:Z16:gen with ``--nfsm-heads auto:4``: 64 indices,
   cap 512 — the forward computes 4096 logits a position) or else the compiled Z16 NFSM as a SequenceModel (cap 1024);
   with ``--run`` also ``fsa2rnn compare RUN --cap 4096`` end to end (target < 60 s and < 2 GiB).

    python benchmarks/bench_checks.py [--quick] [--run RUN]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import torch

from fsa2rnn.compiler import compile_householder, compile_nfsm
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.nn.lmax import automaton_words, failing_length
from fsa2rnn.realize.conditions import check_conditions, robust_report


def _timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return time.perf_counter() - t0, out


def _child(args: list[str]) -> str:
    """Wall seconds, CPU seconds (user + system: what a loaded machine does not inflate), peak RSS in MiB and exit
    code of ``fsa2rnn ARGS`` in a child process (its own resource usage, os.wait4)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "fsa2rnn.cli", *args], stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        rc = os.waitstatus_to_exitcode(status)
        if rc not in (0, 1):
            err.seek(0)
            print(err.read().decode(errors="replace").strip()[-400:])
    cpu = usage.ru_utime + usage.ru_stime
    return f"{wall:.1f} s wall, {cpu:.1f} s CPU, peak {usage.ru_maxrss / 1024:.0f} MiB, exit {rc}"


def bench_verify(cap: int, headline_cap: int) -> None:
    print(f"== verify --eta 0.001 --lmax: fused numpy step against the torch loop, cap {cap}")
    print("   (report s: robust_report end to end; checks s: its part without trajectories, check_conditions;")
    print("    the ratio is of the trajectories' part, report − checks)")
    head = f"{'model':<18}{'perturbation':<13}{'checks s':>9}{'torch s':>9}{'numpy s':>9}{'ratio':>8}"
    print(f"{head}  l_max (witness)  same")
    cases = [(spec, "householder", "adversarial") for spec in ("T4", "S5", "M11")]
    cases += [("T4", "householder", "random"), ("T4", "nfsm", "adversarial"), ("S5", "nfsm", "random")]
    for spec, target, kind in cases:
        compiler = compile_householder if target == "householder" else compile_nfsm
        model = compiler(resolve_spec(spec))
        fixed, _ = _timed(partial(check_conditions, model, 0.001, simulate=False))
        report = partial(robust_report, model, None, eta=0.001, perturbation_kind=kind, lmax=True, cap=cap)
        slow, want = _timed(partial(report, engine="torch"))
        fast, got = _timed(partial(report, engine="numpy"))
        ratio = (slow - fixed) / max(fast - fixed, 1e-3)
        lm = f"{got['l_max']} ({got.get('l_max_witness', '-')})"
        row = f"{spec + ' ' + target:<18}{kind:<13}{fixed:>9.2f}{slow:>9.2f}{fast:>9.2f}{ratio:>7.1f}x"
        print(f"{row}  {lm:<15}  {got == want}")
    with tempfile.TemporaryDirectory() as tmp:
        path = str(Path(tmp) / "T4.householder.safetensors")
        compile_householder(resolve_spec("T4")).save(path)
        args = ["verify", path, "--spec", "T4", "--eta", "0.001", "--perturbation", "adversarial", "--lmax"]
        got = _child([*args, "--cap", str(headline_cap)])
        print(f"fsa2rnn verify T4.householder --eta 0.001 --perturbation adversarial --lmax --cap {headline_cap}:")
        print(f"  {got} (target < 30 s; exit 1: not robust)")


def bench_compare(run: str | None, cap: int, n_words: int) -> None:
    from fsa2rnn.nn.model import SequenceModel

    if run is not None:
        from fsa2rnn.nn.train import load_run

        model, task, _ = load_run(run)
        words, name = task.word_source(), f"trained run {run}"
    else:
        compiled = compile_nfsm(resolve_spec("Z16"), heads="single")
        model = SequenceModel.from_compiled(compiled)
        words, name = automaton_words(compiled.target_automaton()), "compiled Z16 NFSM as a SequenceModel"
    heads = model.blocks[0].layer.heads
    print(f"== compare's L_max search on a one-layer NFSM ({name}, heads {heads}), {n_words} words, cap {cap}")
    print(f"{'dtype':<10}{'logits s':>10}{'tables s':>10}{'ratio':>8}  l_max  same")
    for dt in (torch.float64,) if run is not None else (torch.float64, torch.float32):
        m = model.to(dt)
        search = partial(failing_length, sample_words=words, start=64, cap=cap, n_words=n_words, seed=0)
        slow, want = _timed(lambda m=m, search=search: search(m.predictor(read="logits")))
        fast, got = _timed(lambda m=m, search=search: search(m.predictor()))  # the tables read inside
        name = str(dt).replace("torch.", "")
        print(f"{name:<10}{slow:>10.2f}{fast:>10.2f}{slow / fast:>7.1f}x  {got[0]!s:<5}  {got == want}")
    if run is not None:
        print(f"fsa2rnn compare RUN --cap 4096: {_child(['compare', run, '--cap', '4096'])} (target < 60 s, < 2 GiB)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small caps (a smoke test)")
    ap.add_argument("--run", help="a trained one-layer NFSM run directory for the compare part")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, {os.cpu_count()} CPUs, one torch thread")
    bench_verify(256 if args.quick else 2048, 1024 if args.quick else 65536)
    # the per-position baseline of a 64-index head costs 4096 logits a position: it is run to a cap it finishes
    bench_compare(args.run, 256 if args.quick else 1024 if args.run is None else 512, 64 if args.quick else 512)
    return 0


if __name__ == "__main__":
    sys.exit(main())
