"""Direct (synchronous) product of automata over one alphabet.

Every symbol acts on every factor at once: δ_x(q_1, …, q_r) = (δ¹_x(q_1), …, δʳ_x(q_r)). State (q_1, …, q_r) has
the mixed-radix index Σ q_i · Π_{j>i} n_j (the first factor is the most significant digit) and the name
``(q1,q2,…)``. The product keeps its ``factors`` so that compilers can realize each factor separately.
"""

from __future__ import annotations

from itertools import product as cartesian
from typing import TYPE_CHECKING

import numpy as np

from .errors import LimitExceededError, SpecError
from .indices import STATE_DTYPE

if TYPE_CHECKING:  # the operations build automata with Automaton.replace: no import cycle
    from .automaton import Automaton

#: Default bound on the number of product states.
DEFAULT_PRODUCT_LIMIT = 1_000_000


def product(*factors: Automaton, accept: str = "all", limit: int = DEFAULT_PRODUCT_LIMIT) -> Automaton:
    """The direct product of automata with the same symbol names (later factors' symbols are aligned by name).

    Initial state: the tuple of initial states (if every factor has one). Accepting set (if every factor has one):
    tuples accepted by all factors (``accept="all"``, language intersection) or by any (``"any"``, union). The
    ``action`` is the disjoint union of the factors' actions when every factor has one.
    """
    if not factors:
        raise SpecError("a product needs at least one factor")
    if accept not in ("all", "any"):
        raise SpecError(f"accept must be 'all' or 'any', got {accept!r}")
    symbols = factors[0].symbols
    tables = []
    for i, f in enumerate(factors):
        if set(f.symbols) != set(symbols):
            extra = sorted(set(f.symbols) ^ set(symbols))
            raise SpecError(f"factor {i} has a different alphabet (symbol {extra[0]!r} is not shared)")
        tables.append(f.transitions[[f.symbol_index(x) for x in symbols]])
    size = int(np.prod([f.n_states for f in factors], dtype=object))
    if size > limit:
        raise LimitExceededError(f"the product has {size} states, over the limit of {limit}")
    table = tables[0]
    for t in tables[1:]:
        table = (table[:, :, None] * t.shape[1] + t[:, None, :]).reshape(len(symbols), -1)
    names = ["(" + ",".join(combo) + ")" for combo in cartesian(*(f.states for f in factors))]
    initial = None
    if all(f.initial is not None for f in factors):
        initial = _index([f.initial for f in factors], [f.n_states for f in factors])
    accepting = None
    if all(f.accepting is not None for f in factors):
        mask = factors[0].accepting
        for f in factors[1:]:
            mask = (
                np.logical_and.outer(mask, f.accepting) if accept == "all" else np.logical_or.outer(mask, f.accepting)
            )
            mask = mask.ravel()
        accepting = np.flatnonzero(mask).tolist()
    action = None
    if all(f.action is not None for f in factors):
        parts, offset = [], 0
        for f in factors:
            act = f.action[[f.symbol_index(x) for x in symbols]]
            parts.append(act + offset)
            offset += act.shape[1]
        action = np.concatenate(parts, axis=1)
    name = " x ".join(f.name or "?" for f in factors)
    return factors[0].replace(
        transitions=table.astype(STATE_DTYPE),
        states=names,
        symbols=symbols,
        initial=initial,
        accepting=accepting,
        name=name,
        action=action,
        factors=factors,
    )


def _index(digits: list[int], radices: list[int]) -> int:
    idx = 0
    for d, r in zip(digits, radices):
        idx = idx * r + d
    return idx


def factor_states(a: Automaton, states: np.ndarray | int) -> np.ndarray:
    """Mixed-radix digits (…, r) of product state indices: the state of each factor."""
    if a.factors is None:
        raise SpecError("the automaton is not a direct product (it has no factors)")
    return np.stack(np.unravel_index(np.asarray(states), [f.n_states for f in a.factors]), axis=-1)
