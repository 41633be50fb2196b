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
    """Write a table's figure as DIR/plot.png (atomically) and free it: cropped to everything drawn (a legend
    outside the axes, the last tick label), never clipped."""
    fig.tight_layout()
    save_figure(fig, path, fmt="png", bbox_inches="tight", pad_inches=0.1)


def legend_outside(ax: Any, handles: list[Any] | None = None, labels: list[str] | None = None) -> None:
    """The legend to the right of ``ax``, off the data."""
    args = () if handles is None else (handles, labels)
    ax.legend(*args, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)


#: the most columns a table.md table has (the documentation's page shows them without cutting)
MAX_COLUMNS = 7


def row(cells: list[Any]) -> str:
    """One Markdown table row."""
    return "| " + " | ".join(str(c) for c in cells) + " |"


def header(names: list[str]) -> list[str]:
    """A Markdown table's header and rule (at most :data:`MAX_COLUMNS` columns)."""
    assert len(names) <= MAX_COLUMNS, names
    return [row(names), "|" + "---|" * len(names)]


def table_markdown(table: dict[str, Any]) -> str:
    """L_max per cell beside the paper's (7 columns), then every seed, ours and the paper's, in a second table."""
    lines = [*heading(table), *header(["task", "model", "arm", "ours", "learned · exact", "paper", "wall s"])]
    for c in table["cells"]:
        paper = c.get("paper") or {}
        learned = c.get("learned", "-") + (f" · {c['exact']}" if c.get("exact") else "")
        lines.append(row([c["task"], c["model"], c["arm"], c.get("aggregate", "-"), learned,
                          paper.get("aggregate", "-"), c["seconds"]]))  # fmt: skip
    lines += ["", "Every seed († the extracted tables are exact):", ""]
    lines += header(["task", "model", "arm", "ours, per seed", "paper, per seed"])
    for c in table["cells"]:
        paper = c.get("paper") or {}
        lines.append(row([c["task"], c["model"], c["arm"], seeds_text(c["seeds"], _seed_text),
                          " ".join(paper.get("seeds", [])) or "-"]))  # fmt: skip
    lines += notes_block(table)
    return "\n".join(lines) + "\n"


def seeds_text(records: list[dict[str, Any]], text: Any) -> str:
    """The seeds of a cell, each once (``text(record)``); "not run (42–46)" where none finished."""
    if not any(r.get("status") == "done" for r in records):
        seeds = sorted({r["job"]["seed"] for r in records})
        span = f"{seeds[0]}–{seeds[-1]}" if len(seeds) > 2 and seeds == list(range(seeds[0], seeds[-1] + 1)) else (
            ", ".join(map(str, seeds)))  # fmt: skip
        return f"not run ({span})"
    return ", ".join(text(r) for r in records)


def _seed_text(rec: dict[str, Any]) -> str:
    seed = rec["job"]["seed"]
    if rec.get("status") != "done":
        return f"{seed}: {rec.get('status', 'not run')}"
    mark = "†" if rec.get("exact") else ""
    return f"{seed}: {rec.get('l_max_text', '-')}{mark}"


def plot_table(table: dict[str, Any], path: Path) -> None:
    """L_max per task (x) and model/arm (colour), log scale: every seed (dots), our median (bar), the paper's
    median (black tick; a black × at the bottom where the paper's cell did not learn); a seed that did not learn is
    drawn at the bottom (×). Every marker is in the legend, outside the data."""
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
            elif paper.get("aggregate") == "x":
                ax.plot(x, floor, marker="x", color="black", ms=7, mew=1.5)
        ax.plot([], [], "s", color=color, label=f"{key[0]} ({key[1]})")
    ax.plot([], [], "o", ls="", color="grey", ms=4, label="a seed (learned)")
    ax.plot([], [], "x", ls="", color="grey", ms=4, label=f"a seed that did not learn (at {floor})")
    ax.plot([], [], "-", color="grey", lw=2, label="our median")
    ax.plot([], [], marker="_", ls="", color="black", ms=14, mew=2, label="paper's median")
    ax.plot([], [], marker="x", ls="", color="black", ms=7, mew=1.5, label="paper: did not learn")
    ax.set_xticks(range(len(tasks)), tasks, rotation=30, fontsize=8)
    ax.set_yscale("log", base=2)
    ax.set_ylabel("L_max (≥: no failure up to the cap)")
    ax.set_title(f"{table['title']} ({table['scale']} scale)", fontsize=10)
    legend_outside(ax)
    save_plot(fig, path)
