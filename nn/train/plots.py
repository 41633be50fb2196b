"""RUN/curves.png: loss and accuracy against the training step, and accuracy against the evaluation length."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fsa2rnn.fsa.io import atomic_write


def plot_curves(path: str | Path, records: list[dict[str, Any]], ev: dict[str, Any], *, title: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    steps = [r["step"] for r in records]
    axes[0].plot(steps, [r["loss"] for r in records], lw=1)
    axes[0].set(xlabel="step", ylabel="loss", yscale="log" if all(r["loss"] > 0 for r in records) else "linear")
    axes[1].plot(steps, [r["accuracy"] for r in records], lw=1, label="train batch")
    val = [(r["step"], r["val_sequence_accuracy"]) for r in records if "val_sequence_accuracy" in r]
    if val:
        axes[1].plot(*zip(*val), "o-", ms=3, lw=1, label="validation (sequence)")
    axes[1].set(xlabel="step", ylabel="accuracy" if "r2" not in ev else "R²")
    axes[1].legend(fontsize=8)
    if ev.get("token_accuracy"):
        axes[2].plot(ev["lengths"], ev["token_accuracy"], "o-", label="token")
        axes[2].plot(ev["lengths"], ev["sequence_accuracy"], "s-", label="sequence")
        axes[2].axhline(ev["chance"], color="gray", ls=":", lw=1, label="chance")
        axes[2].axvline(ev["train_lengths"][1], color="red", ls="--", lw=1, label="training max")
        axes[2].set(xlabel="length", ylabel="accuracy", xscale="log", ylim=(-0.02, 1.02))
        axes[2].legend(fontsize=8)
    elif ev.get("r2"):
        axes[2].plot(ev["lengths"], ev["r2"], "o-")
        axes[2].set(xlabel="length", ylabel="R²")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    atomic_write(path, lambda p: fig.savefig(p, format="png", dpi=90))
    plt.close(fig)
