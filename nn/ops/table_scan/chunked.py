"""Fast CPU table scan: the numpy chunked scan of fsa2rnn.compiler.scans.table_scan (its docstring derives the chunking;
README.md, "Chunking"), behind the torch contract of :func:`naive_table_scan`."""

from __future__ import annotations

import torch

from ....compiler.scans.table_scan import choose_chunk as _choose_chunk
from ....compiler.scans.table_scan import table_scan
from .naive import _mask

__all__ = ["chunked_table_scan", "_choose_chunk"]


def chunked_table_scan(
    bank: torch.Tensor,
    keys: torch.Tensor,
    h0: torch.Tensor,
    lengths: torch.Tensor | None = None,
    *,
    chunk: int | None = None,
) -> torch.Tensor:
    """Same contract as :func:`naive_table_scan`; ``chunk`` forces the chunk length (None: cost model)."""
    bank_np = bank.detach().cpu().numpy()
    out = table_scan(bank_np, keys.detach().cpu().numpy(), h0.detach().cpu().numpy(), chunk)
    return _mask(torch.from_numpy(out), lengths).to(keys.device)
