"""Solvable groups on diagonal layers: the composition-series cascade of S4 and T4, compiled and run.

S4 has derived series S4 ▷ A4 ▷ V4 ▷ 1, so it needs 3 diagonal layers (a composition series would need 4); Q8 is a
2-group and compiles to real ±1 layers; S5 has the non-abelian simple factor A5 and is refused.
"""

from __future__ import annotations

import numpy as np
import torch

from fsa2rnn.compiler import compile_diagonal
from fsa2rnn.fsa import ConstructionError, group_cascade, resolve_spec
from fsa2rnn.nn import load_model

for spec in ("S4", "Q8", "T4"):
    a = resolve_spec(spec)
    cascade = group_cascade(a)
    m = compile_diagonal(a, initial=0)
    ids = np.random.default_rng(0).integers(0, a.n_symbols, size=(1, 2000))
    got = load_model(m).predict_states(torch.from_numpy(ids), scan="parallel").numpy()
    agree = np.array_equal(got, a.run(ids, start=np.zeros(1, dtype=int)))
    print(f"{spec}: {cascade} ({cascade.series_name})")
    print(
        f"  {m.summary['layers']} layers, widths {m.summary['width']}, real: {m.summary['real']}, "
        f"exact check: {m.summary['verified']}, 2000 steps agree: {agree}"
    )
try:
    compile_diagonal(resolve_spec("S5"))
except ConstructionError as exc:
    print(f"S5: refused — {exc}")
