"""The files of a training run directory, in one leaf module (it imports no other module of the trainer, and no
torch): their names, the per-step seed streams, and reading ``config.json``'s fields and ``metrics.jsonl``. A run's
settings and model are read back by fsa2rnn.nn.train.config (``read_run_record``, ``load_run``).

A run directory holds ``config.json`` (the TrainConfig, the ModelConfig and the task), ``model.safetensors`` (the
last checkpoint), ``metrics.jsonl`` (one record per logged step), and after training ``eval.json`` and
``curves.png``. A directory holding ``config.json`` without a checkpoint is a run that never reached one (killed
before): a new run may replace it, ``--resume`` refuses it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from ...fsa.errors import SpecError

RUN_FORMAT = "fsa2rnn.train_run/1"
CONFIG, MODEL, METRICS, EVAL, CURVES = "config.json", "model.safetensors", "metrics.jsonl", "eval.json", "curves.png"
RUN_FILES = (CONFIG, MODEL, METRICS)
#: every file a run writes (a directory holding only these is a run; anything else is not ours to replace)
ALL_RUN_FILES = (CONFIG, MODEL, METRICS, EVAL, CURVES)
#: TrainConfig fields that may differ between a run and its --resume (they do not change what is computed)
RESUMABLE = ("device", "progress", "nproc")
#: the seed streams of a run: training batches, the noise of a step (Gumbel, dropout), validation words
DATA, NOISE, VAL = 1, 2, 3


def stream_seed(seed: int, stream: int, step: int = 0) -> int:
    """A 63-bit seed for ``stream`` at ``step`` of a run seeded ``seed`` (numpy's SeedSequence)."""
    return int(np.random.SeedSequence([abs(int(seed)), stream, step]).generate_state(1, np.uint64)[0] >> 1)


def holds_run(out: Path) -> bool:
    """Whether ``out`` holds (part of) a training run."""
    return out.is_dir() and any((out / f).exists() for f in RUN_FILES)


def has_checkpoint(out: Path) -> bool:
    return (out / MODEL).is_file()


def read_text(path: Path) -> str:
    """The text of a run's file; SpecError naming it when it cannot be read or is not UTF-8 (a damaged file: what
    fsa2rnn writes is ASCII JSON)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SpecError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(f"{str(path)!r} is damaged: byte {exc.start} is not UTF-8 text") from None


def read_json(path: Path) -> Any:
    """The JSON value of a run's file; SpecError naming it (unreadable, not UTF-8, empty, not JSON)."""
    text = read_text(path)
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        if not text.strip():
            raise SpecError(f"{str(path)!r}: the file is empty") from None
        raise SpecError(f"{str(path)!r} is damaged: not valid JSON") from None


def read_run_fields(run: Path) -> dict[str, Any]:
    """The TrainConfig fields stored in RUN/config.json, as a dict (no torch); SpecError if unreadable."""
    path = Path(run) / CONFIG
    data = read_json(path)
    if not isinstance(data, dict) or data.get("format") != RUN_FORMAT or not isinstance(data.get("train"), dict):
        raise SpecError(f"{str(path)!r}: not an fsa2rnn training run (format {RUN_FORMAT!r})")
    return data["train"]


def read_metrics(path: Path) -> list[dict[str, Any]]:
    """The records of a metrics.jsonl (a torn last line, from a killed run, is dropped); SpecError naming the file
    when it is not UTF-8 or a line before the last is not JSON (a damaged file, which a resumed run would carry on).
    """
    if not path.exists():
        return []
    out = []
    lines = read_text(path).splitlines()
    for i, line in enumerate(lines):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            if i == len(lines) - 1:
                continue
            raise SpecError(f"{str(path)!r} is damaged: line {i + 1} is not a JSON record") from None
        if isinstance(rec, dict) and isinstance(rec.get("step"), int):
            out.append(rec)
    return out


def check_run_dir(run: str | Path) -> Path:
    """RUN as a Path if it is a training run directory (config.json and a checkpoint); SpecError saying what it is
    instead (empty path, missing, a file, a directory without a run, a run without a checkpoint)."""
    raw = str(run)
    if raw == "":
        raise SpecError("RUN is empty: give a training run's directory")
    path = Path(raw)
    if not path.exists():
        raise SpecError(f"{raw!r} is not a training run: it does not exist (RUN is `fsa2rnn train`'s --out)")
    if not path.is_dir():
        raise SpecError(f"{raw!r} is not a training run: it is a file (RUN is `fsa2rnn train`'s --out directory)")
    if not (path / CONFIG).is_file():
        raise SpecError(f"{raw!r} is not a training run (no {CONFIG})")
    if not has_checkpoint(path):
        raise SpecError(f"{raw!r} holds no checkpoint (the run never reached one)")
    read_run_fields(path)  # an unreadable config.json is refused here, before torch
    return path


__all__ = [
    "ALL_RUN_FILES",
    "CONFIG",
    "CURVES",
    "EVAL",
    "METRICS",
    "MODEL",
    "RUN_FILES",
    "RESUMABLE",
    "RUN_FORMAT",
    "check_run_dir",
    "holds_run",
    "read_json",
    "read_metrics",
    "read_text",
    "read_run_fields",
    "stream_seed",
]
