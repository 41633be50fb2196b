"""Training from compiled weights: ``fsa2rnn train TASK --init-from MODEL [--init-noise SIGMA]``.

The architecture comes from the compiled model through :meth:`SequenceModel.from_compiled` (single-layer
Householder → DeltaProduct, single-layer NFSM → NFSM): the run's architecture fields are set from it, and a flag
that sets one of them to anything else is refused (exit 2). The task must be the compiled automaton's word problem
(the same symbol and state names, the same transitions, one token per symbol). The weights are copied with the
embedding's rows in the task's token order (the padding token gets a zero row: for DeltaProduct a zero key, the
identity) and the classifier's rows in the task's class order; ``init_noise`` σ then adds σ·N(0, 1) to every
parameter (seeded by the run's seed), to show that training finds its way back. With ``--nfsm-conv K`` an NFSM
gets its convolution at the identity tap (nn/layers/nfsm.py ``conv_identity``: linear, w_{K−1} = 1), so the
compiled weights still compute what they compute without it.

The compiled weights realize the automaton exactly, so the run is at sequence accuracy 1.0 from step 0; AdamW
moves every weight by about the learning rate per step whatever the gradient's size, so keeping it there needs a
small learning rate (1e-3 or less) and no weight decay on the saturated logits (the trainer's default, 0).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np
import torch

from ...compiler.model import CompiledModel
from ...fsa.errors import SpecError
from ..model import ModelConfig, SequenceModel
from .runfiles import stream_seed

#: TrainConfig fields the compiled model determines
ARCH_FIELDS = ("model", "eig", "n_h", "layers", "d_model", "heads", "head_dim", "state_size", "nfsm_heads",
               "short_conv", "delta_form", "mlp_ratio", "wrapper", "dropout")  # fmt: skip
#: initialization settings, meaningless with compiled weights
INIT_FIELDS = ("nfsm_identity", "nfsm_readout_std")
_NOISE_STREAM = 4


def compiled_network(path: str) -> tuple[Any, SequenceModel]:
    """(CompiledModel, its SequenceModel in float64) of a model file; ModelFileError/ConstructionError (exit 2)
    when it is unreadable or does not map onto one SequenceModel layer."""
    compiled = CompiledModel.load(path)
    return compiled, SequenceModel.from_compiled(compiled)


def _arch_of(net: SequenceModel) -> dict[str, Any]:
    """The TrainConfig architecture fields that describe a from_compiled network."""
    c = net.config
    args = c.layer_args
    out: dict[str, Any] = {"model": c.layer, "layers": c.n_layers, "d_model": c.d_model, "mlp_ratio": 0.0,
                           "dropout": 0.0}  # fmt: skip
    if c.layer == "deltaproduct":
        out.update(eig="-1,1", heads=args["heads"], head_dim=args["head_dim"], n_h=args["n_h"], short_conv=False)
    elif c.layer == "nfsm":
        out["nfsm_heads"] = ",".join(str(d) for d in args["heads"])
    elif c.layer == "pdssm":
        out["state_size"] = args["state_size"]
    return out


def init_architecture(cfg: Any, task: Any, given: set[str] | None = None) -> Any:
    """The TrainConfig with the architecture of ``cfg.init_from`` (``cfg`` itself without it). A flag the user gave
    (``given``: the names of the flags on the command line) that disagrees with the compiled model is refused, even
    when it equals the default; without ``given``, a field set to something else than both its default and the
    compiled model's value is."""
    if not getattr(cfg, "init_from", None):
        return cfg
    compiled, net = compiled_network(cfg.init_from)
    check_task(compiled, task)
    arch = _arch_of(net)
    defaults = {f.name: f.default for f in dataclasses.fields(cfg)}
    for name in INIT_FIELDS:  # initializations the compiled weights replace
        if getattr(cfg, name) is not None:
            flag = f"--{name.replace('_', '-')}"
            raise SpecError(f"{flag} sets an initialization; --init-from takes the compiled weights")
    for name in ARCH_FIELDS:
        value = getattr(cfg, name)
        set_by_user = name in given if given is not None else value != defaults[name]
        if set_by_user and value != arch.get(name, defaults[name]):
            raise SpecError(
                f"--{name.replace('_', '-')} {value} conflicts with --init-from: the architecture comes from the "
                f"compiled model ({arch.get(name, defaults[name])!r})"
            )
    return dataclasses.replace(cfg, **{k: arch.get(k, defaults[k]) for k in ARCH_FIELDS})


def check_task(compiled: Any, task: Any) -> None:
    """The task must be the compiled automaton's word problem, one token per symbol."""
    a, b = compiled.target_automaton(), task.automaton
    if b is None or getattr(task, "readout", None) != "state" or getattr(task, "tokens_per_step", 1) != 1:
        raise SpecError(f"--init-from needs the word problem of an automaton (one token per symbol); {task.name!r} "
                        "is not one")  # fmt: skip
    if set(a.symbols) != set(b.symbols) or set(a.states) != set(b.states):
        raise SpecError(f"--init-from: the compiled model ({a.n_states} states, {a.n_symbols} symbols) and task "
                        f"{task.name!r} ({b.n_states} states, {b.n_symbols} symbols) name their symbols or states "
                        "differently")  # fmt: skip
    sym = [a.symbol_index(s) for s in b.symbols]
    st = np.array([a.state_index(s) for s in b.states])
    if not np.array_equal(st[b.transitions], a.transitions[sym][:, st]) or st[b.initial] != a.initial:
        raise SpecError(f"--init-from: the compiled model realizes another automaton than task {task.name!r}")


def init_model_config(cfg: Any, task: Any) -> ModelConfig:
    """The ModelConfig of a run initialized from ``cfg.init_from``: the compiled network's, with the task's
    vocabulary (its padding token) and classes."""
    _, net = compiled_network(cfg.init_from)
    d = net.config.to_dict()
    d.pop("format")
    d.update(vocab=task.vocab_size, n_classes=task.n_classes)
    if d["layer"] == "nfsm" and getattr(cfg, "gumbel", None) is not None:  # a training setting, not architecture
        d["layer_args"] = {**d["layer_args"], "gumbel": float(cfg.gumbel)}
    if d["layer"] == "nfsm" and getattr(cfg, "nfsm_conv", None):  # the convolution at its identity tap (load_init)
        d["layer_args"] = {**d["layer_args"], "conv": int(cfg.nfsm_conv), "conv_identity": True}
    return ModelConfig(**d)


@torch.no_grad()
def load_init(model: SequenceModel, cfg: Any, task: Any) -> None:
    """Copy the compiled weights into the run's model (module docstring) and add ``cfg.init_noise``·N(0, 1)."""
    compiled, net = compiled_network(cfg.init_from)
    a = compiled.target_automaton()
    src = net.state_dict()
    sym = torch.tensor([a.symbol_index(s) for s in task.automaton.symbols])
    cls = torch.tensor([a.state_index(s) for s in task.classes])
    for name, value in model.state_dict().items():
        if name not in src:  # an NFSM convolution (--nfsm-conv): its own identity tap, from the layer's init
            continue
        w = src[name]
        if name == "embedding.weight":
            full = torch.zeros_like(value)
            full[: len(sym)] = w[sym].to(value.dtype)  # the padding (and any other extra) token: a zero row
            w = full
        elif name.startswith("classifier."):
            w = w[cls]
        value.copy_(w.to(value.dtype))
    if cfg.init_noise > 0:
        gen = torch.Generator(device="cpu").manual_seed(stream_seed(cfg.seed, _NOISE_STREAM))
        for p in model.parameters():
            p.add_(cfg.init_noise * torch.randn(p.shape, generator=gen, dtype=p.dtype).to(p.device))
