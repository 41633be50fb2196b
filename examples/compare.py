"""Compiled versus trained: train DeltaNet [−1, 1] and NFSM models with `fsa2rnn train`'s trainer, extract the
automaton each implements, and compare it with the target and with the compiled model of the same automaton
(`fsa2rnn compare`).

1. Parity and the flip-flop, DeltaNet (β ∈ [0, 2]) and NFSM: extraction verdict, trained eigenvalues of A(x) beside
   the compiled ones, L_max per dtype; the DeltaNets' spectra are drawn to OUT/spectra.png.
2. NFSMs on brandoit:FF, brandoit:S3 and brandoit:Z16:gen (the brandoit preset, small scale, no MLP; Z16 with the
   cyclic recipe Z16_FLAGS), five seeds each: every seed that reaches sequence accuracy 1.0 extracts to a machine
   isomorphic to the target.
3. Training from compiled weights (`--init-from`): the compiled S5 model stays at sequence accuracy 1.0 from step 0
   and after 100 steps; the same weights with added noise (σ = --noise) are trained back to 1.0.

    python examples/compare.py            # about 13 minutes on one thread of a 2-core CPU
    python examples/compare.py --quick    # the test suite's run: part 1 at toy size
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from fsa2rnn.nn.train import TrainConfig, load_run, train
from fsa2rnn.realize import compare, plot_spectra

#: the suite's toy runs (part 1 with --quick): every position judged (--labels dense), the bare DeltaNet
TOY = {
    "deltanet": dict(
        eig="-1,1", d_model=8, heads=1, head_dim=4, mlp_ratio=0.0, train_length="2..16", steps=200, lr=1e-2, batch=32,
        labels="dense", delta_form="plain",
    ),
    "nfsm": dict(d_model=16, train_length="2..10", steps=200, lr=1e-2, batch=64, labels="dense"),
}
FLAGS = {
    ("grazzi:parity", "deltanet"): TOY["deltanet"],
    ("grazzi:parity", "nfsm"): TOY["nfsm"],
    ("brandoit:FF", "deltanet"): dict(eig="-1,1", d_model=16, heads=1, head_dim=8, train_length="3..20", steps=800,
                                      lr=3e-3, batch=32, delta_form="plain"),
    ("brandoit:FF", "nfsm"): None,  # the brandoit preset, as in part 2
}  # fmt: skip
#: part 2's NFSM recipe (the free arm with fsa2rnn's earlier small-scale settings: heads with 4× the compiler's
#: indices, no Gumbel noise, the first-error weighting; docs/reproductions.md has the authors' recipe)
PART2 = dict(layers=1, d_model=32, train_length="64..64", batch=32, steps=400, lr=1e-2, weight_decay=0.0, clip=1.0,
             warmup=0.05, early_stop=3, cap=2**16, threshold=1.0, loss="first-error", nfsm_heads="auto:4",
             gumbel=0.0)  # fmt: skip
QUIET = dict(progress=False, lmax=False, samples=128, val_every=50, checkpoint_every=1000)
#: part 2's recipe for Z16 on top of PART2: one head of 32 indices whose
#: tables start as the identity, a readout drawn at unit scale, constant lr 3e-3, no clipping
Z16_FLAGS = dict(nfsm_heads="auto:2", nfsm_identity=1.0, nfsm_readout_std=1.0, clip=0.0, warmup=0.0, lr=3e-3,
                 min_lr=3e-3, steps=1000, early_stop=1)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="part 1 at toy size (the test suite's run)")
    ap.add_argument("--out", default="out/compare", help="directory of the runs and the picture")
    ap.add_argument("--seeds", default="42,43,44,45,46", help="seeds of part 2")
    ap.add_argument("--noise", type=float, default=0.003, help="σ of the noise added to the compiled S5 weights")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (the machine is shared)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    out = Path(args.out)
    results: dict = {"part1": pairs(out, args.quick)}
    if not args.quick:
        results["part2"] = brandoit(out, [int(s) for s in args.seeds.split(",")])
        results["part3"] = init_from(out, args.noise)
    (out / "results.json").write_text(json.dumps(results, indent=1, default=float))


def _train(out: Path, task: str, model: str, seed: int, flags: dict | None, preset: dict | None = None):
    """Train (or reuse) a run; ``flags`` None: PART2 without MLP, with ``preset``'s flags on top."""
    run = out / f"{task.replace(':', '_')}-{model}-seed{seed}"
    if flags is None:
        cfg = TrainConfig(task=task, model=model, seed=seed, **{**PART2, "mlp_ratio": 0.0, **QUIET, **(preset or {})})
    else:
        cfg = TrainConfig(task=task, model=model, seed=seed, **{**QUIET, **flags})
    return run, train(cfg, run, resume=True)


def pairs(out: Path, quick: bool) -> list[dict]:
    """Part 1: DeltaNet and NFSM on parity and the flip-flop, each compared with the compiled model."""
    rows, spectra = [], []
    todo = [("grazzi:parity", "deltanet"), ("grazzi:parity", "nfsm")] if quick else list(FLAGS)
    print("== 1. trained vs compiled: parity and the flip-flop")
    for task, model in todo:
        run, res = _train(out, task, model, 0, TOY[model] if quick else FLAGS[(task, model)])
        net, t, cfg = load_run(run)
        length = cfg.train_lengths(t)[1]
        cap = 256 if quick else 4096
        r = compare(net, t, length=length, words=64 if quick else 256, cap=cap, n_words=64 if quick else 256)
        rows.append(_print_pair(task, model, res, r))
        name = task.split(":")[1]
        spectra += [{**row, "symbol": f"{name}: {row['symbol']}"} for row in r["spectra"]]
    plot_spectra(spectra, out / "spectra.png", title="A(x) of trained DeltaNets (dots) and compiled models (circles)")
    return rows


def _print_pair(task: str, model: str, res: dict, r: dict) -> dict:
    ex = r["extracted"]
    seq = res["eval"]["sequence_accuracy"][0]
    print(f"{task} · {model}: sequence accuracy {seq:.3f} at the training length; extracted {ex['n_states']} states "
          f"({'sample-based' if ex['sample_based'] else 'exact tables'}), relation: {ex['relation']}")  # fmt: skip
    ag = ex["agreement"]
    print(f"  agreement with the model on held-out words: sequence {ag['sequence'][0]:.3f} at length "
          f"{ag['lengths'][0]}, {ag['sequence'][1]:.3f} at {ag['lengths'][1]}")  # fmt: skip
    if ex.get("witness"):
        print(f"  witness: {ex['witness']['statement']}")
    for row in r["spectra"]:
        if row["compiled"] is None or row["layer"] != 1:
            continue
        pairs = ", ".join(f"{_z(m)} → {_z(c)}" for m, c in zip(row["matched"], row["compiled"]) if m is not None)
        extra = [_z(e) for e in row.get("unpaired") or [] if abs(complex(*e) - 1) > 1e-3]
        print(f"  A({row['symbol']}) layer 1 head {row['head']}: trained → compiled eigenvalue {pairs}"
              + (f"; unpaired trained {', '.join(extra)}" if extra else "")
              + f" (distance {row['distance']:.4f}, core {row['core_distance']:.4f})")  # fmt: skip
    m = r["monoid"]
    size = m["extracted"]["size"]
    print(f"  monoid: extracted {'over the limit' if size is None else size}, target {m['target']['size']} elements")
    if r.get("tables"):
        print(f"  NFSM tables equal to the compiled ones up to relabeling: {r['tables']['equal_up_to_relabeling']}")
    lm = r.get("l_max")
    if lm:
        cells = []
        for dt, tr, co in zip(lm["dtypes"], lm["trained"], lm["compiled"] or [None] * len(lm["dtypes"])):
            cells.append(f"{dt} {_lmax(tr, lm['cap'])} / {_lmax(co, lm['cap'])}")
        print(f"  L_max trained / compiled: {'; '.join(cells)}")
    return {"task": task, "model": model, "sequence_accuracy": seq, "relation": ex["relation"],
            "n_states": ex["n_states"], "spectra": r["spectra"], "l_max": lm}  # fmt: skip


def _z(p: list[float]) -> str:
    return f"{p[0]:+.4f}" if abs(p[1]) < 5e-5 else f"{p[0]:+.3f}{p[1]:+.3f}i"


def _lmax(e: dict | None, cap: int) -> str:
    if e is None:
        return "-"
    return f"≥ {cap}" if e.get("l_max") is None and e.get("capped") else str(e.get("l_max"))


def brandoit(out: Path, seeds: list[int]) -> list[dict]:
    """Part 2: NFSMs on FF, S3 and Z16 (brandoit preset, small scale); extraction of every seed."""
    from fsa2rnn.realize import extract, relate, task_target

    print("\n== 2. NFSMs on brandoit:FF, brandoit:S3, brandoit:Z16:gen: extraction of every seed")
    rows = []
    for task in ("brandoit:FF", "brandoit:S3", "brandoit:Z16:gen"):
        for seed in seeds:
            run, res = _train(out, task, "nfsm", seed, None, Z16_FLAGS if task == "brandoit:Z16:gen" else None)
            net, t, _ = load_run(run)
            seq = res["eval"]["sequence_accuracy"][0]
            ex = extract(net, symbols=t.automaton.symbols, classes=t.classes, length=64, words=128)
            rel = relate(ex.machine, task_target(t), predict=ex.predict)["relation"]
            rows.append({"task": task, "seed": seed, "sequence_accuracy": seq, "n_states": ex.minimal.n_states,
                         "relation": rel})  # fmt: skip
            print(f"{task:13} seed {seed}: sequence accuracy {seq:.3f} at 64, extracted {ex.minimal.n_states} "
                  f"states, {rel}")  # fmt: skip
    solved = [r for r in rows if r["sequence_accuracy"] == 1.0]
    iso = sum(r["relation"] == "isomorphic" for r in solved)
    print(f"seeds at sequence accuracy 1.0: {len(solved)}/{len(rows)}; of these isomorphic to the target: {iso}")
    return rows


def init_from(out: Path, noise: float) -> dict:
    """Part 3: training from the compiled S5 model, as is and with noise."""
    from fsa2rnn.compiler import compile_householder
    from fsa2rnn.fsa import resolve_spec
    from fsa2rnn.nn import SequenceModel, accuracy_at_lengths
    from fsa2rnn.nn.tasks import get_task
    from fsa2rnn.nn.train import init_architecture, init_model_config, load_init

    print("\n== 3. training from the compiled S5 model (--init-from)")
    model_file = out / "S5.safetensors"
    out.mkdir(parents=True, exist_ok=True)
    compile_householder(resolve_spec("S5")).save(model_file)
    task = get_task("grazzi:S5")
    rows = {}
    for name, sigma in (("compiled", 0.0), (f"compiled + noise σ={noise}", noise)):
        flags = dict(train_length="32..32", steps=100 if sigma == 0 else 400, lr=1e-3, weight_decay=0.0,
                     warmup=0.0, val_every=20, eval_lengths=[32, 64])  # fmt: skip
        cfg = TrainConfig(task="grazzi:S5", init_from=str(model_file), init_noise=sigma, seed=0, **{**QUIET, **flags})
        start = SequenceModel.from_config(init_model_config(init_architecture(cfg, task), task))
        load_init(start, init_architecture(cfg, task), task)
        at0 = accuracy_at_lengths(start.eval(), task, [32], samples=256)["sequence_accuracy"][0]
        run = out / ("S5-init" if sigma == 0 else "S5-init-noise")
        res = train(cfg, run, resume=True)
        curve = [json.loads(line) for line in (run / "metrics.jsonl").read_text().splitlines()]
        vals = [(c["step"], c["val_sequence_accuracy"]) for c in curve if "val_sequence_accuracy" in c]
        final = res["eval"]["sequence_accuracy"][0]
        exact_from = next((s for i, (s, _) in enumerate(vals) if all(v == 1.0 for _, v in vals[i:])), None)
        print(f"{name}: sequence accuracy at 32: step 0 {at0:.3f}, after {res['steps']} steps {final:.3f} "
              f"(validation every 20 steps exact from step {exact_from} on; lr {cfg.lr}, weight decay "
              f"{cfg.weight_decay})")  # fmt: skip
        rows[name] = {"step0": at0, "final": final, "steps": res["steps"], "validation": vals}
    noisy = rows[f"compiled + noise σ={noise}"]["validation"]
    print("validation sequence accuracy of the noisy start by step:", " ".join(f"{s}:{v:.2f}" for s, v in noisy))
    return rows


if __name__ == "__main__":
    main()
