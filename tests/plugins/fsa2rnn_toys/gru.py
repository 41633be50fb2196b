"""Plug-in architectures in plain torch (no fsa2rnn base class), named by import path: ``--model
fsa2rnn_toys.gru:GRULayer``.

- :class:`GRULayer`: a GRU layer with the carried-state methods (``forward(x, state, return_state)``,
  ``state_vector``, ``set_state_vector``, ``tile_state``): white-box extraction reads its hidden state.
- :class:`GRUForward`: the same recurrence with ``forward(x)`` only: fsa2rnn carries the prefix instead, and
  white-box extraction falls back to L*.
- :func:`gru_model`: a whole model (its own embedding and readout), declared by ``fsa2rnn_whole_model = True``.
"""

from __future__ import annotations

import torch
from torch import nn


class GRULayer(nn.Module):
    """h_t = GRU(x_t, h_{t−1}); y_t = W h_t. The state is {"h": (B, hidden)}."""

    def __init__(self, d_model: int, hidden: int | None = None) -> None:
        super().__init__()
        self.hidden = hidden or d_model
        self.gru = nn.GRU(d_model, self.hidden, batch_first=True)
        self.out = nn.Linear(self.hidden, d_model)

    def forward(self, x: torch.Tensor, state: dict | None = None, return_state: bool = False):
        h0 = None if state is None else state["h"][None].contiguous()
        y, h = self.gru(x, h0)
        y = self.out(y)
        return (y, {"h": h[0]}) if return_state else y

    def state_vector(self, state: dict) -> torch.Tensor:
        return state["h"]

    def set_state_vector(self, state: dict, vector: torch.Tensor) -> dict:
        return {"h": vector}

    def tile_state(self, state: dict, reps: int) -> dict:
        return {"h": state["h"].repeat(reps, 1)}


class GRUForward(nn.Module):
    """The recurrence of :class:`GRULayer`, forward only."""

    def __init__(self, d_model: int, hidden: int | None = None) -> None:
        super().__init__()
        self.gru = nn.GRU(d_model, hidden or d_model, batch_first=True)
        self.out = nn.Linear(hidden or d_model, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(self.gru(x)[0])


class _GRUModel(nn.Module):
    def __init__(self, n_symbols: int, n_classes: int, d_model: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(n_symbols, d_model)
        self.gru = nn.GRU(d_model, d_model, batch_first=True)
        self.readout = nn.Linear(d_model, n_classes)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.readout(self.gru(self.embed(ids))[0])


def gru_model(n_symbols: int, n_classes: int, d_model: int = 16) -> nn.Module:
    """A whole model: ids (B, T) → logits (B, T, n_classes)."""
    return _GRUModel(n_symbols, n_classes, d_model)


gru_model.fsa2rnn_whole_model = True  # type: ignore[attr-defined]
