"""Fast CPU table scan (numpy): per-step gathers over many independent lanes, chunking the time axis when the batch
alone has too few lanes to amortize the per-step cost.

Two phases (derivation in README.md, "Chunking"):
1. Cut each sequence into n_c chunks of length C. Within every chunk compose its tables, all chunks of all
   sequences at once: Π_c = σ_{cC+C-1} ∘ … ∘ σ_{cC} as a d-vector, C vectorized gathers over (B·n_c, d) lanes.
2. Carry the state across chunks (n_c gathers over B lanes): s_{c+1} = Π_c(s_c), s_0 = h0; then rerun every chunk
   from its start state s_c, again all chunks at once (C gathers over B·n_c lanes).
With n_c = 1 this is the plain sequential recurrence vectorized over the batch, which is fastest when B·d is large;
:func:`chunked_table_scan` picks n_c from a cost model (per-step overhead against per-element work).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from .naive import _mask

#: Cost model (seconds) for choosing the number of chunks: Python/numpy overhead per vectorized step, per element.
_STEP_COST = 2e-6
_ELEM_COST = 5e-9


def chunked_table_scan(
    bank: torch.Tensor,
    keys: torch.Tensor,
    h0: torch.Tensor,
    lengths: torch.Tensor | None = None,
    *,
    chunk: int | None = None,
) -> torch.Tensor:
    """Same contract as :func:`naive_table_scan`; ``chunk`` forces the chunk length (None: cost model)."""
    bsz, length = keys.shape
    d = bank.shape[1]
    bank_np = np.ascontiguousarray(bank.detach().cpu().numpy()).astype(np.int64, copy=False)
    keys_np = keys.detach().cpu().numpy()
    h = h0.detach().cpu().numpy().astype(np.int64)
    if length == 0:
        return torch.empty(bsz, 0, dtype=torch.long)
    if chunk is None:
        chunk = _choose_chunk(bsz, length, d)
    chunk = max(1, min(int(chunk), length))
    out = _scan_np(bank_np.reshape(-1), keys_np.astype(np.int64, copy=False), h, d, chunk)
    return _mask(torch.from_numpy(out), lengths).to(keys.device)


def _choose_chunk(bsz: int, length: int, d: int) -> int:
    """Chunk length minimizing (2C + n_c)·step + B·T·(d+1)·elem (or T·step + B·T·elem unchunked)."""
    sequential = length * _STEP_COST + bsz * length * _ELEM_COST
    c = max(1, int(math.sqrt(length / 2)))
    chunked = (2 * c + -(-length // c)) * _STEP_COST + bsz * length * (d + 1) * _ELEM_COST
    return length if sequential <= chunked else c


def _scan_np(flat: np.ndarray, keys: np.ndarray, h0: np.ndarray, d: int, chunk: int) -> np.ndarray:
    bsz, length = keys.shape
    if chunk >= length:  # one chunk: the recurrence vectorized over the batch
        offsets = np.ascontiguousarray(keys.T) * d  # (T, B): row offsets into the flat bank
        out = np.empty((length, bsz), dtype=np.int64)
        h = h0
        for t in range(length):
            h = flat[offsets[t] + h]
            out[t] = h
        return out.T
    n_c = -(-length // chunk)
    padded = n_c * chunk
    # (C, B·n_c) offsets, time-major inside chunks; padding reuses row keys[:, 0] (never read back: causality).
    k = np.empty((bsz, padded), dtype=np.int64)
    k[:, :length] = keys
    k[:, length:] = keys[:, :1]
    offsets = np.ascontiguousarray(k.reshape(bsz, n_c, chunk).transpose(2, 0, 1).reshape(chunk, bsz * n_c)) * d
    # phase 1: compose every chunk's tables
    comp = np.broadcast_to(np.arange(d, dtype=np.int64), (bsz * n_c, d)).copy()
    for s in range(chunk):
        comp = flat[offsets[s][:, None] + comp]
    comp = comp.reshape(bsz, n_c, d)
    # phase 2: carry across chunks, then rerun each chunk from its start state
    starts = np.empty((bsz, n_c), dtype=np.int64)
    h = h0
    rows = np.arange(bsz)
    for c in range(n_c):
        starts[:, c] = h
        h = comp[rows, c, h]
    h = starts.reshape(-1)
    out = np.empty((chunk, bsz * n_c), dtype=np.int64)
    for s in range(chunk):
        h = flat[offsets[s] + h]
        out[s] = h
    return out.reshape(chunk, bsz, n_c).transpose(1, 2, 0).reshape(bsz, padded)[:, :length]
