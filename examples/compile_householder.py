"""Compile automata into exact linear-RNN weights (Householder products and diagonal), run them, check them.

Run: python examples/compile_householder.py   (a few seconds, CPU)
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import torch

from fsa2rnn.compiler import CompiledModel, compile_diagonal, compile_householder
from fsa2rnn.fsa import Automaton, ConstructionError, resolve_spec
from fsa2rnn.nn import load_model
from fsa2rnn.realize import verify_model


def show(title: str, model: CompiledModel) -> None:
    s = model.summary
    print(
        f"{title:<34} construction={s['construction']:<12} width={s['width']!s:<10} "
        f"factors/step={s.get('factors_per_step', '-')!s:<3} verified={s['verified']}"
    )


# Theorem 3: the S4 word problem given as plain JSON (24 states, no hint of structure) — the degree search finds a
# faithful action on 4 points, so the layer has width 4 and at most 3 reflections per step.
s4_json = Automaton.from_spec(resolve_spec("S4:gens").to_spec())
m = compile_householder(s4_json)
show("S4 word problem (JSON)", m)
print("   representation:", m.summary["representation"])

# Appendix C.1 and Theorem 6: counting modulo 60 with rotations (2 reflections) or with reflections only (2 layers)
show("Z60, rotation", compile_householder(resolve_spec("Z60")))
show("Z60, reflections only", compile_householder(resolve_spec("Z60"), construction="reflections2"))

# Theorem 4: any automaton through its holonomy cascade (resets are β = 1 factors plus B = e_q)
t3 = resolve_spec("T3")
m_t3 = compile_householder(t3)
show("T3 (full transformation monoid)", m_t3)
print("   cascade:", m_t3.summary["decomposition"])

# Diagonal target: abelian groups as roots of unity; non-abelian ones are refused with the reason
show("Z60, diagonal", compile_diagonal(resolve_spec("Z60")))
try:
    compile_diagonal(resolve_spec("S3"))
except ConstructionError as exc:
    print("   S3 on the diagonal target:", exc)

# Save, load as a torch module, run on a long random word, and verify at float32
with tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "t3.safetensors"
    m_t3.save(path)
    net = load_model(path).to(torch.float32)
    word = np.random.default_rng(0).integers(0, t3.n_symbols, size=10_000)
    states = net.predict_states(torch.from_numpy(word))
    print("T3 model agrees with Automaton.run on 10^4 symbols:", np.array_equal(states.numpy(), t3.run(word)))
    report = verify_model(CompiledModel.load(path), t3, dtype="float32", length=2000, n_words=4)
    print("verify:", {k: report[k] for k in ("ok", "dtype", "length", "agreement", "first_failing_length")})
    print("exact check:", report["exact"])
