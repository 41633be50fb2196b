"""Torch module for compiled "pdssm" models (compiler/targets/pdssm/): h_t = P(x_t) D(x_t) h_{t−1} with P(x)
given as index arrays, then the one-hot readout state(argmax h). When h_0 = c_0·e_q (every compiled model) and D is
finite, h_t = c_t·e_{s_t} at every step: s_t by the keyed table scan over the index arrays (nn/ops/table_scan) and
c_t = D(x_t)[s_{t−1}]·c_{t−1} by a running product — the weights at the cost of the NFSM's scan
(:func:`one_hot_argmax`; compiler/targets/pdssm/executor.py derives it). Any other h_0 runs
:func:`fsa2rnn.nn.ops.pd_scan` (the chunked scan in the class of PD matrices) in time blocks that carry the state.
The recurrent form (nn/compiled/base.py):
``initial(n)``, ``step(h, x)``, ``decode(h)`` (the states), ``read(h)``, ``code_blocks()`` (the one-hot code points).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from ...compiler.model import CompiledModel
from ...compiler.targets.pdssm.program import PDSSMProgram
from ...compiler.wiring import causal_shift
from ...fsa.errors import LimitExceededError
from ..ops import pd_scan
from ..ops.pd_scan import pd_apply
from ..ops.table_scan import keyed_table_scan
from .base import CodeBlock, CompiledModule, finish

#: state entries B·C·N of one time block
CHUNK_ELEMENTS = 1 << 22
_SCAN_DTYPES = (torch.float32, torch.float64)


def one_hot_argmax(P: torch.Tensor, D: torch.Tensor, q: int, c0: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """argmax h_t (B, T) for h_0 = c0·e_q: the coordinate s_t and the factor c_t (multiplied left to right in D's
    dtype, as the recurrence, on CPU) of the one nonzero entry, then the position of the maximum of c_t·e_{s_t}
    (the first one on ties, as torch's argmax)."""
    bsz, length = ids.shape
    s = keyed_table_scan(P, ids, torch.full((bsz,), q, dtype=torch.long, device=ids.device))
    factors = torch.empty(bsz, length + 1, dtype=D.dtype, device=ids.device)
    factors[:, 0] = c0
    factors[:, 1:] = D[ids, causal_shift(s, q)]
    if factors.is_cuda:
        c = torch.cumprod(factors, dim=1)[:, 1:]
    else:  # numpy multiplies left to right in the dtype itself (torch's CPU cumprod accumulates float32 in double)
        c = torch.from_numpy(np.multiply.accumulate(factors.numpy(), axis=1)[:, 1:])
    other = (s == 0).long() * min(1, P.shape[1] - 1)  # where a zero coordinate comes first (none when N = 1)
    return torch.where((c > 0) | c.isnan(), s, torch.where(c < 0, other, torch.zeros_like(s)))


class PDSSMModel(CompiledModule):
    """Compiled PD-SSM: ``predict_states`` and ``predict_accept``; ``.to(dtype)`` sets the dtype of D and h_0
    (float16 and bfloat16 scan in float32: the values 0 and 1 are exact in all)."""

    def __init__(self, compiled: CompiledModel, program: PDSSMProgram | None = None) -> None:
        super().__init__(compiled, program, expect=PDSSMProgram)
        p = self.program
        self.register_buffer("P", torch.from_numpy(p.P.copy()))
        self.register_buffer("D", torch.from_numpy(p.D.copy()))
        self.register_buffer("h0", torch.from_numpy(p.h0.copy()))
        self.register_buffer("readout", torch.from_numpy(p.readout.copy()))

    @property
    def dtype(self) -> torch.dtype:
        return self.D.dtype

    # ------------------------------------------------------------------ recurrent form
    def initial(self, n: int) -> torch.Tensor:
        return self.h0.expand(n, -1).clone()

    def step(self, h: torch.Tensor, x: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        """One step P(x) D(x) h for hidden states h (n, N) and symbols x (n,)."""
        return pd_apply(self.P[x], self.D[x].to(h.dtype), h)

    def decode(self, h: torch.Tensor) -> torch.Tensor:
        """The state each hidden vector (…, N) reads as: that of its largest coordinate."""
        return self.readout[h.argmax(-1)]

    def read(self, h: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        return self.decode(h) if decoded is None else decoded

    def code_blocks(self, max_codes: int | None = None) -> list[CodeBlock]:
        """One block: the one-hot code points e_i, labelled by the state each coordinate reads as."""
        n = self.h0.numel()
        if max_codes is not None and n > max_codes:
            raise LimitExceededError(f"a PD-SSM of {n} one-hot code points (limit {max_codes})")
        return [CodeBlock(n, torch.eye(n, dtype=torch.float64), self.readout.cpu())]

    # ------------------------------------------------------------------ the scan
    def hidden_blocks(self, ids: torch.Tensor):
        """Yield (start, h (B, C, N)) over time blocks of checked ids (B, T), the state carried between them."""
        bsz, length = ids.shape
        dtype = self.dtype if self.dtype in _SCAN_DTYPES else torch.float32
        n = self.h0.numel()
        block = max(1, CHUNK_ELEMENTS // max(1, bsz * n))
        h = self.h0.to(dtype).expand(bsz, -1)
        for s in range(0, length, block):
            x = ids[:, s : s + block]
            hs = pd_scan(self.P[x], self.D[x].to(dtype), torch.zeros(*x.shape, n, dtype=dtype), h, impl="torch")
            h = hs[:, -1]
            yield s, hs

    @torch.no_grad()
    def predict_states(self, symbol_ids: Any, lengths: Any = None) -> torch.Tensor:
        """Automaton state index (B, T) after each symbol ((T,) for one word); −1 past each word's length.
        Bad ids raise SymbolIdError (fsa/inputs.py); symbol names are read as ``Automaton.run`` reads them."""
        ids, _, x = self.checked(symbol_ids, lengths)
        if ids.numel() == 0:
            return finish(x, torch.full_like(ids, -1))
        nonzero = torch.nonzero(self.h0).reshape(-1)
        if len(nonzero) == 1 and bool(torch.isfinite(self.D).all()):
            q = int(nonzero[0])
            dtype = self.dtype if self.dtype in _SCAN_DTYPES else torch.float32
            return finish(x, self.readout[one_hot_argmax(self.P, self.D.to(dtype), q, self.h0[q].to(dtype), ids)])
        out = torch.empty(ids.shape, dtype=torch.long)
        for s, hs in self.hidden_blocks(ids):
            out[:, s : s + hs.shape[1]] = self.decode(hs)
        return finish(x, out)


__all__ = ["PDSSMModel"]
