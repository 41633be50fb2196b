"""Cyclic groups as 2×2 rotations (negative-eigenvalues appendix C.1) — construction ``rotation``.

If the transition group (on the orbit of q0) is cyclic of order m with generator g and δ_x = g^{k_x}, then
A(x) = R(2πk_x/m) = (I − 2v₂v₂ᵀ)(I − 2v₁v₁ᵀ) with v₁ = (1, 0) and v₂ = (cos πk_x/m, sin πk_x/m) (two reflections),
B ≡ 0, H_0 = (1, 0)ᵀ and readout argmax_i D_iᵀH with D_i = R(2πi/m)H_0. Order 2 (parity) is the scalar −1 on the
±1 code: width 1, one reflection (I − 2e₀e₀ᵀ). Exactness is through the angle indices (units of π/m).
"""

from __future__ import annotations

import numpy as np

from ....fsa.automaton import Automaton
from ....fsa.errors import ConstructionError
from ....fsa.permutation_rep import orbit_characters
from . import gh
from .spec import GHLayerSpec, Readout


def cyclic_structure(automaton: Automaton, initial: int, what: str) -> tuple[int, np.ndarray, np.ndarray]:
    """(m, k, states): δ_x = g^{k[x]} for a generator g of the cyclic transition group, and states[i] = gⁱ(q0)."""
    chars, elem_states = orbit_characters(
        automaton, initial, what, need="a cyclic (hence commutative) transition group"
    )
    if len(chars.moduli) > 1:
        factors = " x ".join(f"C{m}" for m in chars.moduli)
        raise ConstructionError(f"{what} needs a cyclic transition group, but it is {factors}")
    if len(chars.moduli) == 0:
        return 1, np.zeros(automaton.n_symbols, dtype=np.int64), elem_states  # the identity only
    m = int(chars.moduli[0])
    states = np.empty(m, dtype=np.int64)
    states[chars.element_exps[:, 0]] = elem_states
    return m, chars.exps[:, 0].astype(np.int64), states


def rotation(automaton: Automaton, initial: int) -> tuple[list[GHLayerSpec], np.ndarray, np.ndarray, dict]:
    """Layers, final readout keys/states and summary facts for construction ``rotation``."""
    m, k, states = cyclic_structure(automaton, initial, "construction 'rotation'")
    n_sym = automaton.n_symbols
    keys = np.arange(n_sym)[:, None]
    if m <= 2:
        factors = [[gh.GHFactor("negate", 0)] if kx else [] for kx in k]  # k[x] ∈ {0, 1}: δ_x = g or 1
        codes = np.array([[1.0], [-1.0]])[:m]
        layer = GHLayerSpec(
            width=1,
            keys=keys,
            radix=[n_sym],
            factors=factors,
            B=np.zeros((n_sym, 1)),
            h0=np.ones(1),
            readout=Readout("nearest", codes=codes),
            note="parity: the scalar −1 on the ±1 code (Theorem 1's negative eigenvalue)",
        )
        facts = {"group_order": m, "bound": "§4.1 / Theorem 1: width 1, one reflection (the scalar −1) per step"}
    else:
        factors = [[gh.GHFactor("angle", 0, m), gh.GHFactor("angle", int(kx), m)] for kx in k]
        layer = GHLayerSpec(
            width=2,
            keys=keys,
            radix=[n_sym],
            factors=factors,
            B=np.zeros((n_sym, 2)),
            h0=np.array([1.0, 0.0]),
            readout=Readout("nearest", codes=gh.unit_vectors(2 * np.arange(m), m)),
            exact="angle",
            code_angles=2 * np.arange(m),
            angle_den=m,
            h0_angle=0,
            note=f"C{m} as rotations R(2πk/{m}), each a product of two reflections (appendix C.1)",
        )
        facts = {"group_order": m, "bound": "appendix C.1: width 2, two reflections per step"}
    return [layer], np.arange(m)[:, None], states, facts
