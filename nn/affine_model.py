"""Torch module for compiled "affine" models: the shift register h_t = A h_{t−1} + b(x_t) with nilpotent A.

Because A^k = 0, the recurrence has the closed form h_t = Σ_{j<k} A^j b(x_{t−j}): block j of h_t is b(x_{t−j})'s
block 0, the code of the symbol read j steps ago. :meth:`AffineModel.hidden` computes it either way
(``mode="recurrent"``: the step-by-step recurrence; ``"window"``: the closed form, one gather, what
``predict_states`` uses); the readout decodes each block to the nearest of {0, e_1, …, e_s} and looks the window up
(compiler/definite_to_affine.py).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from fsa2rnn.compiler.model import CompiledModel

from . import register_builder


class AffineModel(nn.Module):
    def __init__(self, compiled: CompiledModel) -> None:
        super().__init__()
        self.compiled = compiled
        t = compiled.tensors
        self.window = int(compiled.header["readout"]["window"])
        self.n_symbols = len(compiled.header["symbols"])
        self.register_buffer("A", torch.from_numpy(np.array(t["A"])))
        self.register_buffer("B", torch.from_numpy(np.array(t["B"])))
        self.register_buffer("h0", torch.from_numpy(np.array(t["h0"])))
        self.register_buffer("table", torch.from_numpy(np.array(t["readout.table"], dtype=np.int64)))
        acc = compiled.header.get("accepting")
        mask = torch.zeros(len(compiled.header["states"]), dtype=torch.bool)
        if acc is not None:
            mask[list(acc)] = True
        self.register_buffer("accepting_mask", mask)
        self.has_accepting = acc is not None

    @property
    def dtype(self) -> torch.dtype:
        return self.A.dtype

    def hidden(self, symbol_ids: torch.Tensor, *, mode: str = "window") -> torch.Tensor:
        """h_t for every position, (B, T, k·s), at the module's dtype."""
        ids = torch.as_tensor(symbol_ids, dtype=torch.long)
        bsz, length = ids.shape
        if mode == "recurrent":
            h = self.h0.expand(bsz, -1)
            out = []
            for t in range(length):
                h = h @ self.A.T + self.B[ids[:, t]]
                out.append(h)
            return torch.stack(out, dim=1) if out else self.h0.new_zeros(bsz, 0, self.h0.numel())
        if mode != "window":
            raise ValueError(f"unknown mode {mode!r} (choose window or recurrent)")
        k, s = self.window, self.n_symbols
        h = self.h0.new_zeros(bsz, length, k, s)
        for j in range(k):  # block j: the code b(x_{t−j}) (the closed form of the recurrence, A^k = 0)
            if j < length:
                h[:, j:, j] = self.B[ids[:, : length - j], :s]
        return h.reshape(bsz, length, k * s)

    def decode(self, h: torch.Tensor) -> torch.Tensor:
        """States of hidden vectors (…, k·s): each block decoded to the nearest of {0, e_x}, then the window table."""
        k, s = self.window, self.n_symbols
        blocks = h.reshape(*h.shape[:-1], k, s).double()
        # squared distance to e_x is ‖u‖² − 2u_x + 1, to 0 it is ‖u‖²: pick the best e_x if it beats 0
        best, x = blocks.max(dim=-1)
        digit = torch.where(2 * best - 1 > 0, x + 1, torch.zeros_like(x))
        weights = (s + 1) ** torch.arange(k, dtype=torch.long, device=h.device)
        return self.table[(digit * weights).sum(dim=-1)]

    def predict_states(
        self, symbol_ids: torch.Tensor, lengths: torch.Tensor | None = None, *, mode: str = "window"
    ) -> torch.Tensor:
        ids = torch.as_tensor(np.asarray(symbol_ids) if not torch.is_tensor(symbol_ids) else symbol_ids)
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.n_symbols):
            from fsa2rnn.fsa.errors import UnknownSymbolError

            raise UnknownSymbolError(f"symbol id out of range 0..{self.n_symbols - 1}")
        states = self.decode(self.hidden(ids, mode=mode))
        if lengths is not None:
            pad = torch.arange(ids.shape[1])[None, :] >= torch.as_tensor(lengths)[:, None]
            states = states.masked_fill(pad, -1)
        return states

    def predict_accept(self, symbol_ids: torch.Tensor, lengths: torch.Tensor | None = None) -> torch.Tensor:
        if not self.has_accepting:
            raise ValueError("the automaton has no accepting states")
        states = self.predict_states(symbol_ids, lengths)
        return self.accepting_mask[states.clamp_min(0)] & (states >= 0)


@register_builder("affine")
def build_affine(model: CompiledModel) -> AffineModel:
    return AffineModel(model)
