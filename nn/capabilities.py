"""What each tool needs from a model: one table of capabilities, read from the modules, never from their classes.

=============  ==========================================================  =============================================
capability     what the module provides                                    what it serves
=============  ==========================================================  =============================================
``forward``    ``forward(x)``: (B, T, d_model) → (B, T, d_model) causally   training, ``eval``, L_max, L*, sample
               (a whole model: ids (B, T) → logits (B, T, C))               checks (every model has it)
``carry``      ``forward(x, state=None, return_state=False)`` returning     chunked reading of long words (evaluation,
               ``(y, state)``: the state continues the words                L_max beyond one forward pass), white-box
                                                                            extraction (realize/extract.py)
``state``      ``carry`` and ``state_vector(state)``,                      the hidden state read by the white-box
               ``set_state_vector(state, v)``, ``tile_state(state, r)``     probes (else the features), perturbation
``transition`` ``transition(x)`` and ``transition_kind`` "matrix"           spectra (``compare``), the eigenvalue checks
               (…, H, n, n) or "diagonal" (…, H, n)                         (realize/trained_robust.py)
``tables``     a one-layer NFSM's tables (``start_indices``,                exact tables, the NFSM certificate
               ``head_logits``)
=============  ==========================================================  =============================================

A tool that lacks a capability says what it did instead: white-box extraction falls back to L* (one line saying
why); a model without ``carry`` is read by one forward pass over the whole prefix (its L_max search stops at the
length one pass fits in, and ``l_max_note`` says so); spectra are left out. Layers may also declare
``transition_steady = True`` when ``transition(x, steady=True)`` gives A(x) inside a long run of x (a short
convolution's window full of x).
"""

from __future__ import annotations

import inspect
from typing import Any

#: capability → (what the module provides, what it serves): the table above, for messages and the docs
CAPABILITIES: dict[str, tuple[str, str]] = {
    "forward": ("forward(x) (B, T, d) → (B, T, d), causal", "training, eval, L_max, L*"),
    "carry": ("forward(x, state=None, return_state=False) → (y, state)",
              "white-box extraction and the chunked reading of long words"),
    "state": ("state_vector, set_state_vector, tile_state", "hidden-state probes and perturbation"),
    "transition": ('transition(x) with transition_kind "matrix" or "diagonal"', "spectra, eigenvalue checks"),
    "tables": ("a one-layer NFSM's tables", "exact tables, the NFSM certificate"),
}
TRANSITION_KINDS = ("matrix", "diagonal")
_STATE_METHODS = ("state_vector", "set_state_vector", "tile_state")


def takes_state(forward: Any) -> bool:
    """Whether a forward method takes ``state`` and ``return_state`` (by name, or as the 2nd and 3rd arguments)."""
    try:
        params = inspect.signature(forward).parameters
    except (TypeError, ValueError):
        return False
    return "state" in params and "return_state" in params


def layer_capabilities(layer: Any) -> frozenset[str]:
    """The capabilities (the table above) of one layer module, or of a whole model's module."""
    inner = getattr(layer, "plugin_module", None)  # a plug-in behind its adapter (nn/layers/plugin.py)
    if inner is not None:
        layer = inner
    caps = {"forward"}
    if getattr(layer, "carries_state", None) is not False and takes_state(layer.forward):
        caps.add("carry")
        if all(callable(getattr(layer, m, None)) for m in _STATE_METHODS) and _has_vector(layer):
            caps.add("state")
    if getattr(layer, "transition_kind", None) in TRANSITION_KINDS and callable(getattr(layer, "transition", None)):
        caps.add("transition")
    if callable(getattr(layer, "start_indices", None)) and callable(getattr(layer, "head_logits", None)):
        caps.add("tables")
    return frozenset(caps)


def _has_vector(layer: Any) -> bool:
    """Built-in layers inherit ``state_vector`` (returning None) from SequenceLayer; only a fixed-size state counts."""
    return getattr(layer, "recurrent", True) is not False


def model_capabilities(model: Any) -> frozenset[str]:
    """A SequenceModel's capabilities: its whole model's, or what every block's layer has (``transition`` where
    any layer has one; ``tables`` for a one-layer NFSM only)."""
    whole = getattr(model, "whole", None)
    if whole is not None:
        return layer_capabilities(whole)
    layers = [b.layer for b in model.blocks]
    each = [layer_capabilities(layer) for layer in layers]
    caps = set(frozenset.intersection(*each)) if each else {"forward"}
    if any("transition" in c for c in each):
        caps.add("transition")
    caps.discard("tables")
    if len(layers) == 1 and "tables" in each[0] and getattr(model.config, "layer", None) == "nfsm":
        caps.add("tables")
    return frozenset(caps)


def missing(model: Any, capability: str) -> str | None:
    """None when ``model`` has ``capability``; else one sentence saying what it lacks (for the fallback lines)."""
    if capability in model_capabilities(model):
        return None
    provides, _ = CAPABILITIES[capability]
    name = getattr(getattr(model, "config", None), "layer", type(model).__name__)
    return f"{name} lacks it ({provides})"


__all__ = ["CAPABILITIES", "TRANSITION_KINDS", "layer_capabilities", "missing", "model_capabilities", "takes_state"]
