"""The negative-eigenvalues paper's learning-rate protocol (§5.1, Tables 3 and 5): train every rate of a grid with
every seed, pick the rate whose median score over the seeds is highest, and report that rate's best seed (Table 3)
and median (Table 5).

The score of a run is the paper's: the scaled accuracy of the answers on ``--eval-range`` when the run has one,
else the scaled token accuracy at the first evaluation length (R² for a regression task). Ties go to the rate
listed first.
"""

from __future__ import annotations

import math
import statistics
from typing import Any

from ...fsa.errors import SpecError

#: the paper's grid (App. E.1.1)
PAPER_GRID = (1e-2, 1e-3, 5e-4, 1e-4)


def parse_lr_grid(text: str) -> list[float]:
    """``paper`` or comma-separated distinct rates > 0, e.g. ``1e-2,1e-3``."""
    if text == "paper":
        return list(PAPER_GRID)
    try:
        rates = [float(v) for v in text.split(",")]
    except ValueError:
        rates = []
    if not rates or len(set(rates)) != len(rates) or not all(math.isfinite(r) and r > 0 for r in rates):
        raise SpecError(f"--lr-grid must be 'paper' or distinct rates > 0 such as 1e-2,1e-3; got {text!r}")
    return rates


def score_of(result: dict[str, Any]) -> tuple[float, str]:
    """(the run's score, what it is) — module docstring."""
    if result.get("range"):
        where = result["range"]["lengths"]
        return float(result["range"]["scaled_accuracy"]), f"scaled accuracy of the answers on {where}"
    if result.get("eval_regression"):
        first = result["eval_regression"][0]
        return float(first["r2"]), f"R² at length {first['length']}"
    ev = result.get("eval") or {}
    if ev.get("scaled_accuracy"):
        return float(ev["scaled_accuracy"][0]), f"scaled token accuracy at length {ev['lengths'][0]}"
    return float("nan"), "no score"


def grid_summary(rates: list[float], results: list[list[dict[str, Any]]], task: str, model: str) -> dict[str, Any]:
    """``results[i][j]``: rate i, seed j. Every run's score, each rate's median and best, the rate chosen by the
    median, and its best and median."""
    rows = []
    what = "no score"
    for lr, runs in zip(rates, results):
        scores = []
        for r in runs:
            s, what = score_of(r)
            scores.append(s)
        finite = [s for s in scores if math.isfinite(s)]
        rows.append({
            "lr": lr,
            "seeds": [r.get("seed") for r in runs],
            "runs": [r.get("run") for r in runs],
            "scores": scores,
            "median": statistics.median(finite) if finite else None,
            "best": max(finite) if finite else None,
        })  # fmt: skip
    ranked = [r for r in rows if r["median"] is not None]
    chosen = max(ranked, key=lambda r: r["median"]) if ranked else None  # max keeps the first of equal medians
    return {
        "task": task,
        "model": model,
        "lr_grid": rates,
        "score": what,
        "per_lr": rows,
        "chosen_lr": None if chosen is None else chosen["lr"],
        "best": None if chosen is None else chosen["best"],
        "median": None if chosen is None else chosen["median"],
    }


def grid_lines(summary: dict[str, Any]) -> list[str]:
    """The summary as text: one line per rate, then the choice."""
    out = [f"{summary['task']} · {summary['model']}: {summary['score']}, per learning rate (every seed)"]
    for r in summary["per_lr"]:
        scores = " ".join(f"{s:.3f}" for s in r["scores"])
        med = "-" if r["median"] is None else f"{r['median']:.3f}"
        out.append(f"  lr {r['lr']:g}: {scores}  median {med}")
    if summary["chosen_lr"] is None:
        out.append("no rate has a score")
    else:
        out.append(f"chosen by the median: lr {summary['chosen_lr']:g}; best {summary['best']:.3f}, "
                   f"median {summary['median']:.3f}")  # fmt: skip
    return out
