"""Addition modulo m with reflections only, in two layers (negative-eigenvalues appendix D, Theorem 6).

Layer 1 counts modulo 2: h_t = −h_{t−1} + 1, h_0 = 0 (the scalar −1, one reflection, and B = 1).
Layer 2 applies one 2×2 reflection H(α) = [[cos α, sin α], [sin α, −cos α]] per step, α = θ(k_x, t mod 2) with
θ(i, 1) = (1 − 2i)π/m and θ(i, 0) = (1 + 2i)π/m; its hidden state alternates between the code points
c_i = R(−2iπ/m)H(π/m)(1, 0)ᵀ (odd t) and d_i = R(2iπ/m)(1, 0)ᵀ (even t); readout argmax_i max(c_iᵀh, d_iᵀh).
Wiring (docs/theory.md, "The timing of cascades"): layer 2 reads x_t with layer 1's decoded state of step t − 1,
p = (t − 1) mod 2, so the paper's t mod 2 is 1 − p. H(α) reflects across the line at angle α/2: as a GH factor, v is
at angle α/2 + π/2. Angle indices are in units of π/(2m).
"""

from __future__ import annotations

import numpy as np

from ....fsa.automaton import Automaton
from ....fsa.errors import ConstructionError
from . import gh
from .cyclic_to_rotation import cyclic_structure
from .spec import GHLayerSpec, Readout


def reflections2(automaton: Automaton, initial: int) -> tuple[list[GHLayerSpec], np.ndarray, np.ndarray, dict]:
    """Layers, final readout keys/states and summary facts for construction ``reflections2``."""
    m, k, states = cyclic_structure(automaton, initial, "construction 'reflections2'")
    if m < 2:
        raise ConstructionError("construction 'reflections2' needs a cyclic group of order ≥ 2 (this one is trivial)")
    n_sym = automaton.n_symbols
    parity = GHLayerSpec(
        width=1,
        keys=np.arange(n_sym)[:, None],
        radix=[n_sym],
        factors=[[gh.GHFactor("negate", 0)] for _ in range(n_sym)],
        B=np.ones((n_sym, 1)),
        h0=np.zeros(1),
        readout=Readout("nearest", codes=np.array([[0.0], [1.0]])),
        note="counts t modulo 2: h_t = −h_{t−1} + 1 (Theorem 6, layer 1)",
    )
    den = 2 * m  # angles in units of π/(2m)
    keys, factors = [], []
    for x in range(n_sym):
        for p in (0, 1):
            i = int(k[x])
            line = (1 - 2 * i) if 1 - p == 1 else (1 + 2 * i)  # θ/2 in units of π/(2m)
            keys.append((x, p))
            factors.append([gh.GHFactor("angle", (line + m) % (2 * den), den)])
    d_angles = 4 * np.arange(m)
    c_angles = (2 * (1 - 2 * np.arange(m))) % (2 * den)
    code_angles = np.concatenate([d_angles, c_angles])
    codes = gh.unit_vectors(code_angles, den)
    layer2 = GHLayerSpec(
        width=2,
        keys=np.array(keys),
        radix=[n_sym, 2],
        factors=factors,
        B=np.zeros((len(keys), 2)),
        h0=np.array([1.0, 0.0]),
        readout=Readout("nearest", codes=codes),
        exact="angle",
        code_angles=code_angles,
        angle_den=den,
        h0_angle=0,
        note=f"one reflection per step; code points d_0..d_{m - 1} then c_0..c_{m - 1} (Theorem 6, layer 2)",
    )
    fk = np.array([(p, s) for p in (0, 1) for s in range(2 * m)])
    facts = {"group_order": m, "bound": "Theorem 6: two layers (widths 1 and 2), one reflection per step in each"}
    return [parity, layer2], fk, states[fk[:, 1] % m], facts
