"""Training and evaluation throughput of SequenceModels on this machine's CPUs (one process, ratios side by side).

    python benchmarks/bench_train.py [--quick] [--threads N] [--only train,scans,eval]

- ``train``: tokens/s of one training step (forward, backward, AdamW) for every model at d_model 64, 2 layers,
  batch 8 × length 1024, on parity words.
- ``scans``: DeltaNet, Mamba-style and NFSM with their fast scans (``impl="auto"``: on CPU the chunked WY form of
  delta_product, the fused selective scan, the straight-through table scan) against the same models (same weights,
  same words) with the naive scans (``impl="naive"``, the step-by-step references); target ≥ 3×. Both steps are
  warmed up, then timed in ``--repeat`` alternating rounds (one naive step, as many fast steps as take about as
  long), best of each, so that a load that comes and goes on a shared machine meets both alike. Each scan's share
  of its step: the scan's own forward + backward (for the Mamba-style layer the selective scan, a_t, b_t and the C
  readout included), timed on the inputs it received during the step, over the step time. The load average is
  printed beside: with more runnable processes than cores, timings of multi-threaded steps are not meaningful
  (``--threads 1`` then measures each step on one core).
- ``eval``: token and sequence accuracy at length 2^20 on 16 words (the recurrent state carried across chunks)
  of a trained 1-layer DeltaNet (parity) and a trained NFSM (flip-flop); target ≤ 60 s each, word generation
  included.

Exits 1 when a target is missed (never with ``--quick``, whose sizes are too small to judge).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable

import torch

from fsa2rnn.nn.layers import delta_product as dp_layer
from fsa2rnn.nn.layers import nfsm as nfsm_layer
from fsa2rnn.nn.layers import selective_diagonal as sd_layer
from fsa2rnn.nn.metrics import accuracy_at_lengths
from fsa2rnn.nn.model import SequenceModel
from fsa2rnn.nn.tasks import get_task
from fsa2rnn.nn.train.run import preset_config
from fsa2rnn.nn.train.trainer import train

MODELS = {
    "deltanet": {"eig": {"beta_range": (0, 2)}},
    "deltaproduct": {"eig": {"beta_range": (0, 2), "n_h": 2}},
    "mamba": {"eig": {"eig_range": (-1, 1)}},
    "dlr": {"eig": {}},
    "nfsm": {"eig": {"heads": [2]}},
    "lstm": {"eig": {}},
    "transformer": {"eig": {"heads": 4}},
}
#: layer module and attribute of the scan each model's layer calls in training
SCANS = {
    "deltanet": (dp_layer, "delta_product"),
    "mamba": (sd_layer, "selective_scan"),
    "nfsm": (nfsm_layer, "st_table_scan"),
}
FAILED: list[str] = []


def best_of(fn: Callable[[], object], repeat: int, warmup: int = 1) -> float:
    for _ in range(warmup):
        fn()
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def make_step(model: SequenceModel, ids: torch.Tensor, targets: torch.Tensor) -> Callable[[], None]:
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step() -> None:
        loss = torch.nn.functional.cross_entropy(model(ids).flatten(0, 1), targets.flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()

    return step


def model_of(name: str, impl: str | None = None, d: int = 64, layers: int = 2) -> SequenceModel:
    torch.manual_seed(0)
    args = dict(MODELS[name]["eig"])
    if impl is not None:
        args["impl"] = impl
    return SequenceModel(3, 2, name, layers, d, layer_args=args).train()


def words(batch: int, length: int) -> tuple[torch.Tensor, torch.Tensor]:
    task = get_task("grazzi:parity")
    b = task.sample(batch, length, torch.Generator().manual_seed(0))
    return b.inputs, b.targets


def bench_train(args) -> None:
    batch, length = (2, 128) if args.quick else (8, 1024)
    ids, targets = words(batch, length)
    print(f"\n== training step, d_model 64, 2 layers, batch {batch} × length {length} ==")
    print(f"{'model':14} {'step (s)':>9} {'tokens/s':>10}")
    for name in MODELS:
        step = make_step(model_of(name), ids, targets)
        t = best_of(step, repeat=args.repeat)
        print(f"{name:14} {t:9.3f} {batch * length / t:10.0f}", flush=True)


def best_pair(fast: Callable[[], object], slow: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Best seconds of two functions, each warmed up once, then timed in ``repeat`` rounds of one call of ``slow``
    and k calls of ``fast``, k ≈ the ratio of their times: both are exposed to the machine for about as long."""

    def timed(fn: Callable[[], object]) -> float:
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0

    best_fast, best_slow = timed(fast), timed(slow)
    k = max(1, round(best_slow / best_fast))
    best_fast, best_slow = float("inf"), float("inf")
    for _ in range(repeat):
        best_slow = min(best_slow, timed(slow))
        best_fast = min([best_fast] + [timed(fast) for _ in range(k)])
    return best_fast, best_slow


def _timed_scan(name: str, step: Callable[[], None], repeat: int) -> float:
    """Seconds per step spent in the scan's forward + backward (all layers), timed on the inputs of one step."""
    module, attr = SCANS[name]
    original = getattr(module, attr)
    captured: list[tuple[tuple, dict]] = []

    def spy(*a, **kw):
        captured.append((a, kw))
        return original(*a, **kw)

    setattr(module, attr, spy)
    try:
        step()
    finally:
        setattr(module, attr, original)
    calls = []
    for a, kw in captured:
        inputs = [x.detach().clone().requires_grad_(x.is_floating_point()) if torch.is_tensor(x) else x for x in a]
        kwargs = {k: v.detach() if torch.is_tensor(v) else v for k, v in kw.items()}
        calls.append((inputs, kwargs))

    def run() -> None:
        for inputs, kwargs in calls:
            out = original(*inputs, **kwargs)
            first = out[0] if isinstance(out, tuple) else out
            grads = [x for x in inputs if torch.is_tensor(x) and x.requires_grad]
            torch.autograd.grad(first.float().sum(), grads, allow_unused=True)

    return best_of(run, repeat=repeat)


def bench_scans(args) -> None:
    batch, length = (2, 128) if args.quick else (8, 1024)
    ids, targets = words(batch, length)
    tokens = batch * length
    load = " / ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"\n== fast scans against naive scans (same model), batch {batch} × length {length} ==")
    print(f"torch threads {args.threads}, cores {os.cpu_count()}, load average {load} (1 / 5 / 15 min)")
    if args.threads > 1 and os.getloadavg()[0] >= (os.cpu_count() or 1):
        print("warning: the machine is loaded; multi-threaded steps wait on descheduled threads (--threads 1)")
    print(
        f"{'model':10} {'naive (s)':>10} {'fast (s)':>9} {'naive tok/s':>12} {'fast tok/s':>11} {'speedup':>8} "
        f"{'scan share naive → fast':>24}  target ≥ 3×"
    )
    for name in SCANS:
        fast = make_step(model_of(name), ids, targets)
        naive = make_step(model_of(name, impl="naive"), ids, targets)
        t_fast, t_naive = best_pair(fast, naive, args.repeat)
        share_fast = _timed_scan(name, fast, args.repeat) / t_fast
        share_naive = _timed_scan(name, naive, args.repeat) / t_naive
        ok = t_naive / t_fast >= 3
        if not ok and not args.quick:
            FAILED.append(f"{name} scans: {t_naive / t_fast:.1f}× < 3×")
        print(
            f"{name:10} {t_naive:10.3f} {t_fast:9.3f} {tokens / t_naive:12.0f} {tokens / t_fast:11.0f} "
            f"{t_naive / t_fast:7.1f}× {share_naive:14.0%} → {share_fast:4.0%}  {'ok' if ok else 'MISSED'}",
            flush=True,
        )
    print(f"load average after: {' / '.join(f'{x:.1f}' for x in os.getloadavg())}")


def bench_eval(args) -> None:
    length = 2**14 if args.quick else 2**20
    print(f"\n== evaluation at length {length}, 16 words, state carried across chunks ==")
    runs = [
        ("deltanet", "grazzi:parity", dict(steps=40 if args.quick else 400, layers=1, eval_lengths=[40])),
        ("nfsm", "brandoit:FF", dict(steps=40 if args.quick else 150, eval_lengths=[64])),
    ]
    preset = {"deltanet": "grazzi-parity", "nfsm": "brandoit"}
    with tempfile.TemporaryDirectory() as tmp:
        for name, task_name, flags in runs:
            cfg = preset_config(
                preset[name], "small", task=task_name, model=name, lmax=False, samples=64, progress=False, **flags
            )
            t0 = time.perf_counter()
            train(cfg, f"{tmp}/{name}")
            t_train = time.perf_counter() - t0
            from fsa2rnn.nn.train import load_run

            model, task, _ = load_run(f"{tmp}/{name}")
            t0 = time.perf_counter()
            got = accuracy_at_lengths(model, task, [length], samples=16)
            t = time.perf_counter() - t0
            ok = t <= 60
            if not ok and not args.quick:
                FAILED.append(f"{name} evaluation at {length}: {t:.0f} s > 60 s")
            print(
                f"{name:9} on {task_name:14} (trained {cfg.steps} steps in {t_train:.0f} s): {t:6.1f} s, "
                f"token accuracy {got['token_accuracy'][0]:.4f}, sequence accuracy {got['sequence_accuracy'][0]:.2f}"
                f"  {'ok' if ok else 'MISSED'} (≤ 60 s)",
                flush=True,
            )


SECTIONS = {"train": bench_train, "scans": bench_scans, "eval": bench_eval}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--only", default=",".join(SECTIONS))
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    print(f"torch {torch.__version__}, {args.threads} threads")
    for name in args.only.split(","):
        SECTIONS[name](args)
    if FAILED:
        print("\nmissed: " + "; ".join(FAILED))
        sys.exit(1)


if __name__ == "__main__":
    main()
