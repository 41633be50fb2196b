"""Plug-in layers and whole models behind one interface (nn/plugins.py names them; nn/capabilities.py says what
they provide).

:class:`PluginLayer` holds a plug-in layer (``plugin_module``) and gives the block what a built-in layer gives: a
layer with the ``carry`` capability is called with its state; a forward-only layer carries the prefix of its inputs
instead, each chunk re-read with the prefix before it (quadratic in the length read; ``recurrent`` is False, as for
the Transformer), which a causal layer answers exactly. :class:`PluginModel` does the same for a whole model (ids in,
logits out). :func:`probe` checks a freshly built plug-in on a probe batch before any training: the output's shape,
finiteness and causality (the output at t must not depend on the inputs after t), each failure one PluginError
naming the plug-in.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from ...fsa.errors import FsaError, PluginError
from ..capabilities import layer_capabilities
from ..plugins import check_signature, kind_of, load

#: the probe batch: words and positions, and the cut points of the causality check
PROBE_BATCH, PROBE_LENGTH = 3, 12
#: relative tolerance of the causality check (float32 sums may be reassociated when the length changes)
CAUSAL_RTOL = 1e-4


def _tile(value: Any, reps: int) -> Any:
    if isinstance(value, torch.Tensor):
        return torch.cat([value] * reps, dim=0)
    if isinstance(value, dict):
        return {k: _tile(v, reps) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_tile(v, reps) for v in value)
    return value


class _Carrier(nn.Module):
    """The state protocol of a wrapped module: its own (``carry``) or the prefix of its inputs."""

    #: ``transition(x, steady=True)`` is passed on where the plug-in declares it (else ``transition(x)``)
    transition_steady = True

    def __init__(self, ref: str, module: nn.Module) -> None:
        super().__init__()
        self.ref = ref
        self.plugin_module = module
        self.caps = layer_capabilities(module)
        self.recurrent = "carry" in self.caps and getattr(module, "recurrent", True) is not False

    def _call(self, x: torch.Tensor, state: Any, return_state: bool) -> Any:
        inner = self.plugin_module
        if "carry" in self.caps:
            if state is None and not return_state:
                return inner(x)
            return inner(x, state, True)
        full = x if state is None else torch.cat([state["prefix"], x], dim=1)
        y = inner(full)
        if isinstance(y, tuple):  # a module that returns (output, extras): the output
            y = y[0]
        y = y[:, full.shape[1] - x.shape[1] :]
        return (y, {"prefix": full}) if (return_state or state is not None) else y

    def state_vector(self, state: Any) -> torch.Tensor | None:
        if "state" in self.caps:
            return self.plugin_module.state_vector(state)
        return None

    def set_state_vector(self, state: Any, vector: torch.Tensor) -> Any:
        if "state" not in self.caps:
            raise PluginError(f"plug-in {self.ref!r} has no state vector (no set_state_vector)")
        return self.plugin_module.set_state_vector(state, vector)

    def tile_state(self, state: Any, reps: int) -> Any:
        if "state" in self.caps:
            return self.plugin_module.tile_state(state, reps)
        return _tile(state, reps)

    def transition(self, x: torch.Tensor, steady: bool = False) -> torch.Tensor:
        inner = self.plugin_module
        if steady and getattr(inner, "transition_steady", False):
            return inner.transition(x, steady=True)
        return inner.transition(x)

    @property
    def transition_kind(self) -> str | None:
        return getattr(self.plugin_module, "transition_kind", None)


class PluginLayer(_Carrier):
    """A plug-in layer in a block: ``forward(x, state=None, return_state=False)`` as nn/layers/base.py states it."""

    def forward(self, x: torch.Tensor, state: Any = None, return_state: bool = False) -> Any:
        return self._call(x, state, return_state)


class PluginModel(_Carrier):
    """A plug-in whole model: ``forward(ids (B, T), state=None, return_state=False)`` → logits (B, T, C)."""

    def forward(self, ids: torch.Tensor, state: Any = None, return_state: bool = False) -> Any:
        return self._call(ids, state, return_state)


def build(ref: str, *args: int, **kwargs: Any) -> nn.Module:
    """The plug-in ``ref`` built with ``args`` (d_model, or n_symbols and n_classes) and its keyword arguments:
    the module it returns, unwrapped; PluginError naming it when it cannot be built."""
    obj = load(ref)
    kind = kind_of(obj)
    if (kind == "layer") != (len(args) == 1):
        want = "a layer (d_model, **args)" if len(args) == 1 else "a whole model (n_symbols, n_classes, **args)"
        raise PluginError(f"plug-in {ref!r} is a {kind}, used here as {want}")
    check_signature(ref, obj, kind, kwargs)
    try:
        module = obj(*args, **kwargs)
    except FsaError:  # the plug-in's own one-line refusal (fla's adapter: a missing extra, an --eig it lacks)
        raise
    except Exception as exc:  # the plug-in's own failure, named in one line
        first = (str(exc).splitlines() or [""])[0]
        raise PluginError(f"plug-in {ref!r} failed to build: {type(exc).__name__}: {first}") from None
    if not isinstance(module, nn.Module):
        raise PluginError(f"plug-in {ref!r} returned a {type(module).__name__}, not a torch.nn.Module")
    return module


@torch.no_grad()
def probe(ref: str, module: nn.Module, make_input: Any, want_last: int) -> None:
    """Run ``module`` (eval mode) on a seeded probe batch: its output must be (B, T, want_last), finite, and causal
    (changing the inputs after position t leaves the outputs up to t unchanged). ``make_input(gen)`` draws a batch."""
    was = module.training
    module.eval()
    try:
        gen = torch.Generator().manual_seed(0)
        x = make_input(gen)
        y = _output(ref, module, x)
        want = (x.shape[0], x.shape[1], want_last)
        if tuple(y.shape) != want:
            raise PluginError(f"plug-in {ref!r}: output of shape {tuple(y.shape)} on a probe batch, expected {want} "
                              "(batch, positions, features)")  # fmt: skip
        if not torch.isfinite(y).all():
            raise PluginError(f"plug-in {ref!r}: output on a probe batch at initialisation is not finite")
        for cut in (0, x.shape[1] // 2, x.shape[1] - 2):
            x2 = x.clone()
            x2[:, cut + 1 :] = make_input(gen)[:, cut + 1 :]
            y2 = _output(ref, module, x2)
            scale = float(y[:, : cut + 1].abs().max()) + 1e-6
            if float((y2[:, : cut + 1] - y[:, : cut + 1]).abs().max()) > CAUSAL_RTOL * scale:
                raise PluginError(f"plug-in {ref!r} is not causal: its output at position {cut} changes with the "
                                  f"inputs after it (probe batch)")  # fmt: skip
    finally:
        module.train(was)


def _output(ref: str, module: nn.Module, x: torch.Tensor) -> torch.Tensor:
    try:
        y = module(x)
    except Exception as exc:
        first = (str(exc).splitlines() or [""])[0]
        raise PluginError(f"plug-in {ref!r} failed on a probe batch: {type(exc).__name__}: {first}") from None
    if isinstance(y, tuple):
        y = y[0]
    if not isinstance(y, torch.Tensor):
        raise PluginError(f"plug-in {ref!r} returned a {type(y).__name__} on a probe batch, not a tensor")
    return y


def probe_layer(ref: str, module: nn.Module, d_model: int) -> None:
    """:func:`probe` for a layer: x (B, T, d_model) standard normal → (B, T, d_model)."""
    probe(ref, module, lambda g: torch.randn(PROBE_BATCH, PROBE_LENGTH, d_model, generator=g), d_model)


def probe_model(ref: str, module: nn.Module, vocab: int, n_classes: int) -> None:
    """:func:`probe` for a whole model: ids (B, T) in [0, vocab) → logits (B, T, n_classes)."""
    probe(ref, module, lambda g: torch.randint(0, vocab, (PROBE_BATCH, PROBE_LENGTH), generator=g), n_classes)


__all__ = ["PluginLayer", "PluginModel", "build", "probe", "probe_layer", "probe_model"]
