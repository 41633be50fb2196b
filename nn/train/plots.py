"""RUN/curves.png: loss and accuracy against the training step, and accuracy against the evaluation length.

The title names the task, the model with its eigenvalue range, and the seed (:func:`run_title`); the length axis
has a tick at every evaluated length; the training maximum, L_max (or the cap, when none was found) and chance are
marked; markers at 0 and 1 are not clipped, and the legends sit below the panels, not over the data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ...fsa.plotting import pyplot, save_figure


def run_title(cfg: Any) -> str:
    """``task · model [eigenvalue range] · seed S`` of a TrainConfig."""
    eig = f" [{cfg.eig.replace(',', ', ')}]" if getattr(cfg, "eig", None) else ""
    return f"{cfg.task} · {cfg.model}{eig} · seed {cfg.seed}"


def plot_curves(path: str | Path, records: list[dict[str, Any]], ev: dict[str, Any], *, title: str = "") -> None:
    plt = pyplot()
    from matplotlib.ticker import FixedLocator, NullLocator

    fig, axes = plt.subplots(1, 3, figsize=(14, 4.4))
    steps = [r["step"] for r in records]
    if records:
        axes[0].plot(steps, [r["loss"] for r in records], lw=1)
    positive = records and all(r["loss"] > 0 for r in records)
    axes[0].set(xlabel="step", ylabel="loss", yscale="log" if positive else "linear", title="training loss")
    axes[1].plot(steps, [r["accuracy"] for r in records], lw=1, label="training batch (token)")
    val = [(r["step"], r["val_sequence_accuracy"]) for r in records if "val_sequence_accuracy" in r]
    if val:
        axes[1].plot(*zip(*val), "o-", ms=3, lw=1, label="validation (sequence)", clip_on=False, zorder=3)
    regression = "r2" in ev
    axes[1].set(xlabel="step", ylabel="R²" if regression else "accuracy", title="training")
    if not regression:
        axes[1].set_ylim(-0.03, 1.03)
    _legend_below(axes[1])
    ax = axes[2]
    lengths = ev.get("lengths") or []
    if ev.get("token_accuracy"):
        ax.plot(lengths, ev["token_accuracy"], "o-", label="token", clip_on=False, zorder=4)
        ax.plot(lengths, ev["sequence_accuracy"], "s--", ms=5, label="sequence", clip_on=False, zorder=4)
        ax.axhline(ev["chance"], color="tab:purple", ls=":", lw=1.5, zorder=5, label=f"chance {ev['chance']:.3g}")
        ax.axvline(ev["train_lengths"][1], color="tab:red", ls="--", lw=1, label="training max")
        if ev.get("l_max") is not None:
            ax.axvline(ev["l_max"], color="black", ls="-.", lw=1.2, label=f"L_max {ev['l_max']}")
        elif ev.get("l_max_capped") and ev.get("l_max_search"):
            cap = ev["l_max_search"]["cap"]
            ax.axvline(cap, color="black", ls="-.", lw=1.2, label=f"no L_max up to {cap}")
        ax.set(xlabel="length", ylabel="accuracy", xscale="log", ylim=(-0.03, 1.03), title="length generalization")
    elif ev.get("r2"):
        ax.plot(lengths, ev["r2"], "o-", clip_on=False)
        ax.set(xlabel="length", ylabel="R²", title="length generalization")
    if lengths and ev.get("token_accuracy"):
        ax.xaxis.set_major_locator(FixedLocator(lengths))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xticklabels([str(n) for n in lengths], rotation=45 if len(lengths) > 4 else 0, fontsize=8)
        lo, hi = min(lengths + [ev["train_lengths"][1]]), max(lengths + [ev.get("l_max") or 0])
        ax.set_xlim(lo / 1.3, hi * 1.3)
    if ev.get("token_accuracy") or ev.get("r2"):
        _legend_below(ax)
    fig.suptitle(title, fontsize=11)
    fig.tight_layout()
    save_figure(fig, path, bbox_inches="tight")


def _legend_below(ax: Any) -> None:
    if not ax.get_legend_handles_labels()[1]:
        return
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)
