"""``dlr-atomic``: Gupta et al., "Simplifying and understanding state space models with diagonal linear RNNs", §3.3
(Tables 1 and 2): R² of single DLR, DSS_exp and attention layers on the atomic tasks (``dlr:*``), and of DLR,
DSS_exp and DLR-prod on Shift at a long length.

The protocol (§3.3, §A.6 as far as fsa2rnn's copy of the paper has it): one unidirectional layer and no feed-forward
layer; the attention block is the DLR layer with its DLR replaced by 4-head attention with rotary positions (layer
``attention``); MSE loss, a fresh batch every step, every model the same number of steps; every input carries the
position features (cos 2πi/T, sin 2πi/T). The score is R² = 1 − MSE / MSE(mean target), the mean over the whole
evaluation draw (metrics.regression_scores), at the training length. The runs' settings are the ``dlr`` preset's at
the scale (nn/train/presets.py), the long Shift's those of the ``dlr-long`` preset (its length and batch).

fsa2rnn's copy of the paper has no table values, only its findings in words, which the table places beside each
task (:data:`FINDINGS`).
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from ....fsa.plotting import pyplot
from ...tasks.dlr import DLR_TASKS
from .base import Job, Reproduction, cell_config, preset_job
from .tables import TINY_NOTE, header, heading, legend_outside, notes_block, row, save_plot, seeds_text

#: the long-Shift row (Table 2) and the models run on it
LONG_SHIFT = "shift-long"
LONG_MODELS = ("dlr", "dss-exp", "dlr-prod")
#: Table 1's models (one layer each)
ATOMIC_MODELS = ("dlr", "dss-exp", "attention")
MODEL_NAMES = {"dlr": "DLR", "dss-exp": "DSS_exp", "attention": "Attention", "dlr-prod": "DLR-prod"}

_CONTEXT = "not solved by DLR or DSS_exp, nor by a deeper DLR (context-dependent); SSMs do not subsume attention"
#: the paper's findings per task, in words (§3.1, §3.3; fsa2rnn's copy has no table values)
FINDINGS = {
    "shift": "solved: high R² for DLR and DSS_exp (C = 8 one-hot kernels suffice); DLR ≥ DSS_exp",
    "cumsum": "no statement; a fixed convolution (the all-1's kernel), within a DLR's reach",
    "cummax": "no statement; not a convolution with a fixed kernel",
    "reverse": "no statement; a fixed, context-independent map",
    "sort": _CONTEXT,
    "select": _CONTEXT,
    "mips": _CONTEXT,
    "context_shift": _CONTEXT,
    "solve": _CONTEXT,
    LONG_SHIFT: "DLR excellent to 16K, degrading beyond; DSS_exp high to 16K; DLR-prod nearly perfect to 1M",
}


class DLRAtomic(Reproduction):
    name = "dlr-atomic"
    title = "Gupta et al., DLR atomic tasks: R²"
    source = "Gupta et al., diagonal linear RNNs, §3.3 (Tables 1 and 2: atomic tasks, long Shift)"
    tasks = (*DLR_TASKS, LONG_SHIFT)
    models = ("dlr", "dss-exp", "attention", "dlr-prod")
    tiny_tasks = ("shift", LONG_SHIFT)
    seeds = (42, 43, 44, 45, 46)
    scales = ("tiny", "small", "paper")

    def jobs(self, scale: str, tasks: list[str], models: list[str], arms: list[str], seeds: list[int]) -> list[Job]:
        """Seed by seed over the whole table, so that an interrupted regeneration leaves whole tables of fewer
        seeds."""
        cells = [
            (task, model, arm)
            for task in tasks
            for model in models
            if model in (LONG_MODELS if task == LONG_SHIFT else ATOMIC_MODELS)
            for arm in arms
        ]
        return [job for s in seeds for task, model, arm in cells for job in self._jobs(scale, task, model, arm, s)]

    def _jobs(self, scale: str, task: str, model: str, arm: str, seed: int) -> list[Job]:
        preset, flags = self.preset_flags(task, model)
        return preset_job(task, model, arm, [seed], preset, scale, flags)

    def preset_flags(self, task: str, model: str) -> tuple[str, dict[str, Any]]:
        """A cell's preset (``dlr``; ``dlr-long`` for the long Shift) and ``fsa2rnn train`` flags."""
        if task == LONG_SHIFT:
            return "dlr-long", {"task": "dlr:shift", "model": model}
        return "dlr", {"task": f"dlr:{task}", "model": model}

    def config(self, scale: str, task: str, model: str) -> dict[str, Any]:
        """The run's TrainConfig fields: those of ``fsa2rnn train --preset dlr`` (``dlr-long``) at ``scale``."""
        return cell_config(*self.preset_flags(task, model)[:1], scale, self.preset_flags(task, model)[1])

    def paper_cell(self, task: str, model: str, arm: str) -> dict[str, Any] | None:
        return {"finding": FINDINGS[task]}

    def result(self, job: Job, summary: dict[str, Any], evaluation: dict[str, Any]) -> dict[str, Any]:
        (score,) = evaluation["regression"][:1]
        return {
            "r2": score["r2"],
            "mse": score["mse"],
            "length": score["length"],
            "steps": summary.get("steps"),
        }

    def cell(self, job: Job, results: list[dict[str, Any]]) -> dict[str, Any]:
        r2 = [r["r2"] for r in results]
        med = statistics.median(r2)
        return {"aggregate": f"{med:.3f}", "median_r2": med, "length": results[0]["length"]}

    def notes(self, scale: str) -> list[str]:
        c, long = self.config(scale, "shift", "dlr"), self.config(scale, LONG_SHIFT, "dlr")
        notes = [
            f"Scale {scale} (the dlr preset): width {c['d_model']}, state size {c.get('state_size', 64)}, length "
            f"{c['train_length'].split('..')[0]}, batch {c['batch']}, {c['steps']} steps, AdamW lr {c['lr']} "
            f"(warmup {c['warmup']}, cosine); long Shift at length {long['train_length'].split('..')[0]}, batch "
            f"{long['batch']}. The paper trains at lengths 512 and 4096 (Table 1) and up to 2^20 (Table 2); its "
            "steps are not in our copy (the authors' README: batch 16 at 4096, 64 at 512; lr 1e-4 for the DLR, "
            "1e-3 for DSS_exp and attention).",
            f"R² is pooled over one evaluation draw of {c.get('samples', 512)} inputs at the training length; the "
            "paper averages each evaluation step's R² over a fixed number of steps.",
            "The cell is the median over the seeds; every seed is listed.",
            "The network around the one layer is fsa2rnn's SequenceModel: a linear input projection, the pre-norm "
            "residual block (RMSNorm), a final norm and a linear readout per position.",
            "Not run: the paper's easier variants (Select and Solve with fixed positions / a fixed matrix), the "
            "deeper DLR stack and the attention block with feed-forward layers (§A.5).",
            "DSS_exp is the DLR layer with the DSS paper's exp parametrization; it shares the DLR's out_proj(GELU(·)) "
            "and has no D skip.",
            f"Initialisation (--dlr-init {c.get('dlr_init') or 'default'}): "
            + (
                "the authors' for the atomic tasks (their README): the DLR with Δ = 1e-5, so |λ| ≈ 1 (frequencies "
                "2πn/N, w ~ N(0, 1/N²)); DSS_exp with λ_n = −1/2 + iπn and Δ ∈ [1e-4, 1e-2]; state size N = L at "
                "the training length (not at long Shift)."
                if c.get("dlr_init") == "atomic"
                else "the layers' defaults: the DLR paper's locality-biased decay, DSS's HiPPO-skew frequencies with "
                "Δ ∈ [1e-3, 1e-1]."
            ),
        ]
        if scale == "tiny":
            notes.insert(0, TINY_NOTE)
        return notes

    # ------------------------------------------------------------------ the table and its plot
    def markdown(self, table: dict[str, Any]) -> str:
        """R² per task (rows) and model (columns): the median over the seeds, the paper's finding beside (at most 7
        columns); every seed in a second table."""
        cells = {(c["task"], c["model"]): c for c in table["cells"]}
        tasks = list(dict.fromkeys(c["task"] for c in table["cells"]))
        models = [m for m in self.models if any(m == c["model"] for c in table["cells"])]
        lines = [
            *heading(table),
            "R²: the median over the seeds (every seed below); – not in the table.",
            "",
            *header(["task (length)", *(MODEL_NAMES[m] for m in models), "the paper (in words)", "wall s"]),
        ]
        for task in tasks:
            row_cells = [cells.get((task, m)) for m in models]
            present = [c for c in row_cells if c]
            length = next((c["length"] for c in present if c.get("length")), None)
            seconds = round(sum(c["seconds"] for c in present), 1)
            finding = (present[0].get("paper") or {}).get("finding", "-") if present else "-"
            name = task if length is None else f"{task} ({length})"
            lines.append(row([name, *(_median_text(c) for c in row_cells), finding, seconds]))
        lines += ["", "Every seed (seed: R²):", "", *header(["task", "model", "seed: R²"])]
        for c in table["cells"]:
            lines.append(row([c["task"], MODEL_NAMES.get(c["model"], c["model"]), _seeds(c)]))
        lines += notes_block(table)
        return "\n".join(lines) + "\n"

    def plot(self, table: dict[str, Any], path: Path) -> None:
        """R² per task (x) and model (colour): every seed (a dot), the median (a bar); R² below −0.5 drawn at −0.5."""
        plt = pyplot()

        tasks = list(dict.fromkeys(c["task"] for c in table["cells"]))
        models = [m for m in self.models if any(m == c["model"] for c in table["cells"])]
        floor = -0.5
        fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(tasks) + 2), 4))
        width = 0.8 / max(1, len(models))
        for mi, model in enumerate(models):
            color = f"C{mi}"
            for c in table["cells"]:
                if c["model"] != model:
                    continue
                x = tasks.index(c["task"]) - 0.4 + width * (mi + 0.5)
                for rec in c["seeds"]:
                    if rec.get("status") == "done":
                        ax.plot(x, max(rec["r2"], floor), "o", color=color, ms=4, alpha=0.8)
                if c.get("median_r2") is not None:
                    ax.hlines(max(c["median_r2"], floor), x - width / 2, x + width / 2, color=color, lw=2)
            ax.plot([], [], "o", color=color, label=MODEL_NAMES[model])
        ax.axhline(1.0, color="black", lw=0.5, ls=":")
        ax.axhline(0.0, color="black", lw=0.5)
        ax.set_xticks(range(len(tasks)), tasks, rotation=30, fontsize=8)
        scores = [r["r2"] for c in table["cells"] for r in c["seeds"] if r.get("status") == "done"]
        ax.set_ylim(max(floor, min([0.0, *scores])) - 0.05, 1.05)
        ax.set_ylabel("R² (below −0.5: drawn at −0.5)")
        ax.set_title(f"{table['title']} ({table['scale']} scale; the paper states its findings in words)", fontsize=10)
        ax.plot([], [], "o", ls="", color="grey", ms=4, label="a seed")
        ax.plot([], [], "-", color="grey", lw=2, label="the median")
        legend_outside(ax)
        save_plot(fig, path)


def _median_text(cell: dict[str, Any] | None) -> str:
    return "–" if cell is None else f"**{cell.get('aggregate', 'not run')}**"


def _seeds(cell: dict[str, Any]) -> str:
    return seeds_text(cell["seeds"], lambda r: f"{r['job']['seed']}: {r['r2']:.3f}" if r.get("status") == "done"
                      else f"{r['job']['seed']}: {r.get('status', 'not run')}")  # fmt: skip
