"""Keyed table scan in numpy: h_t = σ_{k_t}(h_{t−1}) over many independent lanes, chunking the time axis when the
lanes alone are too few to amortize the per-step cost (the NFSM recurrence, docs/theory.md "Neural Finite-State
Machines"; torch's ``impl="chunked"`` table scan and the torch-free executor of compiled NFSMs both run it).

Two phases:
1. Cut each sequence into n_c chunks of length C. Within every chunk compose its tables, all chunks of all
   sequences at once: Π_c = σ_{cC+C−1} ∘ … ∘ σ_{cC} as a d-vector, C vectorized gathers over (B·n_c, d) lanes.
2. Carry the state across chunks (n_c gathers over B lanes): s_{c+1} = Π_c(s_c), s_0 = h0; then rerun every chunk
   from its start state s_c, again all chunks at once (C gathers over B·n_c lanes).
With n_c = 1 this is the plain sequential recurrence vectorized over the batch, which is fastest when B·d is large;
:func:`choose_chunk` picks n_c from a cost model (per-step overhead against per-element work). Every chunk length
gives the same states: the scan only gathers integers.
"""

from __future__ import annotations

import math

import numpy as np

#: Cost model (seconds) for choosing the number of chunks: Python/numpy overhead per vectorized step, per element.
_STEP_COST = 2e-6
_ELEM_COST = 5e-9


def choose_chunk(bsz: int, length: int, d: int) -> int:
    """Chunk length minimizing (2C + n_c)·step + B·T·(d+1)·elem (or T·step + B·T·elem unchunked)."""
    sequential = length * _STEP_COST + bsz * length * _ELEM_COST
    c = max(1, int(math.sqrt(length / 2)))
    chunked = (2 * c + -(-length // c)) * _STEP_COST + bsz * length * (d + 1) * _ELEM_COST
    return length if sequential <= chunked else c


def table_scan(bank: np.ndarray, keys: np.ndarray, h0: np.ndarray, chunk: int | None = None) -> np.ndarray:
    """States (B, T) int64 after each step: h_t = bank[keys[:, t], h_{t−1}] from h0 (B,).

    ``bank`` (K, d) integer tables (row k is the table σ_k); ``keys`` (B, T) rows of ``bank``; ``chunk`` forces
    the chunk length (None: :func:`choose_chunk`)."""
    bsz, length = keys.shape
    if length == 0:
        return np.empty((bsz, 0), dtype=np.int64)
    d = bank.shape[1]
    flat = np.ascontiguousarray(bank, dtype=np.int64).reshape(-1)
    keys = np.asarray(keys, dtype=np.int64)
    h = np.asarray(h0, dtype=np.int64)
    chunk = choose_chunk(bsz, length, d) if chunk is None else chunk
    chunk = max(1, min(int(chunk), length))
    if chunk >= length:  # one chunk: the recurrence vectorized over the batch
        offsets = np.ascontiguousarray(keys.T) * d  # (T, B): row offsets into the flat bank
        out = np.empty((length, bsz), dtype=np.int64)
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
