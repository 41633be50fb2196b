"""What every trainable sequence layer shares: the interface, the carried state, the configuration error.

A layer maps (B, T, d_model) → (B, T, d_model) causally (DLR with ``bidirectional=True`` excepted) and exposes:

- ``forward(x, state=None, return_state=False)``: ``state`` None starts from the layer's initial state; a state
  returned by an earlier call continues the same sequences, so a long word can be read in chunks (each layer
  documents what its state holds; states are dicts of tensors, detach them between chunks if you train through
  them). With ``return_state=True`` the call returns ``(y, state)``.
- ``transition(x)``: the per-input transition A(x) of the layer's recurrence for inspection (a GH product, a
  diagonal, a table), for inputs x of shape (…, d_model) read as single tokens with no history; layers with a
  short convolution also take ``steady=True``: x read after x x … x, the convolution's window full of x (the
  transition of x inside a long run of x).
- ``state_vector(state)`` / ``set_state_vector(state, vector)`` / ``tile_state(state, reps)``: the carried state
  as one vector per word, its inverse (the state with that vector, the rest — a convolution's window — kept from
  ``state``), and the state repeated along the batch (for probes that read hidden states, realize/probe.py, and
  for perturbing hidden states).
- ``recurrent``: True when the state has a fixed size (every layer but the Transformer, whose state is the
  prefix of its inputs).
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from ...fsa.errors import ConfigError  # noqa: F401 (re-exported: the old import path)

State = dict[str, Any]


class SequenceLayer(nn.Module):
    """Base class of the layers in nn/layers (see the module docstring for the interface)."""

    recurrent: bool = True

    def forward(self, x: torch.Tensor, state: State | None = None, return_state: bool = False):  # pragma: no cover
        raise NotImplementedError

    def transition(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError(f"{type(self).__name__} has no input-determined linear transition")

    def state_vector(self, state: State) -> torch.Tensor | None:
        """The carried state as one flat vector per word, (B, D) (what realize/probe.py reads as the hidden state);
        None for a layer whose state has no fixed size."""
        return None

    def set_state_vector(self, state: State, vector: torch.Tensor) -> State:
        """The inverse of :meth:`state_vector`: a new state whose vector is ``vector`` (B, D), every other entry of
        ``state`` (a short convolution's window) kept; ``state`` is not modified."""
        raise NotImplementedError(f"{type(self).__name__} has no state vector")

    def tile_state(self, state: State, reps: int) -> State:
        """The state with every word repeated ``reps`` times along the batch, as a batch of ``reps`` copies."""
        return {k: None if v is None else torch.cat([v] * reps, dim=0) for k, v in state.items()}

    @staticmethod
    def _out(y: torch.Tensor, state: State, return_state: bool):
        return (y, state) if return_state else y

    @staticmethod
    def _tokens(x: torch.Tensor, repeat: int = 1) -> tuple[torch.Tensor, tuple[int, ...]]:
        """(…, d) → (N, repeat, d) constant sequences x x … x, and the leading shape to restore."""
        lead = tuple(x.shape[:-1])
        return x.reshape(-1, 1, x.shape[-1]).expand(-1, repeat, -1), lead


def check_choice(layer: str, name: str, value: Any, allowed: tuple) -> Any:
    """``value`` must be one of ``allowed`` (lists compare as tuples, so JSON round trips pass)."""
    v = tuple(value) if isinstance(value, list) else value
    if v not in allowed:
        raise ConfigError(f"{layer}: {name}={value!r} is not one of {', '.join(repr(a) for a in allowed)}")
    return v


def is_finite_number(x: Any) -> bool:
    """An int or float (not a bool) that is finite."""
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def check_positive(layer: str, **values: int) -> None:
    for name, v in values.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ConfigError(f"{layer}: {name} must be a positive integer, got {v!r}")


def lecun_normal_(linear: nn.Linear) -> None:
    """flax's default initialization of a dense layer: weights N(0, 1/fan_in) truncated at ±2 standard deviations
    (rescaled so that the variance stays 1/fan_in), bias zero."""
    std = 1.0 / math.sqrt(linear.in_features) / 0.87962566103423978  # the std of N(0, 1) truncated to [−2, 2]
    with torch.no_grad():
        nn.init.trunc_normal_(linear.weight, std=std, a=-2 * std, b=2 * std)
        if linear.bias is not None:
            linear.bias.zero_()
