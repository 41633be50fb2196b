"""Torch module for compiled "affine" models: the shift register h_t = A h_{t−1} + b(x_t) with nilpotent A.

Because A^k = 0, the recurrence has the closed form h_t = Σ_{j<k} A^j b(x_{t−j}): block j of h_t is b(x_{t−j})'s
block 0, the code of the symbol read j steps ago. :meth:`AffineModel.hidden` computes it either way
(``mode="recurrent"``: the step-by-step recurrence; ``"window"``: the closed form, one gather, what
``predict_states`` uses); the readout decodes each block to the nearest of {0, e_1, …, e_s} and looks the window up
(compiler/definite_to_affine.py). The recurrent form for the steppers: ``initial(n)``, ``step(h, x)``,
``decode(h)``.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.program import AffineProgram, program_of

from .inputs import accepted, accepting_tensor, checked_ids, finish


class AffineModel(nn.Module):
    def __init__(self, compiled: CompiledModel, program: AffineProgram | None = None) -> None:
        super().__init__()
        self.compiled = compiled
        self.program = program_of(compiled) if program is None else program
        p = self.program
        self.window = p.window
        self.n_symbols = p.n_symbols
        self.register_buffer("A", torch.from_numpy(p.A.copy()))
        self.register_buffer("B", torch.from_numpy(p.B.copy()))
        self.register_buffer("h0", torch.from_numpy(p.h0.copy()))
        self.register_buffer("table", torch.from_numpy(p.table.copy()))
        self.register_buffer("accepting_mask", accepting_tensor(p))
        self.has_accepting = p.accepting is not None

    @property
    def dtype(self) -> torch.dtype:
        return self.A.dtype

    def initial(self, n: int) -> torch.Tensor:
        return self.h0.expand(n, -1).clone()

    def step(self, h: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        """One step A h + b(x) for hidden states h (n, k·s) and symbols x (n,)."""
        return h @ self.A.T + self.B[x]

    def hidden(self, symbol_ids: torch.Tensor, *, mode: str = "window") -> torch.Tensor:
        """h_t for every position of checked ids (B, T), (B, T, k·s), at the module's dtype."""
        ids = torch.as_tensor(symbol_ids, dtype=torch.long)
        bsz, length = ids.shape
        if mode == "recurrent":
            h = self.initial(bsz)
            out = []
            for t in range(length):
                h = self.step(h, ids[:, t])
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

    @torch.no_grad()
    def predict_states(self, symbol_ids: Any, lengths: Any = None, *, mode: str = "window") -> torch.Tensor:
        """Automaton state index (B, T) after each symbol ((T,) for one word); −1 past each word's length.
        Bad ids raise SymbolIdError (compiler/inputs.py)."""
        ids, _, x = checked_ids(symbol_ids, self.n_symbols, lengths)
        if ids.numel() == 0:
            return finish(x, torch.full_like(ids, -1))
        return finish(x, self.decode(self.hidden(ids, mode=mode)))

    @torch.no_grad()
    def predict_accept(self, symbol_ids: Any, lengths: Any = None, **kw: Any) -> torch.Tensor:
        """Whether each prefix is accepted, (B, T) bool; UnknownStateError when the automaton has no accepting set."""
        self.program.accepting_mask()
        return accepted(self.predict_states(symbol_ids, lengths, **kw), self.accepting_mask)


def build_affine(model: CompiledModel) -> AffineModel:
    return AffineModel(model)
