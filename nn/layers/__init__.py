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

:func:`build_layer` makes one from its name and keyword arguments (what :class:`fsa2rnn.nn.model.ModelConfig`
stores in ``layer_args``).
"""

from __future__ import annotations

from typing import Any

from .attention import Attention
from .aussm import AUSSM
from .base import ConfigError, SequenceLayer, State
from .delta_product import SATURATED_LOGIT, DeltaNet, DeltaProduct
from .dlr import DLR, DLRProd, DSSExp
from .lstm import LSTM
from .nfsm import NFSM
from .pdssm import PDSSM
from .selective_diagonal import MambaMinus, SelectiveDiagonal
from .transformer import Transformer

LAYERS: dict[str, type[SequenceLayer]] = {
    "deltaproduct": DeltaProduct,
    "deltanet": DeltaNet,
    "mamba": SelectiveDiagonal,
    "mamba-minus": MambaMinus,
    "aussm": AUSSM,
    "pdssm": PDSSM,
    "dlr": DLR,
    "dlr-prod": DLRProd,
    "dss-exp": DSSExp,
    "nfsm": NFSM,
    "lstm": LSTM,
    "transformer": Transformer,
    "attention": Attention,
}


def build_layer(name: str, d_model: int, **kwargs: Any) -> SequenceLayer:
    """The layer called ``name`` (a key of :data:`LAYERS`) of width ``d_model``; a bad name or argument raises
    :class:`ConfigError` naming it."""
    if name not in LAYERS:
        raise ConfigError(f"unknown layer {name!r} (choose from {', '.join(LAYERS)})")
    try:
        return LAYERS[name](d_model, **kwargs)
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
]
