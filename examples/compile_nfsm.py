"""Compile automata into Neural Finite-State Machines, run them at three dtypes on words of length 10^5, and
certify them (length-independent-state-tracking §6).

Run: python examples/compile_nfsm.py   (a few seconds, CPU)
"""

from __future__ import annotations

import numpy as np
import torch

from fsa2rnn.compiler import compile_nfsm
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.nn import load_model
from fsa2rnn.realize import extract_and_compare, margin_certificate

LENGTH = 10**5
rng = np.random.default_rng(0)

# One plan per kind: point-tracking heads (M11, S5), one head per product factor (gridworld), stacked layers from the
# holonomy cascade (T4), and a single head of |Q| indices (the flip-flop).
for spec, kw in [("M11", {}), ("S5", {}), ("gridworld:4", {}), ("T4", {"layers": "stacked"}), ("flipflop", {})]:
    a = resolve_spec(spec)
    model = compile_nfsm(a, **kw)
    s = model.summary
    module = load_model(model)
    ids = rng.integers(0, a.n_symbols, (1, LENGTH))
    truth = a.run(ids)
    right = []
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        module.to(dtype)
        right.append(bool(np.array_equal(module.predict_states(torch.from_numpy(ids)).numpy(), truth)))
    cert = margin_certificate(model, "bfloat16")
    print(
        f"{spec:<12} {s['construction']:<9} heads={s['head_dims']!s:<22} right at length {LENGTH} "
        f"(f32, bf16, f16)={right} extraction={extract_and_compare(model, a, dtype='float16')['match']} "
        f"certified(bf16)={cert['certified']}"
    )

# A margin too small for bfloat16: 1 + 0.001 rounds to 1, the argmax ties, and the certificate finds a word on
# which the model really errs. float32 keeps the same model exact and certified.
a = resolve_spec("S5")
small = compile_nfsm(a, margin=1e-3)
cert = margin_certificate(small, "bfloat16")
print(cert["statement"])
word = np.array([a.symbol_index(x) for x in cert["failing_word"]])
module = load_model(small).to(torch.bfloat16)
got = module.predict_states(torch.from_numpy(word[None, :]))[0, -1].item()
print(
    f"  failing word {cert['failing_word']}: model says {a.states[got]!r}, automaton says "
    f"{a.states[a.final_state(word)]!r}"
)
print(margin_certificate(small, "float32")["statement"])
