"""The papers' tables on a GPU, in one short call within a device-time budget: Brandoit et al.'s Table 1 (one seed
per task of the anchored NFSM at the authors' settings, ``fsa2rnn reproduce brandoit-table1 --scale paper``: width
128, batch 256, their early stop after 40 exact validations, L_max by their protocol to 2^20, 2^15 for M11), then
Grazzi et al.'s Table 3 cells for parity and modular arithmetic without brackets (DeltaNet and Mamba, eigenvalues
[−1, 1] and [0, 1], one seed each, at the ``--scale paper`` settings of the presets ``grazzi-parity`` and
``grazzi-modarith``: App. E.1.1's 2 or 3 blocks of width 128, batch 1024, 100,000 steps, test 40..256). It prints
which cells it covered, which it skipped and why, and the figures of those it ran.

    python benchmarks/gpu_reproduce.py [--budget-s 420] [--seed 42] [--tasks Z2,S3,…] [--grazzi parity,modarith]
                                       [--grazzi-models deltanet,mamba] [--grazzi-steps N] [--m11 small|medium]
                                       [--out DIR] [--dry-run]

``--m11 SCALE`` adds, last, Table 1's M11 cell (the anchored NFSM, factored heads 4 × 11) at ``--scale SCALE`` of
``reproduce brandoit-table1``: its readout pinned (width ≥ 44: 48 at small, 64 at medium). One ``medium`` seed is
projected at about 2.4–3 h on the project's shared 2-core CPU (1.0 s per step × 5000 steps and the L_max search to
2^17; docs/reproductions.md), so it is meant for a machine with a GPU; it starts only while the budget has time left
(and, once started, runs to its end).

Brandoit cells run cheapest first; one is started only while the budget has room for it (the estimate: the longest
run so far). A Grazzi cell is first timed on ``--probe-steps`` steps (one probe per task and model, bf16 on the
device); its projected time (the probe's seconds per step, start-up included, × its steps; evaluation not counted)
decides whether it fits what is left of the budget; a cell that does not fit is reported with its projection. At
the paper's 100,000 steps a cell fits 8 minutes only below 4.8 ms per step (not measured: no GPU run has been
made), so expect projections only; ``--grazzi-steps N`` runs the cells cut to N steps (the schedule scaled to N,
the table marks them). ``--dry-run`` prints the plan (every cell and its settings) and exits
without a device.
Without a CUDA device it prints "no GPU" and exits 0 (``--device cpu`` runs it on the CPU, to check the script).
Never run by the test suite (only its ``--dry-run``).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

ORDER = ("Z2", "DFF5", "FF", "S3", "Z16", "S4", "A5", "M11")
GRAZZI_TASKS = ("parity", "modarith")  # the presets grazzi-parity and grazzi-modarith
GRAZZI_MODELS = ("deltanet", "mamba")
EIGS = ("-1,1", "0,1")
#: Table 3 of Grazzi et al. (best of 3 seeds), scaled accuracy on 40..256
PAPER = {
    ("parity", "mamba", "0,1"): 0.000,
    ("parity", "mamba", "-1,1"): 1.000,
    ("parity", "deltanet", "0,1"): 0.017,
    ("parity", "deltanet", "-1,1"): 1.000,
    ("modarith", "mamba", "0,1"): 0.095,
    ("modarith", "mamba", "-1,1"): 0.241,
    ("modarith", "deltanet", "0,1"): 0.314,
    ("modarith", "deltanet", "-1,1"): 0.971,
}
#: the settings the plan prints for a Grazzi cell
SHOWN = ("layers", "d_model", "heads", "head_dim", "state_size", "short_conv", "delta_form", "labels", "batch",
         "steps", "lr", "weight_decay", "clip", "warmup", "min_lr", "train_length", "eval_range")  # fmt: skip


def grazzi_cells(tasks: list[str], models: list[str]) -> list[tuple[str, str, str]]:
    """Every (task, model, eigenvalue range) asked for, in the order they run."""
    return [(t, m, e) for t in GRAZZI_TASKS if t in tasks for m in GRAZZI_MODELS if m in models for e in EIGS]


def grazzi_config(cell: tuple[str, str, str], seed: int, steps: int | None, device: str = "cuda") -> Any:
    """The TrainConfig of a Grazzi cell: the preset at ``--scale paper``, ``steps`` cut if given."""
    from fsa2rnn.nn.train.run import preset_config

    task, model, eig = cell
    flags: dict[str, Any] = dict(model=model, eig=eig, seed=seed, device=device, quiet=True)
    if steps is not None:
        flags["steps"] = steps
    return preset_config(f"grazzi-{task}", "paper", **flags)


def plan(args: argparse.Namespace) -> dict[str, Any]:
    """What the call would run: the Brandoit tasks, the Grazzi cells with their settings, the budget."""
    from fsa2rnn.nn.train.presets import ARCH_FLAGS

    cells = grazzi_cells(_csv(args.grazzi), _csv(args.grazzi_models))
    rows = []
    for cell in cells:
        cfg = grazzi_config(cell, args.seed, args.grazzi_steps, device="cpu")
        shown = {k: getattr(cfg, k) for k in SHOWN if k not in ARCH_FLAGS or cfg.model in ARCH_FLAGS[k]}
        rows.append({"cell": _cell_name(cell), "paper": PAPER[cell], **shown})
    return {
        "budget_s": args.budget_s,
        "seed": args.seed,
        "brandoit": [t for t in ORDER if t in _csv(args.tasks)],
        "grazzi": rows,
        "grazzi_steps": args.grazzi_steps,
        "probe_steps": args.probe_steps,
        "m11": m11_settings(args.m11) if args.m11 else None,
    }


#: the M11 cell's settings the plan prints
M11_SHOWN = ("d_model", "head_family", "batch", "steps", "lr", "early_stop", "cap")


def m11_settings(scale: str) -> dict[str, Any]:
    """The M11 anchored NFSM cell of brandoit-table1 at ``scale`` (the settings the plan prints)."""
    from fsa2rnn.nn.train.reproduce import get_reproduction

    cfg = get_reproduction("brandoit-table1").config(scale, "M11", "nfsm", "anchored")
    return {"scale": scale, **{k: cfg.get(k) for k in M11_SHOWN}}


def plan_text(p: dict[str, Any]) -> str:
    """The plan as the dry run prints it: one line per cell (a setting left to the layer's or task's default:
    ``default``)."""
    lines = [f"budget {p['budget_s']:g} s, seed {p['seed']}"]
    lines.append(f"Brandoit Table 1, anchored NFSM at --scale paper: {', '.join(p['brandoit']) or 'none'}")
    steps = "paper steps" if p["grazzi_steps"] is None else f"cut to {p['grazzi_steps']} steps"
    lines.append(f"Grazzi Table 3 at --scale paper ({steps}; probe {p['probe_steps']} steps per task and model):")
    for row in p["grazzi"]:
        shown = ", ".join(f"{k} {'default' if row[k] is None else row[k]}" for k in SHOWN if k in row)
        lines.append(f"  {row['cell']} (paper {row['paper']:.3f}): {shown}")
    if p.get("m11"):
        m = p["m11"]
        lines.append(f"Brandoit M11, anchored NFSM at --scale {m['scale']}: "
                     + ", ".join(f"{k} {m[k]}" for k in M11_SHOWN))  # fmt: skip
    return "\n".join(lines)


def _csv(text: str) -> list[str]:
    return [x for x in text.split(",") if x]


def _cell_name(cell: tuple[str, str, str]) -> str:
    task, model, eig = cell
    return f"{task} {model} [{eig.replace(',', ', ')}]"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget-s", type=float, default=420.0, help="device seconds to spend (default 420)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--tasks", default=",".join(ORDER), help="Brandoit tasks ('' for none)")
    ap.add_argument("--grazzi", default=",".join(GRAZZI_TASKS), help="Grazzi tasks: parity,modarith ('' for none)")
    ap.add_argument("--grazzi-models", default=",".join(GRAZZI_MODELS))
    ap.add_argument("--grazzi-steps", type=int, default=None, help="cut the Grazzi cells to N steps (default: 100k)")
    ap.add_argument("--probe-steps", type=int, default=30, help="steps that time a Grazzi cell (default 30)")
    ap.add_argument("--m11", default=None, choices=("small", "medium"), help="add M11's cell at this scale, last")
    ap.add_argument("--out", default=None, help="the run directory (default: a temporary one)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and exit (no device needed)")
    ap.add_argument("--device", default="cuda", help="cuda (default); cpu only to check the script itself")
    return ap


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    for name in _csv(args.grazzi):
        if name not in GRAZZI_TASKS:
            raise SystemExit(f"error: --grazzi: unknown task {name!r} (choose from {', '.join(GRAZZI_TASKS)})")
    for name in _csv(args.grazzi_models):
        if name not in GRAZZI_MODELS:
            raise SystemExit(f"error: --grazzi-models: unknown {name!r} (choose from {', '.join(GRAZZI_MODELS)})")
    if (args.grazzi_steps is not None and args.grazzi_steps < 1) or args.probe_steps < 1:
        raise SystemExit("error: --grazzi-steps and --probe-steps must be ≥ 1")
    if args.dry_run:
        print(plan_text(plan(args)))
        return
    import torch

    if args.device == "cuda":
        if not torch.cuda.is_available():
            print("no GPU")
            return
        print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        t0 = time.perf_counter()
        covered, skipped = _brandoit(args, out, t0)
        g_covered, g_skipped = _grazzi(args, out, t0)
        m_covered, m_skipped = _m11(args, out, t0)
        covered, skipped = covered + m_covered, skipped + m_skipped
        print(json.dumps({"covered": covered + g_covered, "not_covered": skipped + g_skipped,
                          "seconds": round(time.perf_counter() - t0, 1)}))  # fmt: skip


def _brandoit(args: argparse.Namespace, out: Path, t0: float) -> tuple[list[str], list[str]]:
    """Table 1's cells, cheapest first, while the budget has room (the estimate: the longest run so far)."""
    from fsa2rnn.nn.train.reproduce import get_reproduction
    from fsa2rnn.nn.train.reproduce.runner import build_table, run_job

    tasks = [t for t in ORDER if t in _csv(args.tasks)]
    if not tasks:
        return [], []
    rep = get_reproduction("brandoit-table1")
    longest, jobs, records, skipped = 0.0, [], [], []
    for task in tasks:
        if time.perf_counter() - t0 + longest > args.budget_s:
            skipped.append(f"brandoit {task} (budget)")
            continue
        (job,) = rep.jobs("paper", [task], ["nfsm"], ["anchored"], [args.seed])
        job.config["device"] = args.device
        start = time.perf_counter()
        rec = run_job(rep, job, out / "brandoit")
        longest = max(longest, time.perf_counter() - start)
        jobs.append(job)
        records.append(rec)
        print(f"{task}: L_max {rec.get('l_max_text')}, exact {rec.get('exact')}, {rec.get('seconds')} s", flush=True)
    if jobs:
        print(rep.markdown(build_table(rep, "paper", jobs, records)))
    return [f"brandoit {j.task}" for j in jobs], skipped


def _m11(args: argparse.Namespace, out: Path, t0: float) -> tuple[list[str], list[str]]:
    """M11's anchored NFSM cell at ``--m11 SCALE``, when asked and while the budget has time left."""
    if not args.m11:
        return [], []
    name = f"brandoit M11 ({args.m11})"
    if time.perf_counter() - t0 > args.budget_s:
        return [], [f"{name} (budget)"]
    from fsa2rnn.nn.train.reproduce import get_reproduction
    from fsa2rnn.nn.train.reproduce.runner import run_job

    rep = get_reproduction("brandoit-table1")
    (job,) = rep.jobs(args.m11, ["M11"], ["nfsm"], ["anchored"], [args.seed])
    job.config["device"] = args.device
    rec = run_job(rep, job, out / f"brandoit-m11-{args.m11}")
    print(f"M11 ({args.m11}): L_max {rec.get('l_max_text')}, exact {rec.get('exact')}, {rec.get('seconds')} s",
          flush=True)  # fmt: skip
    return [name], []


def _grazzi(args: argparse.Namespace, out: Path, t0: float) -> tuple[list[str], list[str]]:
    """Table 3's cells: each timed on a probe, run when its projection fits what is left of the budget."""
    from fsa2rnn.nn.train.trainer import train

    per_step: dict[tuple[str, str], float] = {}
    covered, skipped, lines = [], [], []
    for cell in grazzi_cells(_csv(args.grazzi), _csv(args.grazzi_models)):
        name = _cell_name(cell)
        cfg = grazzi_config(cell, args.seed, args.grazzi_steps, args.device)
        key = cell[:2]
        if key not in per_step:  # the probe: the cell's settings cut to a few steps, a light evaluation
            if time.perf_counter() - t0 > args.budget_s:
                skipped.append(f"{name} (budget spent before its probe)")
                continue
            probe = replace(grazzi_config(cell, args.seed, args.probe_steps, args.device), lmax=False, samples=64,
                            eval_range=None, eval_lengths=[40], val_every=args.probe_steps)  # fmt: skip
            with tempfile.TemporaryDirectory() as tmp:  # always a fresh run: a finished one would only re-evaluate
                start = time.perf_counter()
                train(probe, Path(tmp) / "probe")
                per_step[key] = (time.perf_counter() - start) / args.probe_steps
        projected = per_step[key] * cfg.steps
        left = args.budget_s - (time.perf_counter() - t0)
        if projected > left:
            skipped.append(f"{name} (projected {projected:.0f} s for {cfg.steps} steps, {max(left, 0):.0f} s left)")
            continue
        start = time.perf_counter()
        summary = train(cfg, out / "grazzi" / f"{cell[0]}-{cell[1]}-{cell[2].replace(',', '_')}", resume=True)
        seconds = time.perf_counter() - start
        scaled = (summary or {}).get("range", {}).get("scaled_accuracy")
        cut = "" if args.grazzi_steps is None else f" (cut to {cfg.steps} steps)"
        lines.append(f"| {name}{cut} | {_fmt(scaled)} | {PAPER[cell]:.3f} | {seconds:.0f} |")
        covered.append(name)
        print(f"{name}: scaled accuracy on 40..256 {_fmt(scaled)}, {seconds:.0f} s", flush=True)
    if lines:
        print("| cell | scaled accuracy, 40..256 | paper (best of 3) | seconds |\n|---|---|---|---|")
        print("\n".join(lines))
    return covered, skipped


def _fmt(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


if __name__ == "__main__":
    main()
