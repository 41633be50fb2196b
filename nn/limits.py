"""The stated limits of every numeric option of ``train``, ``eval``, ``compare``, ``verify`` and ``theorems``, in one
declarative table (:data:`LIMITS`), checked before any work — before torch is imported — and refused in one line that
names the option, the value and the limit (docs/limits.md).

- :data:`LIMITS` maps an option's name (``d_model`` for ``--d-model``) to its :class:`Bound`: kind (int or float),
  closed or open ends, and why the limit is where it is. :func:`check` refuses a value outside it (``TrainConfig``,
  the API); the CLI declares an option checked by its row with ``type=checked("d_model")`` (fsa2rnn.cli.options: the
  value is refused while the command line is parsed).
- Lists and ranges (``--eval-lengths 40,80``, ``--train-length 3..40``, ``--seeds 42..46``) are parsed by
  :func:`parse_lengths`, :func:`parse_range` and :func:`parse_seeds`, each element checked by its row.
- Products of options that size one allocation (the model's parameters, tokens per training step, activations,
  attention, words × length) are checked by :func:`check_train` and :func:`check_words_length` before any tensor.

To add an option: add a row to :data:`LIMITS` and declare it with ``type=checked(name)`` in cli/; the docs page lists
the table (``tests/contracts/test_hostile_inputs.py`` checks that every row is documented).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..fsa.errors import LimitExceededError, SpecError
from .tasks import check_task_name

#: the longest word any evaluation reads (the Brandoit protocol's 2^20)
MAX_LENGTH = 2**20
#: seeds are 64-bit: what torch.manual_seed and numpy's SeedSequence take
MAX_SEED = 2**63 - 1
#: parameters a model may have (weights + two AdamW moments: 3 × 4 bytes each, 1.5 GiB at the limit)
MAX_PARAMETERS = 2**27
#: tokens of one training step (batch × longest training word)
MAX_STEP_TOKENS = 2**20
#: activation entries of one forward pass (tokens × d_model × layers; a few float32 copies of this stay alive)
MAX_ACTIVATIONS = 2**28
#: attention entries of the Transformer on one training batch (batch × heads × length² × layers)
MAX_ATTENTION = 2**28
#: words × length of the sampled words `verify` and `compare` read at once
MAX_WORD_TOKENS = 2**24
#: runs one --seeds may start
MAX_SEEDS = 1000
#: lengths one --lengths / --eval-lengths may list
MAX_LENGTHS = 64


@dataclass(frozen=True)
class Bound:
    """The accepted values of one option: ``kind`` int or float, between ``lo`` and ``hi`` (None: unbounded; an
    open end excludes the value), finite; ``why`` says where the limit comes from."""

    kind: type
    lo: float | None
    hi: float | None
    lo_open: bool = False
    hi_open: bool = False
    why: str = ""

    def text(self) -> str:
        """The accepted range as the error message and the docs write it."""
        lo = "" if self.lo is None else _num(self.lo)
        hi = "" if self.hi is None else _num(self.hi)
        if self.lo is not None and self.hi is not None:
            return f"{'(' if self.lo_open else '['}{lo}, {hi}{')' if self.hi_open else ']'}"
        if self.lo is not None:
            return f"{'>' if self.lo_open else '≥'} {lo}"
        return f"{'<' if self.hi_open else '≤'} {hi}" if self.hi is not None else "finite"


def _num(v: float) -> str:
    if v == MAX_SEED:
        return "2^63 − 1"
    if float(v).is_integer():
        n = int(v)
        if n >= 2**10 and n & (n - 1) == 0:
            return f"2^{n.bit_length() - 1}"
        return f"{n:,}"
    return f"{v:g}"


_POS = dict(lo=1)
_STEPS = "a step count; 10^9 steps is beyond any run"
LIMITS: dict[str, Bound] = {
    # ---------------------------------------------------------------- architecture (train)
    "layers": Bound(int, 1, 64, why="blocks of the model"),
    "d_model": Bound(int, 1, 8192, why="model width; the parameters are bounded by 2^27 in all"),
    "heads": Bound(int, 1, 1024, why="heads per layer"),
    "head_dim": Bound(int, 1, 4096, why="key dimension per head"),
    "state_size": Bound(int, 1, 4096, why="state entries per channel"),
    "n_h": Bound(int, 1, 16, why="Householder factors per token"),
    "mlp_ratio": Bound(float, 0, 64, why="MLP width over d_model"),
    "dropout": Bound(float, 0, 1, hi_open=True, why="a probability below 1"),
    "gumbel": Bound(float, 0, 1e3, why="noise scale; logits are O(1)"),
    "nfsm_identity": Bound(float, -1e4, 1e4, why="a logit bias; beyond ±10^4 float32 softmax saturates anyway"),
    "nfsm_readout_std": Bound(float, 0, 1e3, lo_open=True, why="a standard deviation"),
    "nfsm_conv": Bound(int, 0, 64, why="taps of a causal convolution; 0: none"),
    "init_noise": Bound(float, 0, 1e3, why="σ of the noise added to compiled weights"),
    "nu": Bound(float, 0, 1e3, lo_open=True, why="a Gumbel scale and softmax temperature"),
    "explore": Bound(float, 0, 1e3, why="a penalty weight β"),
    "anchor_explore": Bound(float, 0, 1e3, why="a penalty weight β"),
    # ---------------------------------------------------------------- optimization (train)
    "steps": Bound(int, 1, 10**9, why=_STEPS),
    "batch": Bound(int, 1, 2**16, why="words per step; batch × longest training word ≤ 2^20 tokens"),
    "lr": Bound(float, 0, 10, lo_open=True, why="AdamW's step is about lr per weight: above 10 nothing trains"),
    "min_lr": Bound(float, 0, 10, why="the floor of the cosine schedule"),
    "weight_decay": Bound(float, 0, 100, why="AdamW decay per unit lr"),
    "warmup": Bound(float, 0, 1, hi_open=True, why="a fraction of the steps"),
    "clip": Bound(float, 0, 1e6, why="gradient norm; 0: none"),
    "seed": Bound(int, 0, MAX_SEED, why="64-bit seeds"),
    "nproc": Bound(int, 1, 64, why="data-parallel processes on one machine"),
    "jobs": Bound(int, 1, 10_000, why="runs at once: local processes, a SLURM array's parallelism, Ray tasks"),
    "log_every": Bound(int, 1, 10**9, why=_STEPS),
    "val_every": Bound(int, 1, 10**9, why=_STEPS),
    "checkpoint_every": Bound(int, 1, 10**9, why=_STEPS),
    "early_stop": Bound(int, 0, 10**9, why="validations in a row; 0: off"),
    "val_samples": Bound(int, 1, 2**16, why="held-out words per validation"),
    # ---------------------------------------------------------------- evaluation (train, eval, compare, verify)
    "length": Bound(int, 1, MAX_LENGTH, why="the longest word any evaluation reads, the Brandoit protocol's 2^20"),
    "samples": Bound(int, 1, 2**16, why="words per evaluation length and per L_max step"),
    "cap": Bound(int, 1, MAX_LENGTH, why="the longest length an L_max search tries, the Brandoit protocol's 2^20"),
    "threshold": Bound(float, 0, 1, lo_open=True, why="a sequence accuracy"),
    "max_queries": Bound(int, 1, 10_000_000, why="words an L*/KV extraction runs through the model"),
    "max_seconds": Bound(float, 0, 86_400, lo_open=True, why="wall-clock limit of an L*/KV extraction (one day)"),
    "depth": Bound(int, 0, 6, why="W-method depth: the oracle's words grow as (alphabet size)^depth"),
    "words": Bound(int, 1, 10**5, why="sampled words; words × length ≤ 2^24 tokens"),
    "eta": Bound(float, 0, 1e3, why="a perturbation per step; beyond 10^3 it dwarfs every model's O(1) states"),
}


def check(name: str, value: Any, option: str | None = None) -> Any:
    """``value`` as its row's kind if it lies within :data:`LIMITS`'s row ``name``; else SpecError (a non-number)
    or LimitExceededError naming ``option`` (default ``--name``), the value and the limit."""
    bound = LIMITS[name]
    option = option or "--" + name.replace("_", "-")
    try:
        if isinstance(value, bool):
            raise TypeError
        if bound.kind is int:
            v: Any = int(value) if isinstance(value, str) else value
            if not isinstance(v, int):
                if isinstance(v, float) and v.is_integer():
                    v = int(v)
                else:
                    raise TypeError
        else:
            v = float(value)
    except (TypeError, ValueError, OverflowError):
        what = "an integer" if bound.kind is int else "a number"
        raise SpecError(f"{option} must be {what}, got {value!r}") from None
    if bound.kind is float and not math.isfinite(v):
        raise SpecError(f"{option} must be a finite number within its limit {bound.text()}, got {value}")
    low = bound.lo is not None and (v <= bound.lo if bound.lo_open else v < bound.lo)
    high = bound.hi is not None and (v >= bound.hi if bound.hi_open else v > bound.hi)
    if low or high:
        cls = LimitExceededError if high else SpecError
        raise cls(f"{option} {_show(v)} is outside its limit {bound.text()} ({bound.why})")
    return v


def limit_help(name: str) -> str:
    """`` Limit: […].``: the accepted range for an option's --help."""
    return f" Limit: {LIMITS[name].text()}."


def _show(v: Any) -> str:
    s = str(v)
    return s if len(s) <= 24 else s[:10] + "…" + s[-6:] + f" ({len(s)} digits)"


# ---------------------------------------------------------------------------------------------------- lists
def parse_lengths(text: str, option: str, row: str = "length") -> list[int]:
    """``40,80,160`` → the sorted distinct lengths, each within row ``row``, at most :data:`MAX_LENGTHS`."""
    parts = str(text).split(",")
    if len(parts) > MAX_LENGTHS:
        raise LimitExceededError(f"{option} lists {len(parts)} lengths, over the limit of {MAX_LENGTHS}")
    try:
        values = [int(v) for v in parts]
    except ValueError:
        raise SpecError(f"{option} must be comma-separated integers, e.g. 40,80,160; got {text!r}") from None
    return sorted({check(row, v, option) for v in values})


def parse_range(text: str, option: str, row: str = "length") -> tuple[int, int]:
    """``3..40`` (or ``64``) → (3, 40), both ends within row ``row``."""
    parts = str(text).split("..")
    try:
        lo, hi = (int(parts[0]), int(parts[-1])) if len(parts) in (1, 2) else (None, None)
    except ValueError:
        lo = hi = None
    if lo is None or hi is None:
        raise SpecError(f"{option} must be MIN..MAX, e.g. 3..40; got {text!r}")
    lo, hi = check(row, lo, option), check(row, hi, option)
    if hi < lo:
        raise SpecError(f"{option} {text}: empty range (need MIN ≤ MAX)")
    return lo, hi


def parse_seeds(text: str, option: str = "--seeds") -> list[int]:
    """``42,43,44`` or ``42..46`` → the seeds: distinct, 64-bit, at most :data:`MAX_SEEDS` (counted before the list
    is built)."""
    try:
        if ".." in text:
            lo, hi = (int(v) for v in text.split(".."))
            if hi - lo + 1 > MAX_SEEDS:
                raise LimitExceededError(f"{option} {text} names {hi - lo + 1:,} runs, over the limit of {MAX_SEEDS}")
            seeds = list(range(lo, hi + 1))
        else:
            parts = text.split(",")
            if len(parts) > MAX_SEEDS:
                raise LimitExceededError(f"{option} names {len(parts):,} runs, over the limit of {MAX_SEEDS}")
            seeds = [int(v) for v in parts]
    except ValueError:
        seeds = []
    if not seeds or len(set(seeds)) != len(seeds):
        raise SpecError(f"{option} must be distinct integers, e.g. 42,43,44 or 42..46; got {text!r}")
    for s in seeds:
        check("seed", s, option)
    return seeds


def parse_nfsm_head_sizes(text: str, option: str = "--nfsm-heads") -> list[int]:
    """``4x11`` → [11, 11, 11, 11]; ``8,8,6`` → [8, 8, 6]: the explicit head sizes of an NFSM, the number of heads
    within the ``heads`` row and each size within the ``state_size`` row, counted before the list is built."""
    count_text, times, size_text = text.partition("x")
    try:
        if times:
            count, sizes = int(count_text), [int(size_text)]
        else:
            count = text.count(",") + 1
            check("heads", count, f"{option}: the number of heads")
            sizes = [int(p) for p in text.split(",")]
    except ValueError:
        count, sizes = 0, []
    if count < 1 or not sizes or any(d < 1 for d in sizes):
        raise SpecError(
            f"{option} must be auto, auto:K, single, COUNTxSIZE (4x11) or a list of sizes (8,8,6), got {text!r}"
        )
    check("heads", count, f"{option}: the number of heads")
    for d in sizes:
        check("state_size", d, f"{option}: a head's size")
    return sizes * count if times else sizes


def check_run_count(n_seeds: int, n_rates: int = 1) -> None:
    """The runs of one ``train``: seeds × the rates of ``--lr-grid`` ≤ :data:`MAX_SEEDS` (counted before any)."""
    if n_seeds * n_rates > MAX_SEEDS:
        raise LimitExceededError(
            f"--seeds × --lr-grid: {n_seeds:,} seeds × {n_rates} rates = {n_seeds * n_rates:,} runs, over the limit of "
            f"{MAX_SEEDS}"
        )


# ---------------------------------------------------------------------------------------------------- products
def default_train_max(task: str) -> int:
    """The longest training word of a task's default training lengths, without building the task (no torch):
    the DLR tasks and Brandoit's TSO_N 256, the other tracking of shuffled objects 20, Brandoit's other tasks 64,
    every other task and SPEC 40 (tests/contracts/test_hostile_inputs.py checks this against every named task)."""
    if task.startswith(("dlr:", "brandoit:TSO")):
        return 256
    if task.startswith("brandoit:shuffled:"):
        return 20
    return 64 if task.startswith("brandoit:") else 40


def estimated_parameters(f: Mapping[str, Any]) -> int:
    """An upper estimate of a training run's parameters from its flags (resolved TrainConfig fields): per block
    d² (4 + 2·mlp_ratio) for projections and MLP (fla's gated MLP, rounded up to 256 units: + 768·d),
    4·d·heads·head_dim for the keys, values, queries and gates of a DeltaNet, 3·d·state_size for a diagonal layer,
    d·Σ d_i² for the NFSM's table logits."""
    d, layers = int(f.get("d_model") or 64), int(f.get("layers") or 1)
    ratio = float(f.get("mlp_ratio", 4.0))
    per = d * d * (4 + 2 * ratio) + (768 * d if ratio > 0 and f.get("wrapper") == "fla" else 0)
    heads = int(f.get("heads") or max(1, d // 32))
    per += 4 * d * heads * int(f.get("head_dim") or max(1, d // heads)) * int(f.get("n_h") or 1)
    per += 3 * d * int(f.get("state_size") or 64)
    nfsm = str(f.get("nfsm_heads") or "")
    if f.get("model") == "nfsm" and nfsm and nfsm[0].isdigit():
        per += d * sum(s * s for s in parse_nfsm_head_sizes(nfsm))
    return int(layers * per)


def check_train(f: Mapping[str, Any], train_max: int | None = None) -> None:
    """The products of a training run's flags that size one allocation, before any tensor: parameters, tokens per
    step, activations, the Transformer's attention, the range evaluation's batch; and ``--min-lr`` ≤ ``--lr``.
    ``train_max``: the longest training word (the task's default when the flags give none)."""
    lr, min_lr = f.get("lr"), f.get("min_lr")
    if lr is not None and min_lr is not None and min_lr > lr:
        raise SpecError(f"--min-lr {min_lr:g} is above --lr {lr:g}: the cosine schedule decays from --lr to --min-lr")
    if f.get("task"):
        check_task_name(str(f["task"]))
    params = estimated_parameters(f)
    if params > MAX_PARAMETERS:
        raise LimitExceededError(
            f"--d-model {f.get('d_model', 64)} with --layers {f.get('layers', 1)} gives about {params:,} parameters, "
            f"over the limit of {MAX_PARAMETERS:,} (2^27)"
        )
    if f.get("train_length"):
        train_max = parse_range(f["train_length"], "--train-length")[1]
    elif train_max is None and f.get("task"):
        train_max = default_train_max(str(f["task"]))
    batch = int(f.get("batch") or 64)
    d, layers = int(f.get("d_model") or 64), int(f.get("layers") or 1)
    if train_max is not None:
        tokens = batch * train_max
        if tokens > MAX_STEP_TOKENS:
            raise LimitExceededError(
                f"--batch {batch} × training length {train_max} = {tokens:,} tokens per step, over the limit of "
                f"{MAX_STEP_TOKENS:,} (2^20)"
            )
        if tokens * d * layers > MAX_ACTIVATIONS:
            raise LimitExceededError(
                f"--batch {batch} × length {train_max} × --d-model {d} × --layers {layers} = {tokens * d * layers:,} "
                f"activations per step, over the limit of {MAX_ACTIVATIONS:,} (2^28)"
            )
        if f.get("model") == "transformer":
            att = batch * int(f.get("heads") or 4) * train_max**2 * layers
            if att > MAX_ATTENTION:
                raise LimitExceededError(
                    f"transformer: --batch {batch} × heads × length {train_max}² × layers = {att:,} attention "
                    f"entries, over the limit of {MAX_ATTENTION:,} (2^28)"
                )
    if f.get("eval_range"):
        hi = parse_range(f["eval_range"], "--eval-range")[1]
        words = min(int(f.get("samples") or 512), 512)
        if words * hi * d * layers > MAX_ACTIVATIONS:
            raise LimitExceededError(
                f"--eval-range up to {hi} reads {words} words at once: {words * hi * d * layers:,} activations, over "
                f"the limit of {MAX_ACTIVATIONS:,} (2^28)"
            )


def check_words_length(words: int, length: int, *, words_option: str = "--words", length_option: str = "--length"
                       ) -> None:  # fmt: skip
    """words × length of sampled words read at once ≤ :data:`MAX_WORD_TOKENS`."""
    if words * length > MAX_WORD_TOKENS:
        raise LimitExceededError(
            f"{words_option} {words} × {length_option} {length} = {words * length:,} symbols, over the limit of "
            f"{MAX_WORD_TOKENS:,} (2^24)"
        )


def limits_table() -> str:
    """The markdown table of :data:`LIMITS` (docs/limits.md shows it)."""
    rows = ["| option | accepted | why |", "|---|---|---|"]
    for name, b in LIMITS.items():
        rows.append(f"| `--{name.replace('_', '-')}` | {b.text()} ({b.kind.__name__}) | {b.why} |")
    return "\n".join(rows)


__all__ = [
    "LIMITS",
    "MAX_LENGTH",
    "MAX_SEED",
    "Bound",
    "check",
    "check_train",
    "check_words_length",
    "default_train_max",
    "estimated_parameters",
    "limit_help",
    "limits_table",
    "parse_lengths",
    "parse_range",
    "parse_seeds",
]
