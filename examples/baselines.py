"""The baselines of Brandoit et al.'s Table 1 — Mamba⁻, AUSSM, PD-SSM — as layers, and the PD-SSM compile target.

1. `compile_pdssm`: M11 (7,920 states) as one PD-SSM layer, P(x) = δ_x stored as index arrays; the numpy executor
   follows the automaton on a long word.
2. The compiled S3 PD-SSM as a trainable SequenceModel (`from_compiled`): the same states, A(x) = P(x).
3. Each baseline trained briefly on parity (one layer, width 16) through SequenceModel: accuracy at length 64.

    python examples/baselines.py [--quick]
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
import torch.nn.functional as F

from fsa2rnn.compiler import compile_pdssm, load_executor
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.nn import SequenceModel


def compiled_m11(length: int) -> None:
    a = resolve_spec("M11")
    model = compile_pdssm(a)
    ids = np.random.default_rng(0).integers(0, a.n_symbols, size=(2, length))
    want = a.run(ids, start=np.full(2, a.initial))
    got = load_executor(model).predict_states(ids)
    print(f"M11 as a PD-SSM: N = {model.summary['width']}, P stored as {model.tensors['pd.P'].size} indices, "
          f"verified {model.summary['verified']}; states right on words of length {length}: "
          f"{bool(np.array_equal(got, want))}")  # fmt: skip


def bridge_s3() -> None:
    a = resolve_spec("S3")
    net = SequenceModel.from_compiled(compile_pdssm(a))
    ids = np.random.default_rng(1).integers(0, a.n_symbols, size=(4, 500))
    ok = np.array_equal(net.predict_states(torch.from_numpy(ids)).numpy(), a.run(ids, start=np.full(4, a.initial)))
    with torch.no_grad():
        mats = net.symbol_transitions()  # (|Σ|, N, N): P(x) D(x) of every symbol
    x = a.symbol_index("(0 1 2)")
    print(f"S3 compiled → trainable PD-SSM: states right on length 500: {ok}; P((0 1 2)) sends column q to row "
          f"{mats[x].real.argmax(0).tolist()} = δ {a.transitions[x].tolist()}")  # fmt: skip


def train(name: str, steps: int, seed: int = 0) -> tuple[float, float]:
    """Token accuracy at the training length 16 and at 64 after ``steps`` AdamW steps (batch 32, lr 3e-3)."""
    torch.manual_seed(seed)
    net = SequenceModel(2, 2, name, 1, 16, layer_args={"state_size": 4}, mlp_ratio=0)
    opt = torch.optim.AdamW(net.parameters(), lr=3e-3)
    g = torch.Generator().manual_seed(seed)
    for _ in range(steps):
        ids = torch.randint(0, 2, (32, 16), generator=g)
        loss = F.cross_entropy(net(ids).reshape(-1, 2), (ids.cumsum(1) % 2).reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
        opt.step()
    ids = torch.randint(0, 2, (256, 64), generator=g)
    right = (net.predict_states(ids) == ids.cumsum(1) % 2).float()
    return float(right[:, :16].mean()), float(right.mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="short words and 20 training steps (the test suite)")
    quick = parser.parse_args().quick
    torch.set_num_threads(1)
    compiled_m11(1000 if quick else 10_000)
    bridge_s3()
    steps = 20 if quick else 400
    for name in ("mamba-minus", "aussm", "pdssm"):
        at16, at64 = train(name, steps)
        print(f"{name}: parity, {steps} steps at length 16 (seed 0): token accuracy {at16:.3f} at 16, {at64:.3f} at 64")


if __name__ == "__main__":
    main()
