"""Trainable sequence layers, one interface (base.py): ``forward(x (B, T, d_model), state=None, return_state=False)
-> (B, T, d_model)``, ``transition(x)`` for inspection, and a carried state for reading long words in chunks.

=================  =========================================================  ==============================
name               class                                                      transition(x)
=================  =========================================================  ==============================
``deltaproduct``   :class:`DeltaProduct` (GH products, β ∈ [0, 1] or [0, 2])   (…, H, dk, dk) GH product
``deltanet``       :class:`DeltaNet` (DeltaProduct with n_h = 1)               (…, H, dk, dk)
``mamba``          :class:`SelectiveDiagonal` (eigenvalues [0, 1] or [−1, 1])  (…, D, N) diagonal
``mamba-minus``    :class:`MambaMinus` (Brandoit et al.'s Mamba⁻ block)         (…, D, N) diagonal in (−1, 1]
``aussm``          :class:`AUSSM` (adaptive unitary SSM, complex diagonal)      (…, D, N) unit-modulus diagonal
``pdssm``          :class:`PDSSM` (column one-hot P(x) times diagonal D(x))    (…, N, N) complex P(x)D(x)
``dlr``            :class:`DLR` (complex diagonal convolution)                 (…, H, N) complex diagonal
``dlr-prod``       :class:`DLRProd` (DLR with the kernel Re K · Im K)           (…, H, N) complex diagonal
``dss-exp``        :class:`DSSExp` (DSS_exp: ZOH-discretized diagonal SSM)      (…, H, N) complex diagonal
``nfsm``           :class:`NFSM` (straight-through table scan)                 (…, H, d) table
``lstm``           :class:`LSTM` (baseline)                                    —
``transformer``    :class:`Transformer` (causal baseline)                      —
``attention``      :class:`Attention` (the DLR paper's rotary attention block)  —
=================  =========================================================  ==============================

:data:`LAYERS` is the registry of layers (fsa2rnn.fsa.registry): the built-ins above are declared in fsa2rnn's
``fsa2rnn.layers`` entry points, an installed package adds its own there, and a script or notebook calls
:func:`register_layer`. An entry is a class or a function ``(d_model, **args)`` returning a ``torch.nn.Module`` that
maps (B, T, d_model) to (B, T, d_model) causally; :func:`build_layer` makes one from its name and keyword arguments
(what :class:`fsa2rnn.nn.model.ModelConfig` stores in ``layer_args``).
"""

from __future__ import annotations

from typing import Any

from ...fsa.errors import ConfigError, PluginError
from ...fsa.lazy import lazy_getattr
from ...fsa.registry import Registry

# the classes load torch: they are imported on first use, so that the registry (and `fsa2rnn train --help`) does not
__getattr__ = lazy_getattr(
    __name__,
    {
        "AUSSM": ("aussm", "AUSSM"),
        "Attention": ("attention", "Attention"),
        "DLR": ("dlr", "DLR"),
        "DLRProd": ("dlr", "DLRProd"),
        "DSSExp": ("dlr", "DSSExp"),
        "DeltaNet": ("delta_product", "DeltaNet"),
        "DeltaProduct": ("delta_product", "DeltaProduct"),
        "LSTM": ("lstm", "LSTM"),
        "MambaMinus": ("selective_diagonal", "MambaMinus"),
        "NFSM": ("nfsm", "NFSM"),
        "PDSSM": ("pdssm", "PDSSM"),
        "SATURATED_LOGIT": ("delta_product", "SATURATED_LOGIT"),
        "SelectiveDiagonal": ("selective_diagonal", "SelectiveDiagonal"),
        "SequenceLayer": ("base", "SequenceLayer"),
        "State": ("base", "State"),
        "Transformer": ("transformer", "Transformer"),
    },
)


def _check_layer(name: str, obj: Any) -> None:
    if not callable(obj):
        raise PluginError(f"{obj!r} is not callable: a layer is a class or a function (d_model, **args) → module")


#: name → layer class (or factory); the built-ins are fsa2rnn's ``fsa2rnn.layers`` entry points (pyproject.toml)
LAYERS: Registry[Any] = Registry("fsa2rnn.layers", "layer", check=_check_layer, unknown=ConfigError)


def register_layer(name: str, layer: Any, *, replace: bool = False) -> None:
    """Register ``layer`` (a class or a function ``(d_model, **args)`` → module, or a ``"module:attr"`` reference)
    under ``name``, for ``--model name`` in this process (scripts, notebooks); an installed package declares it in
    its ``fsa2rnn.layers`` entry points instead. A taken name raises PluginError unless ``replace``."""
    LAYERS.register(name, layer, replace=replace)


def build_layer(name: str, d_model: int, **kwargs: Any) -> Any:
    """The layer called ``name`` (a name of :data:`LAYERS`) of width ``d_model``; a bad name or argument raises
    :class:`ConfigError` naming it, a broken plug-in PluginError naming it."""
    layer = LAYERS.get(name)
    try:
        return layer(d_model, **kwargs)
    except TypeError as exc:  # an unknown keyword argument
        raise ConfigError(f"layer {name!r}: {exc}") from None


__all__ = [
    "AUSSM",
    "Attention",
    "LAYERS",
    "SATURATED_LOGIT",
    "ConfigError",
    "DLR",
    "DLRProd",
    "DSSExp",
    "DeltaNet",
    "DeltaProduct",
    "LSTM",
    "MambaMinus",
    "NFSM",
    "PDSSM",
    "SelectiveDiagonal",
    "SequenceLayer",
    "State",
    "Transformer",
    "build_layer",
    "register_layer",
]
