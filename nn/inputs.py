"""Symbol-id inputs of the models' ``predict_states``: tensors, numpy arrays or nested lists, checked in range."""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from fsa2rnn.fsa.errors import UnknownSymbolError


def symbol_id_tensor(symbol_ids: Any, n_symbols: int, lengths: Any = None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(ids, lengths)`` as int64 tensors from a tensor, numpy array or list (1-D word or (B, T) batch).

    UnknownSymbolError names the first id outside 0..n_symbols-1 within each word's length (positions past a
    length are padding and may hold anything); a model never answers −1 for a bad id."""
    ids = symbol_ids if torch.is_tensor(symbol_ids) else torch.as_tensor(np.asarray(symbol_ids))
    if ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
        raise UnknownSymbolError(f"symbol ids must be integers, got dtype {str(ids.dtype).removeprefix('torch.')}")
    ids = ids.long()
    if lengths is not None:
        lengths = torch.as_tensor(np.asarray(lengths) if not torch.is_tensor(lengths) else lengths).long()
    inside = ids
    if lengths is not None and ids.dim() >= 1:
        pos = torch.arange(ids.shape[-1], device=ids.device)
        inside = ids[pos < lengths.reshape(*lengths.shape, 1).to(ids.device)]
    bad = inside[(inside < 0) | (inside >= n_symbols)]
    if bad.numel():
        raise UnknownSymbolError(f"symbol id {int(bad[0])} is out of range (ids are 0..{n_symbols - 1})")
    return ids, lengths
