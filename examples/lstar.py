"""Black-box extraction with L* (AALpy) beside the white-box one, on small trained models.

Trains, through the Python API (TrainConfig, train, load_run), a parity DeltaNet [−1, 1] from scratch and an LSTM
on parity (and, without --quick, an NFSM on the flip-flop and a parity model started from compiled weights), then
learns the machine each implements with L* (realize/lstar.py: the model answers membership queries, an equivalence
oracle tests hypotheses on W-method and random words) and prints its size, the queries, the time, its agreement with
the model at the training length and at 10 times it, and its relation to the target and to the white-box
extraction. Needs the extra fsa2rnn[lstar] (AALpy).

    python examples/lstar.py [--quick] [--out out/lstar]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

from fsa2rnn.nn.train import TrainConfig, load_run, train
from fsa2rnn.realize import compare_lstar

QUIET = dict(progress=False, lmax=False, samples=64, val_every=100, checkpoint_every=1000, seed=0)
RUNS = {
    "parity · deltanet [−1, 1]": dict(task="grazzi:parity", labels="dense", model="deltanet", eig="-1,1",
                                       delta_form="plain", d_model=8, heads=1, head_dim=4, mlp_ratio=0.0,
                                       conv_bias=True, train_length="2..16", steps=200,
                                       lr=1e-2, batch=32),
    "parity · lstm": dict(task="grazzi:parity", model="lstm", d_model=16, mlp_ratio=0.0, train_length="2..8",
                          steps=150, lr=1e-2, batch=32),
    "flip-flop · nfsm": None,  # the brandoit preset at small scale (docs/reproductions.md), seed 42
}  # fmt: skip
QUICK = ("parity · deltanet [−1, 1]", "parity · lstm")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the two parity models only (the test suite's run)")
    ap.add_argument("--out", default="out/lstar", help="directory of the runs")
    args = ap.parse_args()
    torch.set_num_threads(1)
    out = Path(args.out)
    for name, flags in RUNS.items():
        if args.quick and name not in QUICK:
            continue
        if flags is None:
            from fsa2rnn.nn.train import preset_config

            quiet = {**QUIET, "seed": 42, "mlp_ratio": 0.0}
            cfg = preset_config("brandoit", "small", task="brandoit:FF", model="nfsm", **quiet)
        else:
            cfg = TrainConfig(**{**QUIET, **flags})
        run = out / name.split(" ·")[0].replace("-", "") / cfg.model
        train(cfg, run, resume=True)
        model, task, _ = load_run(run)
        report(name, model, task, length=cfg.train_lengths(task)[1])
    if not args.quick:
        from_compiled(out)


def report(name: str, model, task, *, length: int) -> None:
    r = compare_lstar(model, task, length=length, words=128)
    le = r["learned"]
    ag, white = le["agreement"], r["white_box"]["n_states"]
    print(f"{name}: learned {le['n_states']} states, relation to the target: {le['relation']}, "
          f"to the white-box extraction ({white} states): {le['relation_to_white_box']}")  # fmt: skip
    queries = f"{le['membership_queries']} membership, {le['equivalence_queries']} equivalence"
    print(f"  queries: {queries}; {le['model_words']} words run through the model; {le['seconds']:.2f} s "
          f"(limits: {le['limits']})")  # fmt: skip
    print(f"  agreement with the model: sequence {ag['sequence'][0]:.3f} at length {ag['lengths'][0]}, "
          f"{ag['sequence'][1]:.3f} at {ag['lengths'][1]}")  # fmt: skip


def from_compiled(out: Path) -> None:
    """`train grazzi:parity --init-from MODEL`: a DeltaProduct started from the compiled parity weights."""
    from fsa2rnn.compiler import compile_householder
    from fsa2rnn.fsa import resolve_spec

    out.mkdir(parents=True, exist_ok=True)
    compile_householder(resolve_spec("parity")).save(out / "parity.safetensors")
    cfg = TrainConfig(task="grazzi:parity", init_from=str(out / "parity.safetensors"), steps=20, lr=1e-3,
                      train_length="8..16", **QUIET)  # fmt: skip
    train(cfg, out / "parity-init-from", resume=True)
    model, task, _ = load_run(out / "parity-init-from")
    report("parity · --init-from compiled", model, task, length=16)


if __name__ == "__main__":
    main()
