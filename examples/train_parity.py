"""Negative eigenvalues make parity learnable (Grazzi et al., Table 3, parity column), at small scale on a CPU.

Trains DeltaNet and the Mamba-style diagonal with eigenvalues in [−1, 1] and in [0, 1] on grazzi:parity (lengths
3..40), three seeds each (the ``grazzi-parity`` preset at ``--scale small``), and evaluates token accuracy, sequence
accuracy and the paper's scaled accuracy at lengths 40..256, then plots accuracy against length for every run.
Runs resume: rerunning continues (or only re-evaluates) the runs already in --out.

    python examples/train_parity.py            # 12 runs of ≤ 3 minutes each on a 2-core CPU
    python examples/train_parity.py --quick    # a smoke test: one seed, a few steps
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from fsa2rnn.nn.train import preset_config, train

VARIANTS = [("deltanet", "-1,1"), ("deltanet", "0,1"), ("mamba", "-1,1"), ("mamba", "0,1")]
NAMES = {"deltanet": "DeltaNet", "mamba": "Mamba"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one seed, a few steps (the test suite's run)")
    ap.add_argument("--out", default="out/train_parity", help="directory of the runs")
    ap.add_argument("--seeds", default="42,43,44")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the machine is shared)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    seeds = [int(s) for s in args.seeds.split(",")][: 1 if args.quick else None]
    quick = dict(steps=20, samples=32, eval_lengths=[40, 80], eval_range="40..64", lmax=False) if args.quick else {}
    out = Path(args.out)
    rows = []
    for model, eig in VARIANTS:
        for seed in seeds:
            cfg = preset_config("grazzi-parity", "small", model=model, eig=eig, seed=seed, progress=False, **quick)
            run = out / f"{model}_{eig.replace(',', '_')}" / f"seed-{seed}"
            res = train(cfg, run, resume=True)
            rows.append((model, eig, seed, res))
            ev = res["eval"]
            accs = "  ".join(f"{n}:{a:.3f}" for n, a in zip(ev["lengths"], ev["token_accuracy"]))
            print(
                f"{NAMES[model]:8} [{eig:>4}] seed {seed}: token accuracy {accs}  "
                f"sequence accuracy at {ev['lengths'][-1]}: {ev['sequence_accuracy'][-1]:.3f}  "
                f"scaled accuracy on {res['range']['lengths']}: {res['range']['scaled_accuracy']:.3f}",
                flush=True,
            )
    print()
    print(table(rows))
    verdicts(rows)
    plot(rows, out / "accuracy_vs_length.png")
    (out / "results.json").write_text(json.dumps([{"model": m, "eig": e, "seed": s, **r} for m, e, s, r in rows]))
    print(f"\nplot: {out / 'accuracy_vs_length.png'}")


def table(rows) -> str:
    lengths = rows[0][3]["eval"]["lengths"]
    head = "| model | eig | seed | " + " | ".join(f"tok@{n}" for n in lengths) + " | seq@" + str(lengths[-1])
    head += f" | scaled {rows[0][3]['range']['lengths']} | steps |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for model, eig, seed, r in rows:
        ev = r["eval"]
        lines.append(
            f"| {NAMES[model]} | [{eig}] | {seed} | "
            + " | ".join(f"{a:.3f}" for a in ev["token_accuracy"])
            + f" | {ev['sequence_accuracy'][-1]:.3f} | {r['range']['scaled_accuracy']:.3f} | {r['steps']} |"
        )
    return "\n".join(lines)


def verdicts(rows) -> None:
    """The claims of Table 3 at small scale, checked run by run."""
    for model in ("deltanet", "mamba"):
        neg = [r for m, e, _, r in rows if m == model and e == "-1,1"]
        pos = [r for m, e, _, r in rows if m == model and e == "0,1"]
        good = sum(
            all(a >= 0.99 for n, a in zip(r["eval"]["lengths"], r["eval"]["token_accuracy"]) if n <= 256) for r in neg
        )
        chance = sum(
            all(a <= 0.75 for n, a in zip(r["eval"]["lengths"], r["eval"]["token_accuracy"]) if n > 128) for r in pos
        )
        print(
            f"{NAMES[model]} [-1,1]: token accuracy >= 0.99 at every length <= 256 in {good}/{len(neg)} seeds; "
            f"[0,1]: token accuracy <= 0.75 beyond 128 in {chance}/{len(pos)} seeds"
        )


def plot(rows, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 3.6), sharey=True)
    colors = {"-1,1": "tab:blue", "0,1": "tab:orange"}
    for ax, model in zip(axes, ("deltanet", "mamba")):
        for m, eig, seed, r in rows:
            if m == model:
                ev = r["eval"]
                ax.plot(
                    ev["lengths"],
                    ev["token_accuracy"],
                    "o-",
                    color=colors[eig],
                    alpha=0.7,
                    label=f"[{eig}]" if seed == rows[0][2] else None,
                )
        ax.axvline(40, color="red", ls="--", lw=1)
        ax.axhline(0.5, color="gray", ls=":", lw=1)
        ax.set(title=f"{NAMES[model]} on parity (trained on 3..40)", xlabel="length", xscale="log")
        ax.legend(title="eigenvalues")
    axes[0].set_ylabel("token accuracy")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=90)


if __name__ == "__main__":
    main()
