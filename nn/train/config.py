"""The settings of a training run (:class:`TrainConfig`, what RUN/config.json stores) and the model they build.

A run is determined by its TrainConfig: the task, the architecture flags of ``fsa2rnn train`` (``--model``,
``--eig``, ``--layers``, …), the optimization (AdamW, cosine schedule with linear warmup, gradient clipping) and the
evaluation. :func:`read_run_record` reads RUN/config.json back and :func:`load_run` a run's model. :func:`model_config`
turns the architecture flags into a :class:`fsa2rnn.nn.model.ModelConfig`:

- ``eig`` "0,1" | "-1,1" is the eigenvalue range of the transitions: β ∈ [0, 1] | [0, 2] (``beta_range``) for
  DeltaNet/DeltaProduct, a ∈ [0, 1] | [−1, 1] (``eig_range``) for the Mamba-style diagonal; the other layers
  have no such range and refuse it. None keeps the layer's default.
- ``heads`` is the number of heads of DeltaNet/DeltaProduct, of the Transformer and of the attention block
  (``head_dim`` defaults to d_model / heads); ``nfsm_heads`` the NFSM's heads (:func:`parse_nfsm_heads`):
  ``auto`` (the NFSM compiler's cheapest one-layer plan: point-tracking heads for a permutation group, else one
  head of |Q|), ``single``, ``4x11`` (4 heads of 11) or ``8,8,6``.
- ``delta_form`` "fla" | "plain" is the DeltaNet/DeltaProduct form: fla's (per-head output RMSNorm, Xavier init of
  gain 2^−2.5, no β bias; the layer's default) or the bare recurrence (nn/layers/delta_product.py).
- ``dlr_init`` "default" | "atomic" is the initialisation of dlr, dlr-prod and dss-exp: the layer's defaults (the DLR
  paper's locality-biased decay; DSS's HiPPO frequencies, Δ ∈ [1e-3, 1e-1]) or the authors' code for the atomic
  tasks (ag1988/dlr README: DLR Δ = 1e-5, so |λ| ≈ 1; DSS_exp λ_n = −1/2 + iπn, Δ ∈ [1e-4, 1e-2]); :data:`DLR_INITS`.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

from ...compiler.targets.nfsm.families import head_family
from ...compiler.targets.nfsm.heads import candidate_plans
from ...fsa.errors import ModelFileError, SpecError
from ..layers import LAYERS
from ..layers.base import is_finite_number
from ..layers.delta_product import FORMS as DELTA_FORMS
from ..limits import LIMITS, check, check_train, parse_lengths, parse_nfsm_head_sizes, parse_range
from ..lmax import DEFAULT_CAP, PROTOCOLS
from ..model import ModelConfig, SequenceModel
from ..plugins import FLA, check_ref, check_source, guard, is_ref, load, parse_args, plugin_record
from ..tasks import Task, get_task, parse_length_range
from ..tasks.base import SUPERVISIONS
from ..wrapper import WRAPPERS
from .checkpoint import load_checkpoint, restore
from .init_from import init_model_config
from .presets import ARCH_FLAGS
from .runfiles import CONFIG, MODEL, RESUMABLE, RUN_FORMAT, check_run_dir, read_text

#: loss weightings: every judged position alike, or down-weighted after each word's first error (trainer.py)
LOSSES = ("uniform", "first-error", "balanced")
#: Brandoit et al.'s two arms for the NFSM (objectives.py): free (the model's loss) or anchored (heads supervised)
ARMS = ("free", "anchored")
#: head families of the NFSM with known codes (compiler/targets/nfsm/families.py); ``factored:5,12`` fixes the sizes
HEAD_FAMILIES = ("regular", "factored")
EIG = {
    "0,1": {"deltanet": (0, 1), "deltaproduct": (0, 1), "mamba": (0, 1)},
    "-1,1": {"deltanet": (0, 2), "deltaproduct": (0, 2), "mamba": (-1, 1)},
}
#: ``--dlr-init``: the layer arguments per model (dlr-prod is the DLR with another kernel); "default" sets none
DLR_INITS: dict[str, dict[str, dict[str, Any]]] = {
    "default": {},
    "atomic": {
        "dlr": {"decay_init": "unit"},
        "dlr-prod": {"decay_init": "unit"},
        "dss-exp": {"lambda_init": "lin", "dt_min": 1e-4, "dt_max": 1e-2},
    },
}
EIG_KEY = {"deltanet": "beta_range", "deltaproduct": "beta_range", "mamba": "eig_range"}


@dataclass
class TrainConfig:
    """One training run. Lengths are strings ``MIN..MAX`` (None: the task's default); see the module docstring."""

    task: str
    #: a layer's name (LAYERS), or a plug-in's import path ``package.module:Name`` (nn/plugins.py)
    model: str = "deltanet"
    #: a plug-in's keyword arguments (``--model-args JSON``); None for a built-in layer
    model_args: dict[str, Any] | None = None
    eig: str | None = None
    n_h: int | None = None
    layers: int = 1
    d_model: int = 64
    heads: int | None = None
    head_dim: int | None = None
    state_size: int | None = None
    nfsm_heads: str | None = None
    #: NFSM: the scale of the training Gumbel noise (None: ν with --nu, else the layer's default 1 at τ = 0.5)
    gumbel: float | None = None
    nfsm_identity: float | None = None
    nfsm_readout_std: float | None = None
    #: NFSM: the causal convolution of K taps before each layer's logits (nn/layers/nfsm.py; Brandoit et al.'s
    #: CONV_KERNEL = 2 on TSO_N); None or 0: none
    nfsm_conv: int | None = None
    short_conv: bool | None = None
    conv_bias: bool | None = None
    #: DeltaNet/DeltaProduct form (nn/layers/delta_product.py): fla (output RMSNorm, fla's init, no β bias) | plain
    delta_form: str | None = None
    #: dlr/dlr-prod/dss-exp initialisation: default (the layer's) | atomic (the authors' atomic tasks); None: default
    dlr_init: str | None = None
    mlp_ratio: float = 4.0
    #: the model around the layers (nn/wrapper.py): fsa2rnn | fla (fla's DeltaNetForCausalLM); None: fsa2rnn
    wrapper: str | None = None
    dropout: float = 0.0
    train_length: str | None = None
    #: the judged positions: answer | dense (None: the task's own supervision; nn/tasks/base.py)
    labels: str | None = None
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
    #: the L_max search: prefix (prefixes of the same words) or brandoit (fresh words per length; nn/lmax.py)
    protocol: str = "prefix"
    preset: str | None = None
    scale: str | None = None
    progress: bool = True
    nproc: int = 1
    #: a compiled model file whose weights start the run (nn/train/init_from.py), and the noise added to them
    init_from: str | None = None
    init_noise: float = 0.0
    #: Brandoit et al.'s recipe (objectives.py): the arm, the NFSM head family, ν (noise scale and softmax
    #: temperature at once), the exploration penalty of the free and the anchored phase, keeping the best checkpoint
    arm: str = "free"
    head_family: str | None = None
    nu: float | None = None
    explore: float = 0.0
    anchor_explore: float = 0.0
    keep_best: bool = False
    #: a task with an answer readout (TSO_N): the answer's own full-weight cross-entropy from step 0, the state the
    #: target at the question (Brandoit et al.'s ``_answer_term``; trainer.py); False: the answer replaces the
    #: state target there, inside the arm's loss (fsa2rnn before issue 32). None: on.
    answer_term: bool | None = None

    def __post_init__(self) -> None:
        if is_ref(self.model):
            check_ref(self.model)
        elif self.model not in LAYERS:
            raise SpecError(f"unknown model {self.model!r} (choose from {', '.join(LAYERS)}, or a plug-in "
                            "package.module:Name)")  # fmt: skip
        if self.model_args is not None:
            if not self.plugin:
                raise SpecError(f"--model-args applies to a plug-in (--model package.module:Name); {self.model} "
                                "takes its options as flags")  # fmt: skip
            self.model_args = parse_args(self.model_args)
        if is_ref(self.model) and self.model.split(":")[0] == FLA and not str(self.device).startswith("cuda"):
            raise SpecError(f"--model {self.model}: fla's kernels need a CUDA device (--device cuda), not "
                            f"{self.device!r}")  # fmt: skip
        if self.plugin and self.init_from:
            raise SpecError(f"--init-from loads a compiled model's weights into its own architecture, not into the "
                            f"plug-in {self.model!r}")  # fmt: skip
        for f in fields(self):  # every numeric field within its stated limit (fsa2rnn.nn.limits)
            value = getattr(self, f.name)
            if f.name in LIMITS and value is not None:
                setattr(self, f.name, check(f.name, value))
        if self.protocol not in PROTOCOLS:
            raise SpecError(f"--protocol must be one of {', '.join(PROTOCOLS)}, got {self.protocol!r}")
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

    @property
    def plugin(self) -> bool:
        """Whether the model is a plug-in (by import path, or registered by a package other than fsa2rnn)."""
        return is_ref(self.model) or not LAYERS.is_builtin(self.model)

    def _check_architecture(self) -> None:
        m = self.model
        fla_eig = is_ref(m) and m.split(":")[0] == FLA  # fla's layers take the range (allow_neg_eigval)
        if self.eig is not None and self.eig not in EIG:
            raise SpecError(f"--eig must be 0,1 or -1,1, got {self.eig!r}")
        if self.labels is not None and self.labels not in SUPERVISIONS:
            raise SpecError(f"--labels must be one of {', '.join(SUPERVISIONS)}, got {self.labels!r}")
        if self.delta_form is not None and self.delta_form not in DELTA_FORMS:
            raise SpecError(f"--delta-form must be one of {', '.join(DELTA_FORMS)}, got {self.delta_form!r}")
        if self.wrapper is not None and self.wrapper not in WRAPPERS:
            raise SpecError(f"--wrapper must be one of {', '.join(WRAPPERS)}, got {self.wrapper!r}")
        if self.dlr_init is not None and self.dlr_init not in DLR_INITS:
            raise SpecError(f"--dlr-init must be one of {', '.join(DLR_INITS)}, got {self.dlr_init!r}")
        defaults = {f.name: f.default for f in fields(self)}
        for name, models in ARCH_FLAGS.items():
            value = getattr(self, name)
            if name == "eig" and fla_eig:
                continue
            if value is not None and value != "auto" and value != defaults[name] and m not in models:
                what = "has no eigenvalue range" if name == "eig" else "does not take it"
                raise SpecError(f"--{name.replace('_', '-')} applies to {', '.join(models)}; {m} {what}")
        if self.nfsm_heads is not None and self.nfsm_heads.startswith("auto"):
            _expansion(self.nfsm_heads)
        elif self.nfsm_heads not in (None, "single"):
            parse_nfsm_heads(self.nfsm_heads)
        self._check_arm()
        if m in ("transformer", "attention") and self.d_model % (self.heads or 4):
            raise SpecError(f"--d-model {self.d_model} is not divisible by the {self.heads or 4} attention heads")

    def _check_arm(self) -> None:
        """The options of Brandoit et al.'s recipe (one line each, before any work)."""
        if self.arm not in ARMS:
            raise SpecError(f"--arm must be one of {', '.join(ARMS)}, got {self.arm!r}")
        nfsm_only = {"head_family": self.head_family, "nu": self.nu}
        if self.arm == "anchored":
            nfsm_only["arm"] = self.arm
        for name, value in nfsm_only.items():
            if value is not None and self.model != "nfsm":
                raise SpecError(f"--{name.replace('_', '-')} applies to nfsm; {self.model} does not take it")
        if self.explore or self.anchor_explore:
            if self.model != "nfsm":
                raise SpecError(f"--explore applies to nfsm; {self.model} does not take it")
        if self.head_family is not None or self.arm == "anchored":
            if self.head_family is not None:
                parse_head_family(self.head_family)
            if self.nfsm_heads is not None:
                raise SpecError("--head-family and --arm anchored set the heads: give no --nfsm-heads with them")
        if self.nu is not None:
            if not (is_finite_number(self.nu) and self.nu > 0):
                raise SpecError(f"--nu must be a number > 0, got {self.nu!r}")
        if not isinstance(self.keep_best, bool):
            raise SpecError(f"--keep-best must be true or false, got {self.keep_best!r}")
        if self.nfsm_conv is not None:
            if not isinstance(self.nfsm_conv, int) or isinstance(self.nfsm_conv, bool) or self.nfsm_conv < 0:
                raise SpecError(f"--nfsm-conv must be an integer ≥ 0 (taps; 0: none), got {self.nfsm_conv!r}")
        if self.answer_term is not None and not isinstance(self.answer_term, bool):
            raise SpecError(f"--answer-term must be true or false, got {self.answer_term!r}")
        if self.arm == "anchored" and self.nproc > 1:
            raise SpecError("--arm anchored runs in one process (its release rule reads one validation): no --nproc")

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

        return [max(2, d) * factor for d in candidate_plans(automaton, "auto", "single")[0].layers[0].heads]
    if text == "single":
        return [max(2, automaton.n_states if automaton is not None else 8)]
    return parse_nfsm_head_sizes(text)


def parse_head_family(text: str) -> tuple[str, list[int] | None]:
    """``regular``, ``factored``, ``factored:5,12`` (the factored family with these head sizes) or ``registers``
    (the heads of a task with its own registers, Brandoit et al.'s TSO_N)."""
    name, _, sizes = text.partition(":")
    if name in (*HEAD_FAMILIES, "registers") and not sizes:
        return name, None
    if name == "factored":
        try:
            out = [int(v) for v in sizes.split(",")]
        except ValueError:
            out = []
        if out and all(2 <= v <= 4096 for v in out) and len(out) <= 4:
            return name, out
    raise SpecError(
        f"--head-family must be regular, factored, factored:D1,D2,… (≤ 4 sizes in 2..4096) or registers, got {text!r}"
    )


def head_family_of(cfg: TrainConfig, task: Task) -> Any:
    """The NFSM head family of the run (compiler/targets/nfsm/families.py): the --head-family, or regular for the
    anchored arm without one (``registers`` for a task with its own registers, e.g. TSO_N, whose targets are not an
    automaton's states); None when the run has none."""
    if cfg.model != "nfsm" or (cfg.head_family is None and cfg.arm != "anchored"):
        return None

    registers = getattr(task, "registers", None)
    if registers is not None:
        if cfg.head_family not in (None, "registers"):
            raise SpecError(f"task {task.name!r} has its own heads: --head-family registers, not {cfg.head_family!r}")
        return registers
    if cfg.head_family == "registers":
        raise SpecError(f"--head-family registers needs a task with registers (brandoit:TSO3..5), not {task.name!r}")
    if task.automaton is None or getattr(task, "readout", None) != "state":
        raise SpecError(f"--head-family and --arm anchored need a task whose targets are states, not {task.name!r}")
    key = (task.name, cfg.head_family or "regular")
    if key not in _FAMILIES:
        name, sizes = parse_head_family(key[1])
        _FAMILIES[key] = head_family(task.automaton, name, sizes)
    return _FAMILIES[key]


_FAMILIES: dict[tuple[str, str], Any] = {}  # (task, family) → HeadFamily: the search runs once per process


def _expansion(text: str) -> int:
    """K of ``auto:K`` (1 for ``auto``)."""
    if text == "auto":
        return 1
    head, _, k = text.partition(":")
    if head == "auto" and k.isdigit() and 1 <= int(k) <= 64:
        return int(k)
    raise SpecError(f"--nfsm-heads auto:K takes an integer K in 1..64, got {text!r}")


def task_of(cfg: TrainConfig) -> Task:
    """The run's task, judging the positions ``--labels`` asks for (SpecError if the task does not offer them)."""
    return get_task(cfg.task).with_labels(cfg.labels)


def model_config(cfg: TrainConfig, task: Task) -> ModelConfig:
    """The SequenceModel configuration of a run (see the module docstring for the flags' meaning)."""
    if cfg.init_from:  # the compiled model's architecture (nn/train/init_from.py)
        return init_model_config(cfg, task)
    if is_ref(cfg.model):
        return plugin_model_config(cfg, task)
    m, d = cfg.model, cfg.d_model
    args: dict[str, Any] = dict(cfg.model_args or {})
    if cfg.eig is not None:
        args[EIG_KEY[m]] = EIG[cfg.eig][m]
    if m in ("deltanet", "deltaproduct"):
        heads = cfg.heads or max(1, d // 32)
        args.update(heads=heads, head_dim=cfg.head_dim or max(1, d // heads))
        if m == "deltaproduct":
            args["n_h"] = cfg.n_h or 2
    elif m in ("transformer", "attention"):
        args["heads"] = cfg.heads or 4
    elif m == "nfsm":
        family = head_family_of(cfg, task)
        if family is not None:  # the authors' NFSM: the family's heads, every head starting on index 0
            args.update(heads=list(family.sizes), fixed_start=True)
        else:
            args["heads"] = parse_nfsm_heads(cfg.nfsm_heads or "auto", task.automaton)
        if cfg.gumbel is not None:
            args["gumbel"] = float(cfg.gumbel)
        if cfg.nu is not None:  # Brandoit et al.: argmax(θ/ν + G) forward, softmax(θ/ν + G) backward
            args.update(gumbel=float(cfg.nu if cfg.gumbel is None else cfg.gumbel), tau=float(cfg.nu))
        if cfg.nfsm_identity is not None:
            args["identity_bias"] = float(cfg.nfsm_identity)
        if cfg.nfsm_readout_std is not None:
            args["readout_std"] = float(cfg.nfsm_readout_std)
        if cfg.nfsm_conv:
            args["conv"] = int(cfg.nfsm_conv)
    if cfg.state_size is not None:
        args["state_size"] = cfg.state_size
    if cfg.short_conv is not None:
        args["short_conv"] = cfg.short_conv
    if cfg.dlr_init is not None and m in DLR_INITS[cfg.dlr_init]:
        args.update(DLR_INITS[cfg.dlr_init][m])
    if m in ("deltanet", "deltaproduct"):  # recorded in every run, so a run reloads with the form it trained
        args["form"] = cfg.delta_form or "fla"
        # fla's ShortConvolution has no bias (the default); recorded, so older runs (biased) are told apart
        args["conv_bias"] = bool(cfg.conv_bias)
    regression = task.kind == "regression"
    return ModelConfig(
        vocab=task.vocab_size,
        n_classes=task.n_classes,
        layer=m,
        n_layers=cfg.layers,
        d_model=d,
        layer_args=args,
        mlp_ratio=cfg.mlp_ratio,
        wrapper=cfg.wrapper or "fsa2rnn",
        dropout=cfg.dropout,
        input_dim=task.vocab_size if regression else None,
        answer_readout=getattr(task, "answer_readout", None),
    )


def plugin_model_config(cfg: TrainConfig, task: Task) -> ModelConfig:
    """The ModelConfig of a run of a plug-in named by import path: its ``--model-args`` as ``layer_args`` and its
    record (nn/plugins.py ``plugin_record``; this imports it). fla's layers get the eigenvalue range as
    ``eig`` (nn/layers/fla_adapter.py)."""
    obj = load(cfg.model)
    record = plugin_record(cfg.model, obj)
    args = dict(cfg.model_args or {})
    if cfg.eig is not None:
        args["eig"] = cfg.eig
    regression = task.kind == "regression"
    if record["kind"] == "model" and regression:
        raise SpecError(f"the whole model {cfg.model!r} reads symbol ids; task {task.name!r} has real-valued inputs "
                        "(train a plug-in layer on it instead)")  # fmt: skip
    return ModelConfig(
        vocab=task.vocab_size,
        n_classes=task.n_classes,
        layer=cfg.model,
        n_layers=cfg.layers,
        d_model=cfg.d_model,
        layer_args=args,
        mlp_ratio=cfg.mlp_ratio,
        wrapper=cfg.wrapper or "fsa2rnn",
        dropout=cfg.dropout,
        input_dim=task.vocab_size if regression else None,
        plugin=record,
    )


def check_run_plugin(
    mcfg: ModelConfig, where: str, plugins: tuple[str, ...] | list[str] = (), allow_changed: bool = False
) -> None:
    """A run's recorded plug-in may be rebuilt: named on the command line (``plugins``) or by an installed entry
    point (refused before importing anything otherwise), and its source unchanged unless ``allow_changed``."""
    if not is_ref(mcfg.layer):
        return
    guard(mcfg.layer, where, plugins)
    check_source(mcfg.plugin or {"ref": mcfg.layer}, where, allow_changed)


def read_run_record(text: str, where: str) -> tuple[TrainConfig, ModelConfig]:
    """(TrainConfig, ModelConfig) of the text of a RUN/config.json; SpecError naming ``where`` if it is not one."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise SpecError(f"{where}: {'the file is empty' if not text.strip() else 'not valid JSON'}") from None
    if not isinstance(data, dict) or data.get("format") != RUN_FORMAT:
        raise SpecError(f"{where}: not an fsa2rnn training run (format {RUN_FORMAT!r})")
    mcfg = ModelConfig.from_dict(data.get("model"))
    if mcfg.layer in ("deltanet", "deltaproduct") and not {"form", "output_norm"} & set(mcfg.layer_args):
        # every run records its DeltaNet form (model_config; from_compiled records output_norm): a run without
        # either was written before the layer had forms, with the bare layer
        mcfg.layer_args = {**mcfg.layer_args, "form": "plain"}
    if (
        mcfg.layer in ("deltanet", "deltaproduct")
        and "conv_bias" not in mcfg.layer_args
        and mcfg.layer_args.get("short_conv", True)
    ):
        # every run records conv_bias (model_config); a run without it was written while the short convolution
        # had a bias
        mcfg.layer_args = {**mcfg.layer_args, "conv_bias": True}
    return TrainConfig.from_dict(data.get("train")), mcfg


def load_run(
    run: str | Path, *, plugins: tuple[str, ...] | list[str] = (), allow_changed: bool = False
) -> tuple[SequenceModel, Task, TrainConfig]:
    """(SequenceModel in eval mode, Task, TrainConfig) of a run directory; SpecError/ModelFileError for a bad one.
    A run of a plug-in named by import path is rebuilt only when ``plugins`` names it (or an installed entry point
    declares it), and its source is unchanged (or ``allow_changed``): :func:`check_run_plugin`."""
    path = check_run_dir(run)
    cfg, mcfg = read_run_record(read_text(path / CONFIG), str(path / CONFIG))
    check_run_plugin(mcfg, repr(str(path)), plugins, allow_changed)
    _, tensors = load_checkpoint(path / MODEL)
    model = SequenceModel.from_config(mcfg)
    try:
        restore(model, tensors)
    except ModelFileError as exc:
        if not is_ref(mcfg.layer):
            raise
        why = f"the plug-in {mcfg.layer!r} now builds another model than {str(path)!r} holds ({exc})"
        raise SpecError(why) from None
    model.eval()
    return model, task_of(cfg), cfg


def run_record(cfg: TrainConfig, mcfg: ModelConfig, task: Task) -> dict[str, Any]:
    """RUN/config.json: the training config, the model config and the task's description."""
    model = mcfg.to_dict()
    if mcfg.layer in ("deltanet", "deltaproduct") and "conv_bias" not in mcfg.layer_args:
        # a model built without the key has the layer's default, no bias: recorded, since a record without it is
        # read as an older, biased run (read_run_record)
        model["layer_args"] = {**mcfg.layer_args, "conv_bias": False}
    return {
        "format": RUN_FORMAT,
        "train": cfg.to_dict(),
        "model": model,
        "task": {
            "name": task.name,
            "kind": task.kind,
            "vocab": task.vocab,
            "classes": task.classes,
            "chance": task.chance,
            "source": task.source,
            "supervision": task.supervision,
        },
    }
