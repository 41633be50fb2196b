"""The cascade wiring of stacked layers, written once for numpy arrays and torch tensors (docs/theory.md, "The timing
of cascades").

Layer i of a compiled cascade (a linear-RNN layer of a Householder or diagonal cascade, a layer of a stacked NFSM)
reads at step t the *key* (x_t, s_1(t−1), …, s_m(t−1)): the symbol and the states of the layers (or heads) above it
one step earlier, s_j(−1) being their start states — the one-step causal shift that makes stacked layers a cascade
product, as the short causal convolutions of Mamba and DeltaNet provide. The key is the mixed-radix code of those
digits in the layer's digit order (compiler/keys.py: the linear-RNN targets low digit first, NFSMs high digit
first). :func:`layer_keys` computes it over whole words (the states of the layers above after every step, shifted
here) or for one step (the previous step's states, as given); every executor — numpy, torch, exact interpreter,
recurrent step — calls it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .keys import encode
from .xp import Array, concat, full_like


def causal_shift(column: Array, start: Any) -> Array:
    """(B, T) values one step earlier: out[:, 0] = start, out[:, t] = column[:, t − 1]."""
    first = full_like(column, (column.shape[0], 1), int(start))
    return concat([first, column[:, :-1]], axis=1)


def layer_keys(
    x: Array, upper: Sequence[Array], radices: Sequence[int], order: str, *, start: Sequence[Any] | None = None
) -> Array:
    """The key of a cascade layer: the code of (x, upper states one step earlier) with ``radices`` (|Σ|, then the
    upper states' counts) in digit ``order``.

    Whole words: ``x`` (B, T) and ``upper`` the (B, T) states of the layers above after each step, with their start
    states ``start`` (the shift is applied here). One step: ``x`` (N,) and ``upper`` the states of the previous step
    (``start`` None)."""
    if start is not None:
        upper = [causal_shift(c, s0) for c, s0 in zip(upper, start)]
    return encode([x, *upper], radices, order)


__all__ = ["causal_shift", "layer_keys"]
