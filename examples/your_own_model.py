"""Your own model through fsa2rnn's protocol (docs/your-own-model.md): a GRU layer written in plain torch, trained on
parity, evaluated at longer lengths, its machine extracted white-box (it carries its state) and compared with the
target — the same calls as for a built-in layer. ``--quick``: fewer steps (the suite's run)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import torch
from torch import nn

from fsa2rnn.nn import accuracy_at_lengths
from fsa2rnn.nn.train import TrainConfig, load_run, train
from fsa2rnn.realize import extract


class GRULayer(nn.Module):
    """(B, T, d_model) → (B, T, d_model), causal; the carried state {"h"} makes white-box extraction possible."""

    def __init__(self, d_model: int, hidden: int = 16) -> None:
        super().__init__()
        self.gru = nn.GRU(d_model, hidden, batch_first=True)
        self.out = nn.Linear(hidden, d_model)

    def forward(self, x, state=None, return_state=False):
        y, h = self.gru(x, None if state is None else state["h"][None].contiguous())
        return (self.out(y), {"h": h[0]}) if return_state else self.out(y)

    def state_vector(self, state):
        return state["h"]

    def set_state_vector(self, state, vector):
        return {"h": vector}

    def tile_state(self, state, reps):
        return {"h": state["h"].repeat(reps, 1)}


def main(quick: bool) -> None:
    torch.set_num_threads(1)
    ref = f"{__name__}:GRULayer"  # an import path: in a package, "mypackage.layers:GRULayer"
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "gru"
        cfg = TrainConfig(task="grazzi:parity", model=ref, model_args={"hidden": 16}, d_model=16, mlp_ratio=0.0,
                          labels="dense", train_length="3..10", steps=60 if quick else 400, batch=32, lr=1e-2,
                          eval_lengths=[10], samples=64, lmax=False, progress=False)  # fmt: skip
        result = train(cfg, run, plugins=(ref,))  # the import path is named: the run may import it
        print(f"trained {result['steps']} steps, final loss {result['final_loss']:.3f}")
        model, task, _ = load_run(run, plugins=(ref,))
        acc = accuracy_at_lengths(model, task, [10, 40], samples=64)
        print("token accuracy at 10, 40:", " ".join(f"{a:.3f}" for a in acc["token_accuracy"]))
        ex = extract(model, symbols=task.automaton.symbols, classes=task.classes, length=10, words=64)
        print(f"white-box extraction: {ex.minimal.n_states} states ({'sample-based' if ex.sample_based else 'exact'})")


if __name__ == "__main__":
    main("--quick" in sys.argv[1:])
