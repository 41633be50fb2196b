"""SequenceModel: embedding (a linear input projection for real-valued inputs) → n_layers × block (norm, layer,
residual; norm, MLP, residual) → norm → per-position classifier, configured by :class:`ModelConfig`, a dataclass
that round-trips through JSON.

A block is the pre-norm residual block of fla and Mamba: x ← x + layer(norm(x)), then x ← x + MLP(norm(x)) (no
MLP when ``mlp_ratio`` is 0); ``wrapper`` picks the MLP and the initialisation around the layers (nn/wrapper.py:
fsa2rnn's or fla's ``DeltaNetForCausalLM``). Layers come from nn/layers by name (``deltaproduct``, ``deltanet``,
``mamba``, ``mamba-minus``, ``aussm``, ``pdssm``, ``dlr``, ``dlr-prod``, ``dss-exp``, ``nfsm``, ``lstm``,
``transformer``, ``attention``) with ``layer_args`` as their keyword arguments. Every layer carries a state, so
:meth:`SequenceModel.forward` can read a long word in chunks (``state=…, return_state=True``) and
:meth:`SequenceModel.predictor` plugs a model into :func:`fsa2rnn.nn.lmax.failing_length`.
:meth:`SequenceModel.from_compiled` loads compiled weights (nn/from_compiled.py).

An *answer readout* (``answer_readout = {"token": q, "classes": n}``; Brandoit et al.'s TSO_N, nn/tasks/tso.py): the
last n classes are an answer read at the positions whose input is token q, the others the states read everywhere
(the authors' N extra logits at the last position). The forward keeps both softmaxes as they are and only shifts,
by a constant carrying no gradient, the states' logits at q and the answers' elsewhere to at least
:data:`READOUT_MARGIN` below the others: the argmax is then the answer at q and the state elsewhere, while a
cross-entropy over either slice is unchanged (the trainer's answer term, nn/train/trainer.py).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any

import numpy as np
import torch
from torch import nn

from ..fsa.inputs import check_id_range
from .from_compiled import sequence_model_from_compiled
from .layers import LAYERS, ConfigError, State, build_layer
from .layers.plugin import PluginLayer, PluginModel, build, probe_layer, probe_model
from .plugins import is_ref, load, plugin_record
from .table_predict import NFSMTablePredictor, table_readable
from .wrapper import WRAPPERS, init_fla, make_mlp, norm_eps

NORMS = ("rms", "layer", "none")
#: the answer readout's gap between the logits read and the logits set aside (e^−30: nothing in a softmax)
READOUT_MARGIN = 30.0
CONFIG_FORMAT = "fsa2rnn.sequence_model/1"


def _jsonable(value: Any, where: str) -> Any:
    """Tuples → lists, recursively; anything JSON cannot hold raises ConfigError."""
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, where) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            raise ConfigError(f"{where}: keys must be strings, got {list(value)!r}")
        return {k: _jsonable(v, f"{where}.{k}") for k, v in value.items()}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise ConfigError(f"{where}: {value!r} ({type(value).__name__}) is not a JSON value")


@dataclass
class ModelConfig:
    """Everything that determines a :class:`SequenceModel`'s architecture (not its weights)."""

    vocab: int
    n_classes: int
    layer: str = "deltaproduct"
    n_layers: int = 1
    d_model: int = 64
    layer_args: dict[str, Any] = field(default_factory=dict)
    mlp_ratio: float = 4.0
    norm: str = "rms"
    dropout: float = 0.0
    #: features per position of real-valued inputs (B, T, input_dim), read by a linear projection instead of the
    #: token embedding (the DLR regression tasks); None for token ids
    input_dim: int | None = None
    #: a plug-in named by import path (``layer`` is then ``package.module:Name``, ``layer_args`` its arguments):
    #: nn/plugins.py's record {ref, kind ("layer" | "model"), distribution, version, source_hash}
    plugin: dict[str, Any] | None = None
    #: the answer readout (module docstring): {"token": the question token's id, "classes": the answers' count},
    #: the answers the last classes; None for none
    answer_readout: dict[str, int] | None = None
    #: the model around the layers (nn/wrapper.py): ``fsa2rnn`` (GELU MLP, PyTorch's init) | ``fla`` (fla's
    #: DeltaNetForCausalLM: gated MLP, N(0, 0.02²) init, no classifier bias)
    wrapper: str = "fsa2rnn"

    def __post_init__(self) -> None:
        for name in ("vocab", "n_classes", "n_layers", "d_model"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ConfigError(f"model config: {name} must be a positive integer, got {v!r}")
        if not is_ref(self.layer) and self.layer not in LAYERS:
            raise ConfigError(f"model config: layer {self.layer!r} is not one of {', '.join(LAYERS)}")
        if self.norm not in NORMS:
            raise ConfigError(f"model config: norm {self.norm!r} is not one of {', '.join(NORMS)}")
        if self.wrapper not in WRAPPERS:
            raise ConfigError(f"model config: wrapper {self.wrapper!r} is not one of {', '.join(WRAPPERS)}")
        if not isinstance(self.mlp_ratio, (int, float)) or isinstance(self.mlp_ratio, bool) or self.mlp_ratio < 0:
            raise ConfigError(f"model config: mlp_ratio must be a number ≥ 0, got {self.mlp_ratio!r}")
        if not isinstance(self.dropout, (int, float)) or not 0 <= self.dropout < 1:
            raise ConfigError(f"model config: dropout must lie in [0, 1), got {self.dropout!r}")
        if self.input_dim is not None and (
            not isinstance(self.input_dim, int) or isinstance(self.input_dim, bool) or self.input_dim < 1
        ):
            raise ConfigError(f"model config: input_dim must be a positive integer or null, got {self.input_dim!r}")
        if not isinstance(self.layer_args, dict):
            raise ConfigError(f"model config: layer_args must be a dict, got {self.layer_args!r}")
        self.layer_args = _jsonable(self.layer_args, "model config: layer_args")
        if self.plugin is not None and not (isinstance(self.plugin, dict) and self.plugin.get("ref") == self.layer):
            raise ConfigError(f"model config: plugin must be the record of {self.layer!r}, got {self.plugin!r}")
        if self.answer_readout is not None:
            r = self.answer_readout
            ok = isinstance(r, dict) and set(r) == {"token", "classes"}
            ok = ok and all(isinstance(v, int) and not isinstance(v, bool) for v in r.values())
            if not (ok and 0 <= r["token"] < self.vocab and 1 <= r["classes"] < self.n_classes):
                raise ConfigError(f"model config: answer_readout must be {{token: an id < vocab, classes: 1.."
                                  f"n_classes − 1}}, got {r!r}")  # fmt: skip
            if self.input_dim is not None or self.whole:
                raise ConfigError("model config: an answer readout reads token ids through fsa2rnn's classifier")
        if self.whole and self.input_dim is not None:
            raise ConfigError(f"model config: the whole model {self.layer!r} reads symbol ids, not real-valued inputs "
                              "(a task of real-valued inputs needs a layer)")  # fmt: skip

    @property
    def whole(self) -> bool:
        """Whether the model is a plug-in whole model (its own embedding and readout)."""
        return bool(self.plugin) and self.plugin.get("kind") == "model"

    def to_dict(self) -> dict[str, Any]:
        return {"format": CONFIG_FORMAT, **asdict(self)}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ModelConfig:
        """The config of a dict written by :meth:`to_dict`; unknown keys or a wrong format raise ConfigError."""
        if not isinstance(data, dict):
            raise ConfigError(f"model config: expected a JSON object, got {type(data).__name__}")
        data = dict(data)
        fmt = data.pop("format", CONFIG_FORMAT)
        if fmt != CONFIG_FORMAT:
            raise ConfigError(f"model config: format {fmt!r} is not {CONFIG_FORMAT!r}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ConfigError(f"model config: unknown keys {unknown} (known: {', '.join(sorted(known))})")
        missing = sorted(k for k in ("vocab", "n_classes") if k not in data)
        if missing:
            raise ConfigError(f"model config: missing keys {missing}")
        return cls(**data)

    @classmethod
    def from_json(cls, text: str) -> ModelConfig:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"model config: not valid JSON ({exc.msg} at position {exc.pos})") from None
        return cls.from_dict(data)


def answer_readout(logits: torch.Tensor, ids: torch.Tensor, token: int, n: int) -> torch.Tensor:
    """Logits (…, C) in float32 with the states' (the first C − n) shifted down at the positions where ``ids`` is
    ``token`` and the answers' (the last n) elsewhere, by a gradient-free constant that puts them at least
    :data:`READOUT_MARGIN` below the others (module docstring)."""
    logits = logits.float()
    states, answers = logits[..., :-n], logits[..., -n:]
    with torch.no_grad():
        at = (ids == token)[..., None]
        drop_states = (states.amax(-1, keepdim=True) - answers.amin(-1, keepdim=True) + READOUT_MARGIN).clamp(min=0)
        drop_answers = (answers.amax(-1, keepdim=True) - states.amin(-1, keepdim=True) + READOUT_MARGIN).clamp(min=0)
    zero = torch.zeros((), dtype=logits.dtype, device=logits.device)
    return torch.cat(
        [states - torch.where(at, drop_states, zero), answers - torch.where(at, zero, drop_answers)], dim=-1
    )


def with_identity_conv(net: SequenceModel, taps: int) -> SequenceModel:
    """A copy of an NFSM SequenceModel whose NFSM layers have a convolution of ``taps`` taps at the identity tap
    (nn/layers/nfsm.py ``conv_identity``): the same outputs, the other weights copied."""
    d = net.config.to_dict()
    d.pop("format")
    d["layer_args"] = {**d["layer_args"], "conv": int(taps), "conv_identity": True}
    out = SequenceModel.from_config(d).to(net.dtype)
    missing, unexpected = out.load_state_dict(net.state_dict(), strict=False)
    if unexpected or any(".conv." not in k for k in missing):
        raise ConfigError(f"with_identity_conv: weights do not match (missing {missing}, unexpected {unexpected})")
    return out.train(net.training)


def make_norm(kind: str, d: int, eps: float | None = None) -> nn.Module:
    if kind == "rms":
        return nn.RMSNorm(d, eps=eps)
    if kind == "layer":
        return nn.LayerNorm(d) if eps is None else nn.LayerNorm(d, eps=eps)
    return nn.Identity()


class Block(nn.Module):
    """x ← x + layer(norm(x)); x ← x + MLP(norm(x)) (the MLP only when ``mlp_ratio`` > 0)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        d = cfg.d_model
        eps = norm_eps(cfg.wrapper)
        self.norm1 = make_norm(cfg.norm, d, eps)
        if is_ref(cfg.layer):  # a plug-in by import path (nn/plugins.py), behind its adapter
            self.layer: nn.Module = PluginLayer(cfg.layer, build(cfg.layer, d, **cfg.layer_args))
        elif not LAYERS.is_builtin(cfg.layer):  # a plug-in registered by name (an entry point, register_layer)
            self.layer = PluginLayer(cfg.layer, build_layer(cfg.layer, d, **cfg.layer_args))
        else:
            self.layer = build_layer(cfg.layer, d, **cfg.layer_args)
        self.mlp = make_mlp(cfg.wrapper, d, cfg.mlp_ratio)
        self.norm2 = make_norm(cfg.norm, d, eps) if self.mlp is not None else None
        self.drop = nn.Dropout(cfg.dropout)

    def forward(
        self, x: torch.Tensor, state: State | None = None, return_state: bool = True
    ) -> tuple[torch.Tensor, State | None]:
        """(output, the layer's state after x); without ``return_state`` (and no state in) the state is None and
        the layer takes its whole-sequence path (e.g. the DLR's FFT convolution instead of its modal recurrence)."""
        if return_state or state is not None:
            y, state = self.layer(self.norm1(x), state, True)
        else:
            y = self.layer(self.norm1(x))
        x = x + self.drop(y)
        if self.mlp is not None:
            x = x + self.drop(self.mlp(self.norm2(x)))
        return x, state


class SequenceModel(nn.Module):
    """Per-position classifier over symbol sequences: ``forward(ids (B, T)) -> logits (B, T, n_classes)``.

    ``SequenceModel(vocab, n_classes, layer, n_layers, d_model, **options)`` with the options of
    :class:`ModelConfig` (``layer_args``, ``mlp_ratio``, ``norm``, ``dropout``, ``input_dim``); or
    :meth:`from_config`. With ``input_dim`` the inputs are real (B, T, input_dim), read by a linear projection.
    """

    def __init__(
        self,
        vocab: int,
        n_classes: int,
        layer: str = "deltaproduct",
        n_layers: int = 1,
        d_model: int = 64,
        **options: Any,
    ) -> None:
        super().__init__()
        try:
            cfg = ModelConfig(vocab, n_classes, layer, n_layers, d_model, **options)
        except TypeError as exc:
            raise ConfigError(f"SequenceModel: {exc}") from None
        if is_ref(cfg.layer) and cfg.plugin is None:  # named in Python: its record is made here
            cfg.plugin = plugin_record(cfg.layer, load(cfg.layer))
            if cfg.whole and cfg.input_dim is not None:
                raise ConfigError(f"the whole model {cfg.layer!r} reads symbol ids, not real-valued inputs")
        self.config = cfg
        #: a plug-in whole model (nn/layers/plugin.py PluginModel), or None: embedding, blocks and classifier
        self.whole: PluginModel | None = None
        if cfg.whole:
            self.whole = PluginModel(cfg.layer, build(cfg.layer, cfg.vocab, cfg.n_classes, **cfg.layer_args))
            self.embedding, self.norm, self.classifier = None, None, None  # type: ignore[assignment]
            self.blocks = nn.ModuleList()
            return
        if cfg.input_dim is None:
            self.embedding: nn.Module = nn.Embedding(cfg.vocab, cfg.d_model)
        else:
            self.embedding = nn.Linear(cfg.input_dim, cfg.d_model)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.norm = make_norm(cfg.norm, cfg.d_model, norm_eps(cfg.wrapper))
        self.classifier = nn.Linear(cfg.d_model, cfg.n_classes, bias=cfg.wrapper != "fla")
        if cfg.wrapper == "fla":
            mlps = [b.mlp for b in self.blocks if b.mlp is not None]
            init_fla(self.embedding, mlps, self.classifier, cfg.n_layers)

    @classmethod
    def from_config(cls, cfg: ModelConfig | dict[str, Any] | str) -> SequenceModel:
        """A freshly initialized model of a config (a ModelConfig, its dict or its JSON)."""
        if isinstance(cfg, str):
            cfg = ModelConfig.from_json(cfg)
        elif isinstance(cfg, dict):
            cfg = ModelConfig.from_dict(cfg)
        d = asdict(cfg)
        return cls(d.pop("vocab"), d.pop("n_classes"), d.pop("layer"), d.pop("n_layers"), d.pop("d_model"), **d)

    @classmethod
    def from_compiled(cls, model: Any, *, dtype: torch.dtype = torch.float64, nfsm_conv: int = 0) -> SequenceModel:
        """The conversion of a compiled model (a CompiledModel or a model file) into trainable layers: a
        SequenceModel computing what it computes, in eval mode (nn/from_compiled.py: single-layer Householder →
        DeltaProduct, single-layer NFSM → NFSM, PD-SSM → PDSSM; anything else raises ConstructionError saying why).
        ``nfsm_conv`` K > 0 gives an NFSM layer the convolution of K taps (nn/layers/nfsm.py) at its identity tap, so
        that the model still computes what the compiled one does. To run a compiled model use its executors
        (``fsa2rnn.nn.load_model``, ``fsa2rnn.compiler.load_executor``)."""
        net = sequence_model_from_compiled(cls, model, dtype=dtype)
        if nfsm_conv and net.config.layer == "nfsm":
            net = with_identity_conv(net, nfsm_conv)
        return net

    @property
    def dtype(self) -> torch.dtype:
        return next(self.parameters()).dtype

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    @property
    def recurrent(self) -> bool:
        """Whether every layer carries a fixed-size state (else a chunk re-reads the prefix: attention, a
        forward-only plug-in)."""
        if self.whole is not None:
            return self.whole.recurrent
        return all(getattr(b.layer, "recurrent", True) for b in self.blocks)

    def check_plugin(self) -> None:
        """A plug-in checked on a probe batch before any training (nn/layers/plugin.py ``probe``): its output's
        shape, finiteness and causality; PluginError naming it. A no-op for built-in layers."""
        cfg = self.config
        if self.whole is not None:
            probe_model(cfg.layer, self.whole.plugin_module, cfg.vocab, cfg.n_classes)
            return
        for block in self.blocks[:1]:
            if isinstance(block.layer, PluginLayer):
                probe_layer(cfg.layer, block.layer.plugin_module, cfg.d_model)

    # ------------------------------------------------------------------ forward
    def features(
        self, ids: torch.Tensor, state: list[State] | None = None, return_state: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, list[State]]:
        """The normalized output of the last block, (B, T, d_model): what the classifier reads."""
        if self.whole is not None:
            raise ConfigError(f"the whole model {self.config.layer!r} has no features: it maps ids to logits")
        x = self._embed(torch.as_tensor(ids))
        states = []
        for i, block in enumerate(self.blocks):
            x, st = block(x, None if state is None else state[i], return_state)
            states.append(st)
        x = self.norm(x)
        return (x, states) if return_state else x

    def _embed(self, ids: torch.Tensor) -> torch.Tensor:
        """Token ids (B, T) through the embedding, or real inputs (B, T, input_dim) through the input projection."""
        weight = self.embedding.weight
        if self.config.input_dim is not None:
            if ids.dim() != 3 or ids.shape[-1] != self.config.input_dim or not ids.dtype.is_floating_point:
                raise ConfigError(
                    f"SequenceModel: inputs must be a float tensor (B, T, {self.config.input_dim}), "
                    f"got {tuple(ids.shape)} {ids.dtype}"
                )
            return self.embedding(ids.to(device=weight.device, dtype=weight.dtype))
        if ids.dim() != 2 or ids.dtype.is_floating_point:
            raise ConfigError(f"SequenceModel: ids must be an integer tensor (B, T), got {tuple(ids.shape)}")
        check_id_range(ids, self.config.vocab)
        return self.embedding(ids.to(weight.device).long())

    def forward(
        self, ids: torch.Tensor, state: list[State] | None = None, return_state: bool = False
    ) -> torch.Tensor | tuple[torch.Tensor, list[State]]:
        """Logits (B, T, n_classes); with ``return_state`` also the per-layer states that continue the words."""
        if self.whole is not None:
            ids = torch.as_tensor(ids)
            if ids.dim() != 2 or ids.dtype.is_floating_point:
                raise ConfigError(f"SequenceModel: ids must be an integer tensor (B, T), got {tuple(ids.shape)}")
            check_id_range(ids, self.config.vocab)
            return self.whole(ids.to(self.device).long(), state, return_state)
        if not return_state:
            return self._readout(self.classifier(self.features(ids, state)), ids)
        x, states = self.features(ids, state, True)
        return self._readout(self.classifier(x), ids), states

    def _readout(self, logits: torch.Tensor, ids: Any) -> torch.Tensor:
        """The answer readout (module docstring), when the config has one."""
        r = self.config.answer_readout
        if r is None:
            return logits
        return answer_readout(logits, torch.as_tensor(ids).to(logits.device), r["token"], r["classes"])

    # ------------------------------------------------------------------ prediction helpers
    @torch.no_grad()
    def predict_states(
        self, ids: torch.Tensor, lengths: torch.Tensor | None = None, *, chunk: int | None = None
    ) -> torch.Tensor:
        """argmax class after each symbol, (B, T) int64 (or (T,) for a 1-D word); −1 past each word's length.
        Runs in eval mode (the NFSM's exact scan); ``chunk`` reads the words ``chunk`` symbols at a time, carrying
        every layer's state."""
        ids = torch.as_tensor(ids).long()
        if ids.dim() == 1:
            return self.predict_states(
                ids[None], None if lengths is None else torch.as_tensor(lengths)[None], chunk=chunk
            )[0]
        pad = None
        if lengths is not None:
            lengths = torch.as_tensor(lengths, device=ids.device).long()
            pad = torch.arange(ids.shape[1], device=ids.device)[None, :] >= lengths[:, None]
            ids = ids.masked_fill(pad, 0)  # causal layers: padding never reaches earlier positions
        was = self.training
        self.eval()
        try:
            step = ids.shape[1] if chunk is None else int(chunk)
            out, state = [], None
            for s in range(0, ids.shape[1], max(step, 1)):
                logits, state = self(ids[:, s : s + step], state, True)
                out.append(logits.argmax(-1))
            pred = torch.cat(out, dim=1) if out else ids.new_zeros(ids.shape)
        finally:
            self.train(was)
        return pred if pad is None else pred.masked_fill(pad.to(pred.device), -1)

    def predictor(self, device: torch.device | str | None = None, *, read: str = "auto"):
        """The chunked protocol of :func:`fsa2rnn.nn.lmax.failing_length`: ``predict(inputs, state) ->
        (predictions, state)`` on numpy arrays, carrying every layer's state between calls (eval mode).
        ``read``: ``"auto"`` reads a one-layer NFSM through its tables (nn/table_predict.py: a table scan and one
        output per (token, configuration) pair; the model must not change meanwhile), ``"logits"`` runs the forward
        at every position (the reference)."""
        if read not in ("auto", "logits"):
            raise ConfigError(f"SequenceModel.predictor: unknown read {read!r} (choose from auto, logits)")
        if read == "auto" and table_readable(self):
            return NFSMTablePredictor(self, device)
        dev = torch.device(device) if device is not None else self.device

        @torch.no_grad()
        def predict(inputs: np.ndarray, state: Any) -> tuple[np.ndarray, Any]:
            was = self.training
            self.eval()
            try:
                logits, state = self(torch.as_tensor(np.asarray(inputs), device=dev).long(), state, True)
            finally:
                self.train(was)
            return logits.argmax(-1).cpu().numpy(), state

        return predict

    def symbol_transitions(self) -> torch.Tensor:
        """The first layer's transition A(x) of every symbol (vocab, …): the embedding through the first block's
        norm and :meth:`transition` (deeper layers read context-dependent inputs, so only the first is per symbol)."""
        if self.config.input_dim is not None:
            raise ConfigError("SequenceModel: a model of real-valued inputs (input_dim) has no per-symbol transitions")
        if self.whole is not None:
            raise ConfigError(f"the whole model {self.config.layer!r} has no per-symbol transitions")
        block = self.blocks[0]
        return block.layer.transition(block.norm1(self.embedding.weight))

    @torch.no_grad()
    def nfsm_tables(self, n_symbols: int) -> tuple[Any, Any]:
        """A one-layer NFSM's hard tables σ_x of the first ``n_symbols`` tokens (n_symbols, H, d_max) and its start
        indices (H,), as numpy arrays, read in eval mode (the training mode is restored)."""
        was = self.training
        self.eval()
        try:
            tables = self.symbol_transitions()[:n_symbols].cpu().numpy()
            start = self.blocks[0].layer.start_indices().cpu().numpy()
        finally:
            self.train(was)
        return tables, start
