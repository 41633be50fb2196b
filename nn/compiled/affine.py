"""Torch module for compiled "affine" models: the shift register h_t = A h_{t−1} + b(x_t) with nilpotent A.

Because A^k = 0, the recurrence has the closed form h_t = Σ_{j<k} A^j b(x_{t−j}): block j of h_t is b(x_{t−j})'s
block 0, the code of the symbol read j steps ago. :meth:`AffineModel.hidden` computes it either way
(``mode="recurrent"``: the step-by-step recurrence; ``"window"``: the closed form, one gather, what
``predict_states`` uses); the readout decodes each block to the nearest of {0, e_1, …, e_s}
(compiler/targets/affine/executor.py ``window_digits``, written once for numpy and torch) and looks the window up
(compiler/targets/affine/definite_to_affine.py). The recurrent form (nn/compiled/base.py): ``initial(n)``,
``step(h, x)``, ``decode(h)`` (the states), ``read(h)``; ``numpy_step`` is compiler/targets/affine/step.py.
"""

from __future__ import annotations

from typing import Any

import torch

from ...compiler.model import CompiledModel
from ...compiler.targets.affine.executor import window_digits
from ...compiler.targets.affine.program import AffineProgram
from ...compiler.targets.affine.step import AffineStep
from .base import NUMPY_DTYPES, CodeBlock, CompiledModule, finish


class AffineModel(CompiledModule):
    def __init__(self, compiled: CompiledModel, program: AffineProgram | None = None) -> None:
        super().__init__(compiled, program, expect=AffineProgram)
        p = self.program
        self.window = p.window
        self.register_buffer("A", torch.from_numpy(p.A.copy()))
        self.register_buffer("B", torch.from_numpy(p.B.copy()))
        self.register_buffer("h0", torch.from_numpy(p.h0.copy()))
        self.register_buffer("table", torch.from_numpy(p.table.copy()))

    @property
    def dtype(self) -> torch.dtype:
        return self.A.dtype

    def initial(self, n: int) -> torch.Tensor:
        return self.h0.expand(n, -1).clone()

    def step(self, h: torch.Tensor, x: torch.Tensor, decoded: Any = None) -> torch.Tensor:
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
        digit = window_digits(h.reshape(*h.shape[:-1], k, s).double())
        weights = (s + 1) ** torch.arange(k, dtype=torch.long, device=h.device)
        return self.table[(digit * weights).sum(dim=-1)]

    def read(self, h: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        return self.decode(h) if decoded is None else decoded

    def code_blocks(self, max_codes: int | None = None) -> list[CodeBlock]:
        """One block per window position, code {0, e_1, …, e_s} labelled by its digit."""
        s = self.n_symbols
        digits = torch.cat([torch.zeros(1, s, dtype=torch.float64), torch.eye(s, dtype=torch.float64)])
        return [CodeBlock(s, digits, torch.arange(s + 1)) for _ in range(self.window)]

    def numpy_step(self, mode: str = "fused") -> AffineStep | None:
        dt = NUMPY_DTYPES.get(self.dtype)
        if dt is None:
            return None
        a, b, h0, table = (t.detach().cpu().numpy() for t in (self.A, self.B, self.h0, self.table))
        return AffineStep(a.astype(dt), b.astype(dt), h0.astype(dt), table, self.window, dt)

    @torch.no_grad()
    def predict_states(self, symbol_ids: Any, lengths: Any = None, *, mode: str = "window") -> torch.Tensor:
        """Automaton state index (B, T) after each symbol ((T,) for one word); −1 past each word's length.
        Bad ids raise SymbolIdError (fsa/inputs.py); symbol names are read as ``Automaton.run`` reads them."""
        ids, _, x = self.checked(symbol_ids, lengths)
        if ids.numel() == 0:
            return finish(x, torch.full_like(ids, -1))
        return finish(x, self.decode(self.hidden(ids, mode=mode)))


__all__ = ["AffineModel"]
