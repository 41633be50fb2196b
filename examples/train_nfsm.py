"""NFSMs trained at length 64 track their automaton at every length; an affine baseline does not (Brandoit et al.,
Table 1), at small scale on a CPU.

Trains a one-layer NFSM on brandoit:FF, brandoit:DFF5, brandoit:Z2 and brandoit:S3 (the ``brandoit`` preset at
``--scale small``: first-error loss weighting, heads with 4× the indices the automaton needs, no Gumbel noise),
five seeds each, searches the failing length L_max up to 2^16 (sequence accuracy 1.0 on 256 words), and checks
that the tables read off the trained logits realize the automaton (then it is right at every length). The
baseline, a Mamba-style diagonal with eigenvalues in [−1, 1], is trained on FF with the preset's baseline settings
and judged at 90 % sequence accuracy (the paper's threshold for baselines).

    python examples/train_nfsm.py            # 23 runs of at most a few minutes each on a 2-core CPU
    python examples/train_nfsm.py --quick    # a smoke test: one task, one seed, a few steps
    python examples/train_nfsm.py --tasks brandoit:Z16,brandoit:S4 --baseline-seeds ''   # more of Table 1
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import torch

from fsa2rnn.nn.train import preset_config, train

TASKS = ["brandoit:FF", "brandoit:DFF5", "brandoit:Z2", "brandoit:S3"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one task, one seed, a few steps (the test suite's run)")
    ap.add_argument("--out", default="out/train_nfsm", help="directory of the runs")
    ap.add_argument("--seeds", default="42,43,44,45,46")
    ap.add_argument("--baseline-seeds", default="42,43,44", help="seeds of the FF baseline ('' for none)")
    ap.add_argument("--tasks", default=",".join(TASKS), help="also brandoit:Z16, brandoit:S4, … (see fsa2rnn tasks)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the machine is shared)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    seeds = [int(s) for s in args.seeds.split(",")]
    base_seeds = [int(s) for s in args.baseline_seeds.split(",") if s]  # "": no baseline runs
    tasks = args.tasks.split(",")
    quick = {}
    if args.quick:
        tasks, seeds, base_seeds = tasks[:1], seeds[:1], base_seeds[:1]
        quick = dict(steps=30, samples=32, eval_lengths=[64, 128], cap=256, early_stop=0)
    out = Path(args.out)
    rows = []
    for task in tasks:
        for seed in seeds:
            rows.append(_run(out, task, "nfsm", seed, quick))
    for seed in base_seeds:
        rows.append(_run(out, "brandoit:FF", "mamba", seed, {**quick, "eig": "-1,1"}))
    print()
    print(table(rows))
    summary(rows)
    (out / "results.json").write_text(json.dumps(rows))


def _run(out: Path, task: str, model: str, seed: int, flags: dict) -> dict:
    cfg = preset_config("brandoit", "small", task=task, model=model, seed=seed, progress=False, **flags)
    res = train(cfg, out / task.replace(":", "_") / f"{model}-seed-{seed}", resume=True)
    res.update(task=task, model=model, threshold=cfg.threshold, cap=cfg.cap)
    ex = res.get("exact") or {}
    print(
        f"{task:15} {model:5} seed {seed}: L_max {_lmax(res)}  steps {res['steps']}  "
        f"tables exact: {ex.get('exact', '-')}",
        flush=True,
    )
    return res


def _lmax(r: dict) -> str:
    return f">= {r['cap']}" if r["l_max"] is None and r["l_max_capped"] else str(r["l_max"])


def table(rows: list[dict]) -> str:
    lines = [
        "| task | model | seed | L_max | tables exact | steps | token acc at 64 |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ex = (r.get("exact") or {}).get("exact")
        lines.append(
            f"| {r['task']} | {r['model']} | {r['seed']} | {_lmax(r)} | "
            f"{'-' if ex is None else ('yes' if ex else 'no')} | {r['steps']} | "
            f"{r['eval']['token_accuracy'][0]:.4f} |"
        )
    return "\n".join(lines)


def summary(rows: list[dict]) -> None:
    """Table 1's cells: the median L_max over the seeds that learned, and how many learned."""
    for task in dict.fromkeys(r["task"] for r in rows):
        for model in dict.fromkeys(r["model"] for r in rows if r["task"] == task):
            runs = [r for r in rows if r["task"] == task and r["model"] == model]
            learned = [r for r in runs if r["l_max"] is None or r["l_max"] > 64]
            values = sorted(r["cap"] if r["l_max"] is None else r["l_max"] for r in learned)
            med = statistics.median_low(values) if values else None
            full = sum(
                1 for r in runs if r["l_max"] is None and r["l_max_capped"] and (r.get("exact") or {}).get("exact")
            )
            print(
                f"{task} {model}: median L_max {med} over {len(learned)}/{len(runs)} seeds that learned; "
                f"{full}/{len(runs)} reach the cap with exact tables"
                if model == "nfsm"
                else f"{task} {model}: median L_max {med} over {len(learned)}/{len(runs)} seeds that learned; "
                f"finite L_max in {sum(r['l_max'] is not None for r in runs)}/{len(runs)}"
            )


if __name__ == "__main__":
    main()
