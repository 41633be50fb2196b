"""The settings of a training run (:class:`TrainConfig`, what RUN/config.json stores) and the model they build.

A run is determined by its TrainConfig: the task, the architecture flags of ``fsa2rnn train`` (``--model``,
``--eig``, ``--layers``, …), the optimization (AdamW, cosine schedule with linear warmup, gradient clipping) and the
evaluation. :func:`model_config` turns the architecture flags into a :class:`fsa2rnn.nn.model.ModelConfig`:

- ``eig`` "0,1" | "-1,1" is the eigenvalue range of the transitions: β ∈ [0, 1] | [0, 2] (``beta_range``) for
  DeltaNet/DeltaProduct, a ∈ [0, 1] | [−1, 1] (``eig_range``) for the Mamba-style diagonal; the other layers
  have no such range and refuse it. None keeps the layer's default.
- ``heads`` is the number of heads of DeltaNet/DeltaProduct and of the Transformer (``head_dim`` defaults to
  d_model / heads); ``nfsm_heads`` the NFSM's heads (:func:`parse_nfsm_heads`): ``auto`` (the NFSM compiler's
  cheapest one-layer plan: point-tracking heads for a permutation group, else one head of |Q|), ``single``,
  ``4x11`` (4 heads of 11) or ``8,8,6``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from fsa2rnn.fsa.errors import SpecError

from ..layers import LAYERS
from ..limits import DEFAULT_CAP, LIMITS, check, check_train, parse_lengths, parse_range
from ..model import ModelConfig
from ..tasks import Task, parse_length_range
from .presets import ARCH_FLAGS
from .runfiles import RESUMABLE, RUN_FORMAT

#: loss weightings: every judged position alike, or down-weighted after each word's first error (trainer.py)
LOSSES = ("uniform", "first-error")
EIG = {
    "0,1": {"deltanet": (0, 1), "deltaproduct": (0, 1), "mamba": (0, 1)},
    "-1,1": {"deltanet": (0, 2), "deltaproduct": (0, 2), "mamba": (-1, 1)},
}
EIG_KEY = {"deltanet": "beta_range", "deltaproduct": "beta_range", "mamba": "eig_range"}


@dataclass
class TrainConfig:
    """One training run. Lengths are strings ``MIN..MAX`` (None: the task's default); see the module docstring."""

    task: str
    model: str = "deltanet"
    eig: str | None = None
    n_h: int | None = None
    layers: int = 1
    d_model: int = 64
    heads: int | None = None
    head_dim: int | None = None
    state_size: int | None = None
    nfsm_heads: str | None = None
    #: NFSM: the scale of the training Gumbel noise (None: the layer's default 1, the paper's estimator)
    gumbel: float | None = None
    nfsm_identity: float | None = None
    nfsm_readout_std: float | None = None
    short_conv: bool | None = None
    mlp_ratio: float = 4.0
    dropout: float = 0.0
    train_length: str | None = None
    loss: str = "uniform"
    steps: int = 2000
    batch: int = 64
    lr: float = 1e-3
    min_lr: float = 1e-6
    weight_decay: float = 0.0
    warmup: float = 0.1
    clip: float = 1.0
    seed: int = 42
    device: str = "cpu"
    log_every: int = 10
    val_every: int = 100
    val_samples: int = 256
    early_stop: int = 0
    checkpoint_every: int = 200
    eval_lengths: list[int] | None = None
    eval_range: str | None = None
    samples: int = 512
    lmax: bool = True
    cap: int = DEFAULT_CAP
    threshold: float = 1.0
    preset: str | None = None
    scale: str | None = None
    progress: bool = True
    nproc: int = 1
    #: a compiled model file whose weights start the run (nn/train/init_from.py), and the noise added to them
    init_from: str | None = None
    init_noise: float = 0.0

    def __post_init__(self) -> None:
        if self.model not in LAYERS:
            raise SpecError(f"unknown model {self.model!r} (choose from {', '.join(LAYERS)})")
        for f in fields(self):  # every numeric field within its stated limit (fsa2rnn.nn.limits)
            value = getattr(self, f.name)
            if f.name in LIMITS and value is not None:
                setattr(self, f.name, check(f.name, value))
        if self.loss not in LOSSES:
            raise SpecError(f"--loss must be one of {', '.join(LOSSES)}, got {self.loss!r}")
        if self.train_length is not None:
            parse_range(self.train_length, "--train-length")
        if self.eval_range is not None:
            parse_range(self.eval_range, "--eval-range")
        if self.eval_lengths is not None:
            if not self.eval_lengths:
                raise SpecError("--eval-lengths: give at least one length")
            self.eval_lengths = parse_lengths(",".join(str(n) for n in self.eval_lengths), "--eval-lengths")
        check_train(self.to_dict())
        if self.init_noise and not self.init_from:
            raise SpecError("--init-noise needs --init-from")
        if self.batch % self.nproc:
            raise SpecError(f"--batch {self.batch} is not divisible by the {self.nproc} processes of --nproc")
        self._check_architecture()

    def _check_architecture(self) -> None:
        m = self.model
        if self.eig is not None and self.eig not in EIG:
            raise SpecError(f"--eig must be 0,1 or -1,1, got {self.eig!r}")
        for name, models in ARCH_FLAGS.items():
            value = getattr(self, name)
            if value is not None and value != "auto" and m not in models:
                what = "has no eigenvalue range" if name == "eig" else "does not take it"
                raise SpecError(f"--{name.replace('_', '-')} applies to {', '.join(models)}; {m} {what}")
        if self.nfsm_heads is not None and self.nfsm_heads.startswith("auto"):
            _expansion(self.nfsm_heads)
        elif self.nfsm_heads not in (None, "single"):
            parse_nfsm_heads(self.nfsm_heads)
        if m == "transformer" and self.d_model % (self.heads or 4):
            raise SpecError(f"--d-model {self.d_model} is not divisible by the {self.heads or 4} attention heads")

    # ------------------------------------------------------------------ serialization
    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainConfig:
        if not isinstance(data, dict):
            raise SpecError(f"training config: expected a JSON object, got {type(data).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise SpecError(f"training config: unknown keys {unknown}")
        if "task" not in data:
            raise SpecError("training config: no task")
        return cls(**data)

    def differences(self, other: TrainConfig) -> list[str]:
        """The fields (other than :data:`RESUMABLE`) in which two configs differ: ``name: mine → other``."""
        a, b = self.to_dict(), other.to_dict()
        return [f"{k}: {a[k]!r} → {b[k]!r}" for k in a if k not in RESUMABLE and a[k] != b[k]]

    def train_lengths(self, task: Task) -> tuple[int, int]:
        return parse_length_range(self.train_length) if self.train_length else tuple(task.default_train_length)


def parse_nfsm_heads(text: str, automaton: Any = None) -> list[int]:
    """``auto`` → the heads of the cheapest one-layer plan of the NFSM compiler for the automaton (a group: heads of
    d indices tracking a base of its permutation action, Example G.7; else one head of |Q|, Prop. G.1) or [8]
    without an automaton; ``auto:K`` → the same heads with K times as many indices each (an overcomplete NFSM: the
    spare indices let training split a merged state instead of staying in it); ``single`` → [|Q|];
    ``4x11`` → [11, 11, 11, 11]; ``8,8,6`` → [8, 8, 6]."""
    if text.startswith("auto"):
        factor = _expansion(text)
        if automaton is None:
            return [8 * factor]
        from fsa2rnn.compiler.nfsm_heads import candidate_plans

        return [max(2, d) * factor for d in candidate_plans(automaton, "auto", "single")[0].layers[0].heads]
    if text == "single":
        return [max(2, automaton.n_states if automaton is not None else 8)]
    try:
        if "x" in text:
            count, size = text.split("x")
            heads = [int(size)] * int(count)
        else:
            heads = [int(p) for p in text.split(",")]
    except ValueError:
        heads = []
    if not heads or any(d < 1 for d in heads):
        raise SpecError(
            f"--nfsm-heads must be auto, auto:K, single, COUNTxSIZE (4x11) or a list of sizes (8,8,6), got {text!r}"
        )
    return heads


def _expansion(text: str) -> int:
    """K of ``auto:K`` (1 for ``auto``)."""
    if text == "auto":
        return 1
    head, _, k = text.partition(":")
    if head == "auto" and k.isdigit() and 1 <= int(k) <= 64:
        return int(k)
    raise SpecError(f"--nfsm-heads auto:K takes an integer K in 1..64, got {text!r}")


def model_config(cfg: TrainConfig, task: Task) -> ModelConfig:
    """The SequenceModel configuration of a run (see the module docstring for the flags' meaning)."""
    if cfg.init_from:  # the compiled model's architecture (nn/train/init_from.py)
        from .init_from import init_model_config

        return init_model_config(cfg, task)
    m, d = cfg.model, cfg.d_model
    args: dict[str, Any] = {}
    if cfg.eig is not None:
        args[EIG_KEY[m]] = EIG[cfg.eig][m]
    if m in ("deltanet", "deltaproduct"):
        heads = cfg.heads or max(1, d // 32)
        args.update(heads=heads, head_dim=cfg.head_dim or max(1, d // heads))
        if m == "deltaproduct":
            args["n_h"] = cfg.n_h or 2
    elif m == "transformer":
        args["heads"] = cfg.heads or 4
    elif m == "nfsm":
        args["heads"] = parse_nfsm_heads(cfg.nfsm_heads or "auto", task.automaton)
        if cfg.gumbel is not None:
            args["gumbel"] = float(cfg.gumbel)
        if cfg.nfsm_identity is not None:
            args["identity_bias"] = float(cfg.nfsm_identity)
        if cfg.nfsm_readout_std is not None:
            args["readout_std"] = float(cfg.nfsm_readout_std)
    if cfg.state_size is not None:
        args["state_size"] = cfg.state_size
    if cfg.short_conv is not None:
        args["short_conv"] = cfg.short_conv
    regression = task.kind == "regression"
    return ModelConfig(
        vocab=task.vocab_size,
        n_classes=task.n_classes,
        layer=m,
        n_layers=cfg.layers,
        d_model=d,
        layer_args=args,
        mlp_ratio=cfg.mlp_ratio,
        dropout=cfg.dropout,
        input_dim=task.vocab_size if regression else None,
    )


def run_record(cfg: TrainConfig, mcfg: ModelConfig, task: Task) -> dict[str, Any]:
    """RUN/config.json: the training config, the model config and the task's description."""
    return {
        "format": RUN_FORMAT,
        "train": cfg.to_dict(),
        "model": mcfg.to_dict(),
        "task": {
            "name": task.name,
            "kind": task.kind,
            "vocab": task.vocab,
            "classes": task.classes,
            "chance": task.chance,
            "source": task.source,
        },
    }
