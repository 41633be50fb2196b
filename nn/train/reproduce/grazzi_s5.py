"""``grazzi-s5``: Grazzi et al., "Unlocking state-tracking in linear RNNs through negative eigenvalues", §5.2 Fig. 4
(all seeds: App. E.2 Fig. 7): sequence accuracy against length on the word problem of S5 and its three simplified
setups, trained at length 32 (4 tokens per transition: 64, Fig. 4's caption).

Variants (App. E.2.1): ``S5`` (all 120 elements), ``swaps`` (identity and transpositions), ``s3`` (permutations of
at most 3 elements), ``tokens4`` (4 tokens per transition: the element then 3 special tokens, the target lagged by
3 tokens — the layout of the authors' data code, checked in tests/nn/test_tasks.py). Every job's settings come from
the ``grazzi-s5`` preset at the requested scale; the arm is the eigenvalue range (``0..1``, ``-1..1``). The paper's
figure is an image: its findings stand beside the cells in words (§5.2's text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ....fsa.errors import SpecError
from ....fsa.plotting import pyplot
from ..presets import get_preset
from .base import Job, Reproduction, cell_config, preset_job
from .grazzi_table3 import ARM_NAMES, ARMS, EIG, MODEL_NAMES
from .tables import TINY_NOTE, header, heading, legend_outside, notes_block, row, save_plot, seeds_text

PRESET = "grazzi-s5"
#: the table's variant → fsa2rnn task
TASKS = {"S5": "grazzi:S5", "swaps": "grazzi:S5:swaps", "s3": "grazzi:S5:s3", "tokens4": "grazzi:S5:tokens4"}
#: §5.2's findings per variant (Fig. 4 is an image; best of 3 seeds, 100 epochs of 1.6M words)
PAPER = {
    "swaps": "DeltaNet [−1, 1] with one layer learns the task fully; DeltaNet [0, 1] with 5 layers generalizes just "
    "slightly beyond the training length",
    "s3": "a substantial decrease for all models; DeltaNet [−1, 1] with 5 layers still reaches a good length "
    "generalization",
    "tokens4": "DeltaNet [−1, 1] with 5 layers extrapolates very well until about length 200 (50 group elements); "
    "one of its 3 seeds did not reach a good accuracy",
    "S5": "all models have sequence accuracy 0 before length 30",
}
MAMBA_FINDING = "Mamba performs poorly on every setup, with either eigenvalue range"


class GrazziS5(Reproduction):
    name = "grazzi-s5"
    title = "Grazzi et al., Fig. 4: sequence accuracy against length on S5"
    source = "Grazzi et al., negative eigenvalues, §5.2 Fig. 4 (best of 3 seeds; all seeds in Fig. 7); App. E.2.1"
    tasks = tuple(TASKS)
    models = ("deltanet", "mamba")
    tiny_tasks = ("swaps",)
    arms = ARMS
    seeds = (42, 43, 44)

    def jobs(self, scale: str, tasks: list[str], models: list[str], arms: list[str], seeds: list[int]) -> list[Job]:
        out: list[Job] = []
        for task in tasks:
            for model in models:
                for arm in arms:
                    self.config(scale, task, model, arm)  # the scale checked
                    out += preset_job(task, model, arm, seeds, PRESET, scale, self.flags(task, model, arm))
        return out

    def flags(self, task: str, model: str, arm: str) -> dict[str, Any]:
        """The ``fsa2rnn train --preset grazzi-s5`` flags of a cell: the variant's task, the model and its eigenvalue
        range; the training length of 4 tokens per transition (64) is the preset's, per task."""
        return {"task": TASKS[task], "model": model, "eig": EIG[arm]}

    def config(self, scale: str, task: str, model: str, arm: str) -> dict[str, Any]:
        """The cell's TrainConfig fields: those of ``fsa2rnn train TASK --preset grazzi-s5 --scale S``."""
        try:
            return cell_config(PRESET, scale, self.flags(task, model, arm))
        except SpecError as err:
            raise SpecError(f"{self.name} --scale {scale}: the {PRESET} preset has no such scale ({err})") from None

    def paper_cell(self, task: str, model: str, arm: str) -> dict[str, Any] | None:
        return {"aggregate": MAMBA_FINDING if model == "mamba" else PAPER[task]}

    def result(self, job: Job, summary: dict[str, Any], evaluation: dict[str, Any]) -> dict[str, Any]:
        return {
            "seed": job.seed,
            "train_length": job.config["train_length"],
            "layers": job.config["layers"],
            "lengths": evaluation.get("lengths"),
            "sequence_accuracy": evaluation.get("sequence_accuracy"),
            "token_accuracy": evaluation.get("token_accuracy"),
            "l_max": evaluation.get("l_max"),
            "l_max_capped": evaluation.get("l_max_capped"),
            "steps": summary.get("steps"),
            "final_loss": summary.get("final_loss"),
        }

    def cell(self, job: Job, results: list[dict[str, Any]]) -> dict[str, Any]:
        """Fig. 4 shows the best of the seeds: the seed with the highest mean sequence accuracy over the lengths."""
        best = max(results, key=lambda r: sum(r["sequence_accuracy"] or [0.0]) / max(1, len(r["sequence_accuracy"])))
        curve = " / ".join(f"{a:.3f}" for a in best["sequence_accuracy"])
        return {
            "aggregate": f"{curve} (seed {best['seed']})",
            "lengths": best["lengths"],
            "best_curve": best["sequence_accuracy"],
            "best_seed": best["seed"],
            "train_length": best["train_length"],
        }

    def notes(self, scale: str) -> list[str]:
        notes = [
            "Sequence accuracy: the fraction of words whose every position is right, at each evaluation length.",
            "4 tokens per transition trains at length 64 (Fig. 4's caption), its evaluation lengths doubled.",
            "The 'full matrix simple' baseline of Fig. 4 is not built here.",
            "The block around each layer is fsa2rnn's (pre-norm residual, GELU MLP), not the authors' model wrapper; "
            "words are drawn fresh at every step (the authors: a fixed set of 1.6M training words).",
        ]
        if scale in ("small", "medium"):
            try:
                s = get_preset(PRESET).settings(scale, None)
            except SpecError:
                return notes
            notes.append(
                f"{PRESET} at this scale: {s['layers']} block(s) of width {s['d_model']}, {s['steps']} steps of "
                f"{s['batch']} words, lr {s['lr']:g} (the authors: 1 to 5 layers of width 128, 4 heads, 312,500 "
                "steps of 512 words, lr 1e-4); S5 at this budget is not expected to be learned."
            )
        if scale == "tiny":
            notes.insert(0, TINY_NOTE)
        return notes

    def markdown(self, table: dict[str, Any]) -> str:
        """The best seed per cell beside §5.2's finding (7 columns), then every seed in a second table."""
        lines = [
            *heading(table),
            *header(["variant", "model · eigenvalues", "layers · trained at",
                     "ours: best seed, sequence accuracy per length", "L_max", "wall s", "the paper (§5.2)"]),
        ]  # fmt: skip
        for c in table["cells"]:
            paper = (c.get("paper") or {}).get("aggregate", "-")
            done = [r for r in c["seeds"] if r.get("status") == "done"]
            model = f"{MODEL_NAMES.get(c['model'], c['model'])} {ARM_NAMES.get(c['arm'], c['arm'])}"
            if not done:
                lines.append(row([c["task"], model, "-", seeds_text(c["seeds"], str), "-", "-", paper]))
                continue
            best = next((r for r in done if r["seed"] == c.get("best_seed")), done[0])
            lengths = " / ".join(str(n) for n in best["lengths"])
            lines.append(row([
                c["task"], model, f"{best['layers']} · {best['train_length'].split('..')[0]}",
                f"{c.get('aggregate', '-')} at {lengths}", _lmax(best), c["seconds"], paper,
            ]))  # fmt: skip
        lines += ["", "Every seed:", ""]
        lines += header(["variant", "model · eigenvalues", "seed", "lengths",
                         "sequence accuracy per length (token accuracy)", "L_max"])  # fmt: skip
        for c in table["cells"]:
            model = f"{MODEL_NAMES.get(c['model'], c['model'])} {ARM_NAMES.get(c['arm'], c['arm'])}"
            if not any(r.get("status") == "done" for r in c["seeds"]):
                lines.append(row([c["task"], model, seeds_text(c["seeds"], str), "-", "-", "-"]))
                continue
            for rec in c["seeds"]:
                if rec.get("status") != "done":
                    lines.append(row([c["task"], model, rec["job"]["seed"], "-", rec.get("status", "not run"), "-"]))
                    continue
                lines.append(row([
                    c["task"], model, rec["job"]["seed"], " / ".join(str(n) for n in rec["lengths"]),
                    " / ".join(f"{a:.3f}" for a in rec["sequence_accuracy"])
                    + " (" + " / ".join(f"{a:.3f}" for a in rec["token_accuracy"]) + ")",
                    _lmax(rec),
                ]))  # fmt: skip
        lines += notes_block(table)
        return "\n".join(lines) + "\n"

    def plot(self, table: dict[str, Any], path: Path) -> None:
        """Sequence accuracy against length, one panel per variant (Fig. 4): every seed (thin), the best (bold), each
        model and eigenvalue range with its own colour, marker and line style and nudged sideways so that lines
        that coincide (all at 0, or all at 1) stay visible; the training length dashed. Fig. 4 is an image whose
        values the paper does not state: its findings are in the table, not drawn."""
        plt = pyplot()

        tasks = list(dict.fromkeys(c["task"] for c in table["cells"]))
        series = list(dict.fromkeys((c["model"], c["arm"]) for c in table["cells"]))
        markers, styles = "osD^v<>", ["-", "--", "-.", ":"]
        fig, axes = plt.subplots(1, len(tasks), figsize=(max(6.0, 3.4 * len(tasks) + 0.5), 3.4), squeeze=False)
        for ax, task in zip(axes[0], tasks):
            here = [(c["model"], c["arm"]) for c in table["cells"] if c["task"] == task]
            for c in table["cells"]:
                if c["task"] != task:
                    continue
                k = series.index((c["model"], c["arm"]))
                color, marker, style = f"C{k}", markers[k % len(markers)], styles[k % len(styles)]
                # a sideways offset on the log axis among the panel's lines (none for a panel of one)
                nudge = 2 ** (0.06 * (here.index((c["model"], c["arm"])) - (len(here) - 1) / 2))
                label = f"{MODEL_NAMES.get(c['model'], c['model'])} {ARM_NAMES.get(c['arm'], c['arm'])}"
                for rec in c["seeds"]:
                    if rec.get("status") == "done":
                        xs = [n * nudge for n in rec["lengths"]]
                        ax.plot(xs, rec["sequence_accuracy"], style, color=color, lw=0.7, alpha=0.4)
                if c.get("best_curve"):
                    xs = [n * nudge for n in c["lengths"]]
                    ax.plot(xs, c["best_curve"], ls=style, marker=marker, color=color, lw=1.6, ms=4, mfc="none",
                            label=label)  # fmt: skip
                    ax.axvline(int(c["train_length"].split("..")[0]), color="grey", ls="--", lw=0.8)
            ax.set_xscale("log", base=2)
            ax.set_ylim(-0.05, 1.05)
            ax.set_xlabel("sequence length", fontsize=8)
            ax.set_title(task, fontsize=9)
        axes[0][0].set_ylabel("sequence accuracy")
        seen: dict[str, Any] = {}
        for ax in axes[0]:
            for handle, label in zip(*ax.get_legend_handles_labels()):
                seen.setdefault(label, handle)
        last = axes[0][-1]
        extra = [
            last.plot([], [], "-", color="grey", lw=0.7, alpha=0.6)[0],
            last.plot([], [], "--", color="grey", lw=0.8)[0],
        ]
        legend_outside(last, [*seen.values(), *extra], [*seen, "ours: every seed", "the training length"])
        fig.suptitle(f"{table['title']} ({table['scale']} scale; the paper's Fig. 4 states no values)", fontsize=9)
        save_plot(fig, path)


def _lmax(rec: dict[str, Any]) -> str:
    return f"{'≥' if rec.get('l_max_capped') else ''}{rec.get('l_max')}"
