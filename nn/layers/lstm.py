"""The LSTM baseline (Hochreiter & Schmidhuber 1997; torch.nn.LSTM), with the layers' interface.

Its recurrence c_t = f_t ⊙ c_{t−1} + i_t ⊙ g_t has gates that depend on h_{t−1} as well as x_t, so there is no
transition A(x) of the input alone: :meth:`transition` raises.
"""

from __future__ import annotations

import torch
from torch import nn

from .base import SequenceLayer, State, check_positive


class LSTM(SequenceLayer):
    """One torch.nn.LSTM of ``hidden`` units (default d_model) and a linear map back to d_model when they differ.

    State: ``{"h": (1, B, hidden), "c": (1, B, hidden)}`` (torch's layout).
    """

    def __init__(self, d_model: int, hidden: int | None = None) -> None:
        super().__init__()
        hidden = d_model if hidden is None else hidden
        check_positive("LSTM", d_model=d_model, hidden=hidden)
        self.lstm = nn.LSTM(d_model, hidden, batch_first=True)
        self.out_proj = nn.Identity() if hidden == d_model else nn.Linear(hidden, d_model, bias=False)

    def forward(self, x, state: State | None = None, return_state: bool = False):
        hc = None if state is None else (state["h"], state["c"])
        y, (h, c) = self.lstm(x, hc)
        return self._out(self.out_proj(y), {"h": h, "c": c}, return_state)

    def state_vector(self, state: State) -> torch.Tensor:
        h, c = state["h"].transpose(0, 1), state["c"].transpose(0, 1)  # torch.nn.LSTM keeps the batch second
        return torch.cat([h.reshape(len(h), -1), c.reshape(len(c), -1)], dim=1)

    def tile_state(self, state: State, reps: int) -> State:
        return {k: None if v is None else torch.cat([v] * reps, dim=1) for k, v in state.items()}
