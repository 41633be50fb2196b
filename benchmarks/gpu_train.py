"""The grazzi-parity preset at full scale on a GPU, in one short call: tokens/s of training (bf16 autocast, the
Triton scans) and of evaluation, and the time the full 100,000 steps would take.

    python benchmarks/gpu_train.py [--model deltanet|mamba] [--steps 200] [--nproc N]

Full scale is the preset's: 2 blocks of width 128, 4 heads, batch 1024 of lengths 3..40 (Grazzi et al., App.
E.1.1); only the step count is cut. ``--nproc N`` runs the same under torchrun with N GPUs (``fsa2rnn train
--nproc``). Without a CUDA device it prints "no GPU" and exits 0.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="deltanet", choices=("deltanet", "mamba"))
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--nproc", type=int, default=1)
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no GPU")
        return
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        cmd = [
            sys.executable,
            "-m",
            "fsa2rnn.cli",
            "train",
            "--preset",
            "grazzi-parity",
            "--model",
            args.model,
            "--device",
            "cuda",
            "--steps",
            str(args.steps),
            "--log-every",
            "10",
            "--val-every",
            str(args.steps),
            "--samples",
            "8192",
            "--cap",
            "4096",
            "--out",
            str(run),
            "--json",
        ]
        if args.nproc > 1:
            cmd += ["--nproc", str(args.nproc)]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode:
            print(proc.stderr[-3000:])
            sys.exit(proc.returncode)
        result = json.loads(proc.stdout.strip().splitlines()[-1])
        records = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
    rates = [r["tokens_per_s"] for r in records[2:] if r.get("tokens_per_s")]  # skip compilation and warmup
    rate = sorted(rates)[len(rates) // 2] if rates else float("nan")
    tokens_per_step = 1024 * (3 + 40) / 2
    print(
        f"{args.model} [-1,1], {args.nproc} process(es): training {rate:,.0f} tokens/s (median of logged steps), "
        f"{tokens_per_step / rate * 1e3:.1f} ms/step → 100,000 steps in {1e5 * tokens_per_step / rate / 3600:.1f} h"
    )
    print(
        f"after {result['steps']} steps: loss {result['final_loss']:.4g}, token accuracy "
        + ", ".join(f"{n}:{a:.3f}" for n, a in zip(result["eval"]["lengths"], result["eval"]["token_accuracy"]))
        + f"; L_max {result['l_max']}; whole call {wall:.0f} s"
    )


if __name__ == "__main__":
    main()
