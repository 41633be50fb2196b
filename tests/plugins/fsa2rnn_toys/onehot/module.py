"""The torch module of a one-hot model: every dtype, and the recurrent form fsa2rnn's steppers perturb."""

from __future__ import annotations

from typing import Any

import torch

from fsa2rnn.compiler import CompiledModel
from fsa2rnn.nn.compiled import CodeBlock, CompiledModule
from fsa2rnn.nn.compiled.base import NUMPY_DTYPES, finish

from .program import OneHotProgram
from .run import OneHotStep


class OneHotModule(CompiledModule):
    def __init__(self, compiled: CompiledModel) -> None:
        super().__init__(compiled, expect=OneHotProgram)
        p = self.program
        self.register_buffer("M", torch.from_numpy(p.M.copy()))
        self.register_buffer("h0", torch.from_numpy(p.h0.copy()))
        self.register_buffer("readout", torch.from_numpy(p.readout.copy()))

    @property
    def dtype(self) -> torch.dtype:
        return self.M.dtype

    def initial(self, n: int) -> torch.Tensor:
        return self.h0.expand(n, -1).clone()

    def step(self, h: torch.Tensor, x: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        return torch.bmm(self.M[x], h.unsqueeze(-1)).squeeze(-1)

    def decode(self, h: torch.Tensor) -> Any:
        return None

    def read(self, h: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        return self.readout[h.argmax(-1)]

    def code_blocks(self, max_codes: int | None = None) -> list[CodeBlock]:
        n = self.h0.numel()
        distinct = len(set(self.readout.tolist())) == n
        return [CodeBlock(n, torch.eye(n, dtype=torch.float64), self.readout.cpu(), one_hot=distinct)]

    def numpy_step(self, mode: str = "fused") -> OneHotStep | None:
        dt = NUMPY_DTYPES.get(self.dtype)
        if dt is None:
            return None
        return OneHotStep(self.M.cpu().numpy(), self.h0.cpu().numpy(), self.readout.cpu().numpy(), dt)

    @torch.no_grad()
    def predict_states(self, symbol_ids: Any, lengths: Any = None) -> torch.Tensor:
        ids, _, x = self.checked(symbol_ids, lengths)
        h = self.initial(ids.shape[0])
        out = torch.empty(ids.shape, dtype=torch.long, device=ids.device)
        for t in range(ids.shape[1]):
            h = self.step(h, ids[:, t])
            out[:, t] = self.read(h)
        return finish(x, out)
