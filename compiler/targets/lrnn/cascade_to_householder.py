"""Theorem 4 (negative-eigenvalues): any automaton through its Krohn–Rhodes cascade — construction ``cascade``.

From the holonomy decomposition (fsa/holonomy.py) A^(s) ∘ … ∘ A^(1) of permutation-reset levels: layer i has
n_i = |Q^(i)| coordinates, a one-hot hidden state, H_0 = e_{c_i(q0)}, and reads the row of
(x_t, c_0(t−1), …, c_{i−1}(t−1)) — the symbol with the upper levels' decoded states from the *previous* step (the
cascade product of Definition 1; the one-step causal shift of docs/theory.md repairs the proof's wiring). A row acting
as a permutation σ gives A = P_σ as reflections (one per transposition) and B = 0; a row acting as the constant q
gives A = 0 = ∏_j (I − e_j e_jᵀ) (n_i GH factors with β = 1) and B = e_q. Readout: argmax per layer (one-hot codes),
then the coordinate tuple → state by the cascade's emulation map.
"""

from __future__ import annotations

import numpy as np

from ....fsa import holonomy_decomposition
from ....fsa.automaton import Automaton
from ....fsa.errors import ConstructionError, LimitExceededError
from . import gh
from .spec import MAX_KEY_SPACE, GHLayerSpec, Readout

#: a level's GH tensors hold rows × factors × width floats (v) and rows × width² (fused A): at most this many
MAX_LAYER_ENTRIES = 2 * 10**7


def decompose(automaton: Automaton):
    """The holonomy cascade of the automaton (fsa.holonomy_decomposition, emulation verified)."""
    return holonomy_decomposition(automaton)


def level_rows(images: np.ndarray, level: int) -> tuple[list[str], np.ndarray]:
    """Classify each dependency row as "perm" or "reset" (n = 1: "perm"); ConstructionError otherwise."""
    n = images.shape[1]
    is_perm = np.all(np.sort(images, axis=1) == np.arange(n), axis=1)
    is_const = np.all(images == images[:, :1], axis=1)
    bad = np.flatnonzero(~is_perm & ~is_const)
    if len(bad):
        raise ConstructionError(
            f"level {level} row {int(bad[0])} is neither a permutation nor a reset (not a permutation-reset cascade)"
        )
    return ["perm" if p else "reset" for p in is_perm], images[:, 0]


def check_size(automaton: Automaton) -> None:
    """Refuse before decomposing when even one level on all the states would exceed MAX_LAYER_ENTRIES."""
    size = automaton.n_states**2 * automaton.n_symbols
    if size > MAX_LAYER_ENTRIES:
        raise LimitExceededError(
            f"construction 'cascade': {automaton.n_states} states and {automaton.n_symbols} symbols give up to "
            f"{size} weight entries per layer (limit {MAX_LAYER_ENTRIES})"
        )


def levels_lower_bound(automaton: Automaton, enough: int = 64) -> tuple[int, int]:
    """``(m, x)``: the holonomy cascade has at least m levels, shown by the powers of symbol x (stops at ``enough``).

    The images Q ⊇ Q·x ⊇ Q·x² ⊇ … form a chain of subductions (B·s ≤ B), strict where the size drops; each set of
    at least 2 states on it lies one level above the next, the last one above the singletons."""
    best, arg = 0, 0
    for x in range(automaton.n_symbols):
        t = automaton.transitions[x]
        current = np.arange(automaton.n_states)
        drops = int(len(current) >= 2)
        while drops < enough:
            image = np.unique(t[current])
            if len(image) == len(current):
                break
            current = image
            drops += int(len(current) >= 2)
        if drops > best:
            best, arg = drops, x
    return best, arg


def check_key_space_bound(automaton: Automaton) -> None:
    """Refuse before decomposing when the levels alone force a readout key space over MAX_KEY_SPACE: every level
    has at least 2 points, so m levels give at least 2^m coordinate tuples."""
    m, x = levels_lower_bound(automaton)
    if 2**m > MAX_KEY_SPACE:
        raise LimitExceededError(
            f"construction 'cascade': the holonomy cascade has at least {m} levels (the images of the states under "
            f"the powers of symbol {automaton.symbols[x]!r} shrink {m} times), so its readout keys need at least "
            f"2^{m} values, over the limit {MAX_KEY_SPACE} = 2^62 of int64 keys"
        )


def cascade_layers(automaton: Automaton, initial: int, cascade=None) -> tuple[list[GHLayerSpec], object]:
    """One GH layer per cascade level, and the cascade."""
    check_size(automaton)
    if cascade is None:
        check_key_space_bound(automaton)
    cascade = cascade if cascade is not None else decompose(automaton)
    start = cascade.coordinates[initial]
    layers = []
    widths = cascade.widths
    for i in range(cascade.n_levels):
        keys, images = cascade.dependency(i)
        n = widths[i]
        size = len(keys) * n * n
        if size > MAX_LAYER_ENTRIES:
            raise LimitExceededError(
                f"construction 'cascade': level {i + 1} has {n} points and {len(keys)} input rows, "
                f"{size} weight entries (limit {MAX_LAYER_ENTRIES})"
            )
        kinds, targets = level_rows(images, i)
        factors, b = [], np.zeros((len(keys), n))
        for r, (kind, img) in enumerate(zip(kinds, images)):
            if kind == "perm":
                factors.append(gh.reflections_of_permutation(img))
            else:
                factors.append(gh.zero_as_projections(n))
                b[r, targets[r]] = 1.0
        h0 = np.zeros(n)
        h0[start[i]] = 1.0
        comps = " ".join(c.label() for c in cascade.levels[i].components)
        layers.append(
            GHLayerSpec(
                width=n,
                keys=np.asarray(keys, dtype=np.int64),
                radix=[automaton.n_symbols, *widths[:i]],
                factors=factors,
                B=b,
                h0=h0,
                readout=Readout("nearest", codes=np.eye(n)),
                note=f"cascade level {i + 1}: {comps}",
            )
        )
    return layers, cascade


def trivial_layer(automaton: Automaton) -> GHLayerSpec:
    """One identity layer of width 1, for a cascade without levels (a one-state automaton)."""
    k = automaton.n_symbols
    return GHLayerSpec(
        width=1,
        keys=np.arange(k)[:, None],
        radix=[k],
        factors=[[] for _ in range(k)],
        B=np.zeros((k, 1)),
        h0=np.ones(1),
        readout=Readout("nearest", codes=np.ones((1, 1))),
        note="the holonomy cascade has no levels: one state, one constant code point",
    )


def cascade(automaton: Automaton, initial: int) -> tuple[list[GHLayerSpec], np.ndarray, np.ndarray, dict]:
    """Layers, final readout keys/states and summary facts for construction ``cascade``."""
    layers, casc = cascade_layers(automaton, initial)
    if casc.n_levels == 0:
        facts = {"decomposition": "no levels", "bound": "Theorem 4 with no levels: width 1, no factors"}
        return [trivial_layer(automaton)], np.zeros((1, 1), dtype=np.int64), np.array([initial]), facts
    tuples = np.asarray(casc.reachable_tuples)
    states = casc.decode(tuples)
    keep = states >= 0
    widths = casc.widths
    bound = max(widths)  # n_i − 1 reflections for a permutation row, n_i projections for a reset row
    facts = {
        "decomposition": str(casc),
        "bound": f"Theorem 4: one layer per level, widths {widths}; at most max n_i = {bound} GH factors per step "
        f"(n_i − 1 reflections for a permutation, n_i projections with β = 1 for a reset)",
    }
    return layers, tuples[keep], states[keep], facts
