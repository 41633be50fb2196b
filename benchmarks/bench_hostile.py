"""Seconds and peak memory to refuse each hostile input to the training, evaluation and comparison commands, beside
the target: refused in ≤ 5 s below 500 MiB, exit 2, one line (docs/limits.md).

Each input once allocated terabytes, ran without end or wrote a half-made run: a 10^23 seed, a batch of 10^12
words, d_model 10^9, 10^8 seeds, an evaluation length of 10^12, an L_max cap of 10^12, η = 10^308, nan thresholds,
an infinite learning rate, empty and text model files, a plot named .txt. Every case runs the CLI in a fresh child
process under an address-space limit (:data:`ADDRESS_SPACE`, so that a broken guard fails on its allocation instead
of eating the machine) and a hang timeout; the peak RSS is the child's own (``os.wait4``).

    python benchmarks/bench_hostile.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import refusals
from refusals import HANG_TIMEOUT, report, run_cli

TARGET_SECONDS = 5.0
TARGET_MIB = 500
#: the child's address space at most (torch is never imported before a refusal; numpy and click need far less)
ADDRESS_SPACE = 2 << 30
BIG = "1000000000000"


@dataclass(frozen=True)
class Case(refusals.Case):
    absent: tuple[str, ...] = ("out",)  #: a refused train must leave no run behind


_ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}


def _train(*flags: str) -> tuple[str, ...]:
    return ("train", "grazzi:parity", "--out", "{dir}/out", *flags)


CASES = (
    Case("train --seed 10^23", _train("--seed", "99999999999999999999999"), "'--seed'"),
    Case("train --seed -1", _train("--seed", "-1"), "'--seed': -1 is outside its limit [0, 2^63 − 1]"),
    Case("train --train-length 10^12..10^12", _train("--train-length", f"{BIG}..{BIG}"), "--train-length"),
    Case("train --batch 10^12", _train("--batch", BIG), "'--batch'"),
    Case("train --batch 2^16 (tokens per step)", _train("--batch", "65536"), "tokens per step"),
    Case("train --eval-range 1..10^12", _train("--eval-range", f"1..{BIG}"), "--eval-range"),
    Case("train --d-model 10^9", _train("--d-model", "1000000000"), "'--d-model'"),
    Case("train --d-model 8192 --layers 8", _train("--d-model", "8192", "--layers", "8"), "parameters"),
    Case(
        "train transformer attention",
        _train("--model", "transformer", "--train-length", "4000", "--batch", "64"),
        "attention entries",
    ),  # fmt: skip
    Case("train --seeds 42..10^8", _train("--seeds", "42..100000000"), "over the limit of 1000"),
    Case("train --eval-lengths 10^12", _train("--eval-lengths", BIG), "--eval-lengths"),
    Case("train --eval-lengths × 65", _train("--eval-lengths", ",".join(str(i) for i in range(1, 66))), "65 lengths"),
    Case("train --samples 10^12", _train("--samples", BIG), "'--samples'"),
    Case("train --cap 10^12", _train("--cap", BIG), "'--cap'"),
    Case("train --lr inf", _train("--lr", "inf"), "'--lr': must be a finite number"),
    Case("train --lr 0", _train("--lr", "0"), "'--lr': 0.0 is outside its limit (0, 10]"),
    Case("train --threshold nan", _train("--threshold", "nan"), "'--threshold'"),
    Case("train --dropout 1", _train("--dropout", "1"), "'--dropout'"),
    Case("train --steps 10^12", _train("--steps", BIG), "'--steps'"),
    Case("train --nproc 10^6", _train("--nproc", "1000000"), "'--nproc'"),
    Case("train --out ''", ("train", "grazzi:parity", "--out", ""), "--out is empty"),
    Case(
        "train --out under a file", ("train", "grazzi:parity", "--out", "{dir}/file/run"), "is a file, not a directory"
    ),  # fmt: skip
    Case("train --out a non-run", ("train", "grazzi:parity", "--out", "{dir}/notrun"), "holds other files", ()),
    Case("train --resume on nothing", _train("--resume"), "--resume: '{dir}/out' does not exist"),
    Case("eval --threshold nan", ("eval", "{dir}/run", "--lmax", "--threshold", "nan"), "'--threshold'"),
    Case("eval --lengths 10^12", ("eval", "{dir}/run", "--lengths", BIG), "--lengths"),
    Case("eval --samples 10^12", ("eval", "{dir}/run", "--samples", BIG), "'--samples'"),
    Case("eval --cap 10^12", ("eval", "{dir}/run", "--cap", BIG), "'--cap'"),
    Case("eval ''", ("eval", ""), "RUN is empty"),
    Case("eval a missing run", ("eval", "{dir}/nothing"), "is not a training run: it does not exist"),
    Case("eval an empty config", ("eval", "{dir}/emptyrun"), "the file is empty"),
    Case("compare --cap 10^12", ("compare", "{dir}/run", "--cap", BIG), "'--cap'"),
    Case("compare --length 10^12", ("compare", "{dir}/run", "--length", BIG), "'--length'"),
    Case(
        "compare --words × --length",
        ("compare", "{dir}/run", "--words", "100000", "--length", "1000"),
        "over the limit of 16,777,216",
    ),  # fmt: skip
    Case(
        "compare --plot x.txt",
        ("compare", "{dir}/run", "--plot", "{dir}/x.txt"),
        "extension chooses the format",
        ("x.txt",),
    ),  # fmt: skip
    Case("verify --eta 1e308", ("verify", "{dir}/m.safetensors", "--eta", "1e308"), "'--eta'"),
    Case("verify --eta nan", ("verify", "{dir}/m.safetensors", "--eta", "nan"), "'--eta'"),
    Case(
        "verify --plot drift.txt",
        ("verify", "{dir}/m.safetensors", "--eta", "0.1", "--plot", "{dir}/drift.txt"),
        "extension chooses the format",
        ("drift.txt",),
    ),  # fmt: skip
    Case("verify --length 10^12", ("verify", "{dir}/m.safetensors", "--length", BIG), "'--length'"),
    Case("verify --cap 10^12", ("verify", "{dir}/m.safetensors", "--eta", "0", "--lmax", "--cap", BIG), "'--cap'"),
    Case("verify an empty model file", ("verify", "{dir}/empty.safetensors"), "is empty (0 bytes)"),
    Case("verify a text file", ("verify", "{dir}/text.safetensors"), "is not a safetensors file"),
)


def write_fixtures(folder: Path) -> None:
    """The files the cases name: a compiled parity model, an empty and a text 'model', a file to nest under, a
    directory that is not a run, a run whose config is empty, and a run directory whose contents are never read (the
    refusals come first)."""
    from fsa2rnn.compiler import compile_householder
    from fsa2rnn.fsa import resolve_spec

    compile_householder(resolve_spec("parity")).save(folder / "m.safetensors")
    (folder / "empty.safetensors").write_bytes(b"")
    (folder / "text.safetensors").write_text("this is a text file, not a model\n" * 4)
    (folder / "file").write_text("a file")
    (folder / "notrun").mkdir()
    (folder / "notrun" / "thesis.tex").write_text("mine")
    run_config = '{"format": "fsa2rnn.train_run/1", "train": {"task": "grazzi:parity"}}'
    for run, config in (("run", run_config), ("emptyrun", "")):
        (folder / run).mkdir()
        (folder / run / "config.json").write_text(config)
        (folder / run / "model.safetensors").write_bytes(b"")


def run_limited(args: list[str], timeout: float = HANG_TIMEOUT) -> tuple[int, str, float, float]:
    """``fsa2rnn ARGS`` in a fresh process under :data:`ADDRESS_SPACE`: (exit code, stderr, seconds, peak MiB)."""
    return run_cli(args, address_space=ADDRESS_SPACE, timeout=timeout, env=_ONE_THREAD)


def main() -> int:
    with tempfile.TemporaryDirectory() as d:
        write_fixtures(Path(d))
        ok = report(CASES, Path(d), run_limited, target_seconds=TARGET_SECONDS, target_mib=TARGET_MIB)
    print(json.dumps({"cases": len(CASES), "all_ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
