"""Negative eigenvalues on modular arithmetic without brackets (Grazzi et al., Table 3), at the medium CPU scale.

Trains DeltaNet with eigenvalues in [−1, 1] and in [0, 1] on grazzi:modarith (lengths 3..40) with the
``grazzi-modarith`` preset at ``--scale medium`` (about 9 CPU-minutes per run with one torch thread), three seeds
each, and reports the paper's test — the scaled accuracy of the answers on lengths 40..256 — every seed and each
range's median, and whether [−1, 1] beats [0, 1] by ≥ 0.2 in the median (the contrast of Table 3, where the paper
has 0.971 against 0.314, best of 3). It plots the learning curves of every run (training loss, and the scaled
token accuracy of validation words at the training length 40, against the step) and the scaled token accuracy at
lengths 40..256 after training in OUT/modarith_budget.png.
Runs resume: rerunning continues an interrupted run from its last checkpoint (or only re-evaluates a finished one).

    python examples/modarith_medium.py                 # 6 runs, about an hour of one CPU core
    python examples/modarith_medium.py --plot-only     # the table and figure of the runs already in --out
    python examples/modarith_medium.py --quick         # a smoke test: one seed, a few steps
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

RANGES = ("-1,1", "0,1")
CHANCE = 1 / 5  # five values modulo 5
CONTRAST = 0.2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one seed, a few steps (the test suite's run)")
    ap.add_argument("--out", default="out/modarith_medium", help="directory of the runs")
    ap.add_argument("--seeds", default="42,43,44")
    ap.add_argument("--plot-only", action="store_true", help="train nothing: the table and plot of the runs in --out")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the machine is shared)")
    args = ap.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")][: 1 if args.quick else None]
    out = Path(args.out)
    if not args.plot_only:
        train_all(out, seeds, args.quick, args.threads)
    runs = {(eig, s): run_dir(out, eig, s) for eig in RANGES for s in seeds}
    runs = {k: r for k, r in runs.items() if (r / "eval.json").is_file()}
    if not runs:
        raise SystemExit(f"error: no finished run in {str(out)!r}")
    scores = {k: scaled_range(r) for k, r in runs.items()}
    print(table(scores))
    print(verdict(scores))
    plot(runs, scores, out / "modarith_budget.png")
    print(f"plot: {out / 'modarith_budget.png'}")


def run_dir(out: Path, eig: str, seed: int) -> Path:
    return out / f"deltanet_{eig.replace(',', '_')}" / f"seed-{seed}"


def train_all(out: Path, seeds: list[int], quick: bool, threads: int) -> None:
    import torch

    from fsa2rnn.nn.train import preset_config, train

    torch.set_num_threads(threads)
    small = {}
    if quick:  # a smoke test of the pipeline: a tiny model, a few steps (its figures mean nothing)
        small = dict(steps=10, batch=8, d_model=16, head_dim=8, layers=1, samples=16, eval_lengths=[40],
                     eval_range="40..48", lmax=False)  # fmt: skip
    for eig in RANGES:
        for seed in seeds:
            cfg = preset_config("grazzi-modarith", "medium", eig=eig, seed=seed, quiet=True, **small)
            res = train(cfg, run_dir(out, eig, seed), resume=True)
            print(f"DeltaNet [{eig}] seed {seed}: scaled accuracy on {res['range']['lengths']}: "
                  f"{res['range']['scaled_accuracy']:.3f}", flush=True)  # fmt: skip


def scaled_range(run: Path) -> float:
    """The paper's test: the scaled accuracy of the answers on the --eval-range lengths (eval.json)."""
    return float(json.loads((run / "eval.json").read_text())["range"]["scaled_accuracy"])


def table(scores: dict[tuple[str, int], float]) -> str:
    lines = ["| DeltaNet | " + " | ".join(f"seed {s}" for s in sorted({s for _, s in scores})) + " | median |"]
    lines.append("|" + "---|" * (lines[0].count("|") - 1))
    for eig in RANGES:
        mine = {s: v for (e, s), v in scores.items() if e == eig}
        if mine:
            cells = " | ".join(f"{mine[s]:.3f}" if s in mine else "-" for s in sorted({s for _, s in scores}))
            lines.append(f"| [{eig}] | {cells} | {statistics.median(mine.values()):.3f} |")
    return "\n".join(lines)


def verdict(scores: dict[tuple[str, int], float]) -> str:
    med = {e: statistics.median(v for (x, _), v in scores.items() if x == e) for e in RANGES
           if any(x == e for x, _ in scores)}  # fmt: skip
    if len(med) < 2:
        return "contrast: needs both ranges"
    gap = med["-1,1"] - med["0,1"]
    n = " and ".join(str(sum(x == e for x, _ in scores)) for e in RANGES)
    shown = "shown" if gap >= CONTRAST else "not shown"
    return f"contrast [-1, 1] - [0, 1] in the medians of {n} seed(s): {gap:+.3f} ({shown}; the criterion: ≥ {CONTRAST})"


def plot(runs: dict[tuple[str, int], Path], scores: dict[tuple[str, int], float], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax_loss, ax_acc, ax_len) = plt.subplots(1, 3, figsize=(15, 4))
    colors = {"-1,1": "tab:blue", "0,1": "tab:orange"}
    for (eig, seed), run in sorted(runs.items()):
        recs = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines() if line.strip()]
        label = f"[{eig}] seed {seed} (40..256: {scores[eig, seed]:.3f})"
        style = dict(color=colors[eig], alpha=0.85, linestyle=("-", "--", ":")[seed % 3])
        ax_loss.plot([r["step"] for r in recs], [r["loss"] for r in recs], label=label, **style)
        val = [r for r in recs if "val_token_accuracy" in r]
        ax_acc.plot([r["step"] for r in val], [(r["val_token_accuracy"] - CHANCE) / (1 - CHANCE) for r in val],
                    marker="o", label=label, **style)  # fmt: skip
        ev = json.loads((run / "eval.json").read_text())
        ax_len.plot(ev["lengths"], ev["scaled_accuracy"], marker="o", label=label, **style)
    ax_loss.axhline(1.6094, color="gray", linewidth=0.8, linestyle=":")
    ax_loss.set(xlabel="step", ylabel="training loss (chance: ln 5)", title="training loss")
    ax_acc.set(xlabel="step", ylabel="scaled token accuracy", ylim=(-0.05, 1.0),
               title="validation words of length 40 (every position)")  # fmt: skip
    ax_len.set(xlabel="length", ylabel="scaled token accuracy", ylim=(-0.05, 1.0), xscale="log",
               title="after training, against the length")  # fmt: skip
    ax_len.minorticks_off()
    ax_len.set_xticks([40, 64, 128, 256], ["40", "64", "128", "256"])
    ax_len.legend(fontsize=7)
    fig.suptitle("DeltaNet on mod-arith without brackets, grazzi-modarith --scale medium")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
