"""The arguments of ``fsa2rnn train``, defined once for its two entry points: the CLI command (cli/train.py) and
``torchrun --nproc-per-node N -m fsa2rnn.cli.train ARGS`` (which runs the same command). Importing this module never
imports torch. Every option defaults to None so that a preset can fill in the flags the user does not give.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click
from click.core import ParameterSource

from ..nn.layers import LAYERS
from ..nn.limits import LIMITS, limit_help
from ..nn.lmax import DEFAULT_CAP
from .limit_options import checked

TRAIN_HELP = """Train a model on TASK (a paper task such as grazzi:parity or brandoit:FF, any SPEC — its word problem —
or SPEC:accept; see `fsa2rnn tasks`) and evaluate its length generalization.

Writes RUN/config.json, RUN/model.safetensors (the last checkpoint), RUN/metrics.jsonl, RUN/eval.json and
RUN/curves.png; with --seeds, one run per seed in RUN/seed-S and RUN/summary.json. TASK may be left out with
--preset (the preset's task). Ctrl-C writes a checkpoint at the current step; `fsa2rnn train --out RUN --resume`
continues it exactly (the stored settings are used; a flag that disagrees with them is refused). Every numeric
option is checked against its stated limit (its Limit below; docs/limits.md) before any work."""

_OPTIONS: list[tuple[tuple[str, ...], dict[str, Any]]] = [
    (
        ("--model",),
        dict(
            help=f"Architecture: {'|'.join(LAYERS.names())} (default deltanet), or a plug-in layer or whole model "
            "package.module:Name (docs: Your own model)."
        ),
    ),
    (
        ("--model-args",),
        dict(help='A plug-in\'s keyword arguments as a JSON object, e.g. \'{"hidden": 32}\' (plug-ins only).'),
    ),
    (
        ("--allow-changed-plugin",),
        dict(is_flag=True, default=None, help="--resume a run whose plug-in's source changed since it was trained."),
    ),
    (("--eig",), dict(help="Eigenvalue range of the transitions: 0,1 or -1,1 (deltanet, deltaproduct, mamba).")),
    (("--n-h",), dict(type=int, help="DeltaProduct: Householder steps per token (default 2).")),
    (("--layers",), dict(type=int, help="Number of blocks (default 1).")),
    (("--d-model",), dict(type=int, help="Model width (default 64).")),
    (
        ("--heads",),
        dict(type=int, help="Heads of deltanet, deltaproduct (default d_model/32), transformer and attention (4)."),
    ),
    (("--head-dim",), dict(type=int, help="Key dimension of deltanet/deltaproduct heads (default d_model/heads).")),
    (
        ("--state-size",),
        dict(
            type=int,
            help="State per channel: mamba, mamba-minus, aussm (16), dlr, dlr-prod, dss-exp (64); pdssm N (d_model).",
        ),
    ),
    (
        ("--nfsm-heads",),
        dict(
            help="NFSM heads: auto (point tracking for groups, else one head of |Q|), auto:K (K times the "
            "indices), single, 4x11, 8,8,6."
        ),
    ),
    (
        ("--gumbel",),
        dict(type=float, help="NFSM: scale of the Gumbel noise in training (default 1, or ν with --nu); 0: no noise."),
    ),
    (
        ("--nfsm-identity",),
        dict(type=float, help="NFSM init: add B to the logit bias of every θ[k, k], tables start as the identity (0)."),
    ),
    (
        ("--nfsm-readout-std",),
        dict(type=float, help="NFSM init: draw the layer's output projection from N(0, S²) (default: Linear's)."),
    ),
    (
        ("--nfsm-conv",),
        dict(type=int, help="NFSM: a causal depthwise convolution of K taps (SiLU) before each layer's logits, as "
             "Brandoit et al.'s code has on TSO_N (K = 2); 0: none (default)."),
    ),
    (
        ("--short-conv/--no-short-conv",),
        dict(default=None, help="Causal convolutions (k = 4) on q, k, v (default on)."),
    ),
    (
        ("--conv-bias/--no-conv-bias",),
        dict(
            default=None,
            help="deltanet/deltaproduct: a bias in the short convolutions (default off, as fla's ShortConvolution; "
            "on: the layer as fsa2rnn built it before, for comparisons).",
        ),
    ),
    (
        ("--delta-form",),
        dict(
            help="deltanet/deltaproduct form: fla (per-head output RMSNorm, Xavier init of gain 2^-2.5, no beta "
            "bias; default) or plain (no output norm, PyTorch's init, a beta bias)."
        ),
    ),
    (
        ("--dlr-init",),
        dict(
            help="dlr/dlr-prod/dss-exp initialisation: default (the layer's: the DLR paper's local decay, DSS's HiPPO "
            "frequencies) or atomic (the authors' atomic tasks: DLR |lambda| ~ 1, DSS_exp linear Lambda, "
            "Delta in [1e-4, 1e-2])."
        ),
    ),
    (("--mlp-ratio",), dict(type=float, help="MLP width / d_model in every block; 0: no MLP (default 4).")),
    (
        ("--wrapper",),
        dict(
            help="The model around the layers: fsa2rnn (GELU MLP, PyTorch's init; default) or fla (fla's "
            "DeltaNetForCausalLM, the Grazzi et al. runs' model: gated MLP, N(0, 0.02^2) init, no classifier bias)."
        ),
    ),
    (("--dropout",), dict(type=float, help="Dropout after the layer and the MLP (default 0).")),
    (("--train-length",), dict(help="Training lengths MIN..MAX, uniform (default: the task's, e.g. 3..40).")),
    (
        ("--labels",),
        dict(
            help="Judged positions: answer (each word's answer only; the default of grazzi:parity, grazzi:modarith) "
            "or dense (every position; the default of word problems)."
        ),
    ),
    (
        ("--loss",),
        dict(
            help="uniform; first-error: positions after a word's first error weighted exp(-3(t-t*)); balanced: "
            "that weighting times a class balance (count^-0.5), each word's weighted mean (Brandoit et al.)."
        ),
    ),
    # Brandoit et al.'s NFSM recipe (nn/train/objectives.py, docs/reproductions.md)
    (
        ("--arm",),
        dict(
            help="NFSM: free (the model's loss, default) or anchored (heads supervised on their codes; with several "
            "layers, the top layer's)."
        ),
    ),
    (
        ("--head-family",),
        dict(
            help="NFSM heads with known codes, every head starting on 0: regular (one head of |Q|), factored "
            "(quotient heads of a group), factored:5,12 (given sizes) or registers (a task's own heads: "
            "brandoit:TSO3..5). Default with --arm anchored: regular (registers where the task has them)."
        ),
    ),
    (("--nu",), dict(type=float, help="NFSM: ν, the Gumbel noise scale and the softmax temperature (authors': 0.5).")),
    (("--explore",), dict(type=float, help="NFSM: exploration penalty β, free loss (authors': 0.03; default 0).")),
    (("--anchor-explore",), dict(type=float, help="NFSM: β while anchored (authors': 0.01; default 0).")),
    (
        ("--answer-term/--no-answer-term",),
        dict(default=None, help="A task with an answer readout (TSO_N): the answer's own cross-entropy from step 0, "
             "the state the target at '?' (the authors'; default); --no-answer-term: the answer replaces the state "
             "target at '?' inside the arm's loss."),
    ),
    (
        ("--keep-best/--no-keep-best",),
        dict(default=None, help="End on the best validated weights, saved as the run's model (default: last)."),
    ),
    (("--steps",), dict(type=int, help="Optimizer steps (default 2000).")),
    (("--batch",), dict(type=int, help="Global batch size in words (default 64).")),
    (("--lr",), dict(type=float, help="Peak learning rate of AdamW (default 1e-3).")),
    (("--min-lr",), dict(type=float, help="Learning rate at the end of the cosine schedule (default 1e-6).")),
    (("--weight-decay",), dict(type=float, help="AdamW weight decay on matrices (default 0).")),
    (("--warmup",), dict(type=float, help="Linear warmup, as a fraction of the steps (default 0.1).")),
    (("--clip",), dict(type=float, help="Gradient clipping norm; 0: none (default 1).")),
    (("--seed",), dict(type=int, help="Seed of initialization, data and noise (default 42).")),
    (
        ("--seeds",),
        dict(
            help="One run per seed, in turn (side by side with --jobs N or --launcher): 42,43,44 or 42..46; "
            "writes RUN/summary.json."
        ),
    ),
    (
        ("--lr-grid",),
        dict(
            help="With --seeds: train every rate (paper: 1e-2,1e-3,5e-4,1e-4, or a list) with every seed in "
            "RUN/lr-RATE/seed-S, pick the rate by the median score, report its best and median."
        ),
    ),
    (("--device",), dict(help="cpu or cuda (default cpu).")),
    (("--nproc",), dict(type=int, help="Data-parallel processes: launches torchrun --nproc-per-node N.")),
    (
        ("--init-from",),
        dict(
            type=click.Path(dir_okay=False),
            help="Start from a compiled model's weights "
            "(single-layer Householder or NFSM; its architecture, so no architecture flags).",
        ),
    ),
    (("--init-noise",), dict(type=float, help="With --init-from: add σ·N(0, 1) to every weight (default 0).")),
    (("--resume",), dict(is_flag=True, default=None, help="Continue the run in RUN from its last checkpoint.")),
    (("--out",), dict(required=True, type=click.Path(file_okay=False), help="The run directory RUN.")),
    (("--preset",), dict(help="grazzi-parity|grazzi-modarith|grazzi-s5|brandoit|dlr|dlr-long: the paper's settings.")),
    (
        ("--scale",),
        dict(
            help="paper (full scale, default), small (≤ about 5 minutes per run on a 2-core CPU) or, where the "
            "preset has it, medium (≤ about 30 minutes per run on a 2-core CPU; resumable with --resume) or tiny (a "
            "few steps: the smoke test's). With TASK, --model and --arm (or --eig), a reproduction's cell is exactly "
            "this run."
        ),
    ),
    (("--log-every",), dict(type=int, help="Steps between metrics records (default 10).")),
    (("--val-every",), dict(type=int, help="Steps between validations (default 100; a preset's, at most steps/4 for "
                                           "a shorter --steps).")),
    (("--early-stop",), dict(type=int, help="Stop after K validations in a row at sequence accuracy 1; 0: off.")),
    (("--checkpoint-every",), dict(type=int, help="Steps between checkpoints (default 200).")),
    (("--eval-lengths",), dict(help="Evaluation lengths, e.g. 40,80,160 (default: training max, doubling, ×8).")),
    (("--eval-range",), dict(help="Also judge answers on lengths uniform in MIN..MAX (the paper's 40..256).")),
    (("--samples",), dict(type=int, help="Words per evaluation length and for L_max (default 512).")),
    (("--lmax/--no-lmax",), dict(default=None, help="Search the failing length L_max (default: on).")),
    (("--cap",), dict(type=int, help=f"Longest length the L_max search tries (default {DEFAULT_CAP}).")),
    (("--threshold",), dict(type=float, help="Sequence accuracy below which a length fails (default 1.0).")),
    (
        ("--protocol",),
        dict(help="L_max search: prefix (prefixes of the same words, default) or brandoit (fresh words per length)."),
    ),
    (("--json", "as_json"), dict(is_flag=True, default=False, help="Print one JSON object.")),
    (
        ("--quiet",),
        dict(
            is_flag=True,
            default=None,
            help="No progress on stderr (shown by default; on a terminal a bar, else a line every 30 s).",
        ),
    ),
]


def _with_limits(decls: tuple[str, ...], kw: dict[str, Any]) -> dict[str, Any]:
    """An option with a row in fsa2rnn.nn.limits.LIMITS is checked by it while the command line is parsed (before
    any work), and its --help states the accepted range."""
    name = decls[0].lstrip("-").split("/")[0].replace("-", "_")
    if name in LIMITS and kw.get("type") in (int, float):
        kw = {**kw, "type": checked(name), "help": kw["help"] + limit_help(name)}
    return kw


def train_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Apply TASK and every option of ``fsa2rnn train`` to a click command function."""
    for decls, kw in reversed(_OPTIONS):
        fn = click.option(*decls, **_with_limits(decls, kw))(fn)
    return click.argument("task", required=False, metavar="[TASK]")(fn)


def given_args(ctx: click.Context, *, drop: tuple[str, ...] = ("nproc",)) -> list[str]:
    """The command line the user gave (parameters read from it), rebuilt, without ``drop``: what torchrun's
    workers receive."""
    args: list[str] = []
    for param in ctx.command.params:
        name = param.name
        if name in drop or ctx.get_parameter_source(name) is not ParameterSource.COMMANDLINE:
            continue
        value = ctx.params[name]
        if isinstance(param, click.Argument):
            args.append(str(value))
        elif param.is_flag and param.secondary_opts:
            args.append(param.opts[0] if value else param.secondary_opts[0])
        elif param.is_flag:
            if value:
                args.append(param.opts[0])
        else:
            args.append(f"{param.opts[0]}={value}")
    return args
