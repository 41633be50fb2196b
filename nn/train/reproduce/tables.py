"""What a reproduction writes besides DIR/table.json: the default DIR/table.md (the L_max table beside the paper's
values, :func:`table_markdown`) and DIR/plot.png (:func:`plot_table`), and the pieces reproductions with their own
table reuse (:func:`heading`, :func:`notes_block`, :func:`save_plot`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....fsa.plotting import pyplot, save_figure

TINY_NOTE = "Tiny scale exercises the pipeline only (a few steps): its figures mean nothing."


def heading(table: dict[str, Any]) -> list[str]:
    """The first lines of every table.md: the title with the command that made it, and the source."""
    return [
        f"# {table['title']} — `fsa2rnn reproduce {table['reproduction']} --scale {table['scale']}`",
        "",
        f"Source: {table['source']}",
        "",
    ]


def notes_block(table: dict[str, Any]) -> list[str]:
    """The last lines of every table.md: the table's notes (the deviations that remain at its scale)."""
    return ["", "Notes:", ""] + [f"- {n}" for n in table["notes"]] if table["notes"] else []


def save_plot(fig: Any, path: Path) -> None:
    """Write a table's figure as DIR/plot.png (atomically) and free it."""
    fig.tight_layout()
    save_figure(fig, path, fmt="png")


def table_markdown(table: dict[str, Any]) -> str:
    lines = [
        *heading(table),
        "| task | model | arm | ours | learned | exact | paper | paper, per seed | ours, per seed | wall s |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in table["cells"]:
        paper = c.get("paper") or {}
        per_seed = ", ".join(_seed_text(s) for s in c["seeds"])
        lines.append(
            f"| {c['task']} | {c['model']} | {c['arm']} | {c.get('aggregate', '-')} | {c.get('learned', '-')} | "
            f"{c.get('exact', '-')} | {paper.get('aggregate', '-')} | {' '.join(paper.get('seeds', [])) or '-'} | "
            f"{per_seed} | {c['seconds']} |"
        )
    lines += notes_block(table)
    return "\n".join(lines) + "\n"


def _seed_text(rec: dict[str, Any]) -> str:
    seed = rec["job"]["seed"]
    if rec.get("status") != "done":
        return f"{seed}: not run"
    mark = "†" if rec.get("exact") else ""
    return f"{seed}: {rec.get('l_max_text', '-')}{mark}"


def plot_table(table: dict[str, Any], path: Path) -> None:
    """L_max per task (x) and model/arm (colour), log scale: every seed (dots), our median (bar), the paper's
    median (black tick); a seed that did not learn is drawn at the bottom (×)."""
    plt = pyplot()
    tasks = list(dict.fromkeys(c["task"] for c in table["cells"]))
    series = list(dict.fromkeys((c["model"], c["arm"]) for c in table["cells"]))
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(tasks) + 2), 4))
    width = 0.8 / max(1, len(series))
    floor = 8
    for si, key in enumerate(series):
        color = f"C{si}"
        for c in table["cells"]:
            if (c["model"], c["arm"]) != key:
                continue
            x = tasks.index(c["task"]) - 0.4 + width * (si + 0.5)
            for rec in c["seeds"]:
                v = rec.get("l_max_value")
                if rec.get("status") == "done":
                    ax.plot(x, v if v else floor, "o" if rec.get("learned") else "x", color=color, ms=4, alpha=0.8)
            if c.get("median_value"):
                ax.hlines(c["median_value"], x - width / 2, x + width / 2, color=color, lw=2)
            paper = c.get("paper") or {}
            if paper.get("value"):
                ax.plot(x, paper["value"], marker="_", color="black", ms=14, mew=2)
        ax.plot([], [], "o", color=color, label=f"{key[0]} ({key[1]})")
    ax.plot([], [], marker="_", ls="", color="black", ms=14, mew=2, label="paper's median")
    ax.set_xticks(range(len(tasks)), tasks, rotation=30, fontsize=8)
    ax.set_yscale("log", base=2)
    ax.set_ylabel("L_max (≥: no failure up to the cap)")
    ax.set_title(f"{table['title']} ({table['scale']} scale)", fontsize=10)
    ax.legend(fontsize=7, loc="best")
    save_plot(fig, path)
