"""Chunked scan of the linear-RNN recurrence H_t = A(r_t) H_{t−1} + B(r_t) in numpy (negative-eigenvalues §3.1):
dense A (R, n, n) with B (R, n), or diagonal complex A (R, n) with B (R, n).

The recurrence is the prefix composition of the affine maps (A, b) under (A₂, b₂) ∘ (A₁, b₁) = (A₂A₁, A₂b₁ + b₂).
Each word is cut into K chunks of C steps: (1) every chunk of every word composes its C maps, all chunks at once;
(2) the chunk totals — a table of B·K maps — are scanned by the same function to give the state entering each chunk;
(3) every chunk replays its steps from there, writing the states. About 2C vectorized steps per level instead of
T, work O(T n³), no prefix matrices kept. C is chosen from the word length and the state size alone (as the torch
runtime's chunked scan, nn/ops/lrnn_scan), so a word's rounding does not depend on its batch. Where the products
are exact — permutation and reset layers, whose A has entries in {−1, 0, 1} and whose states are small integers —
every bracketing gives the sequential recurrence's numbers bit for bit.
"""

from __future__ import annotations

import numpy as np

#: words up to this many steps are one chunk: the sequential recurrence, vectorized over the batch
SEQUENTIAL_STEPS = 64
#: state numbers per vectorized step (lanes × state size) that amortize numpy's per-call overhead
LANE_ELEMENTS = 1 << 16


def chunk_length(length: int, state_size: int) -> int:
    """C for words of ``length`` steps whose state has ``state_size`` numbers: the whole word up to
    SEQUENTIAL_STEPS, else the C ≥ SEQUENTIAL_STEPS that gives one word about LANE_ELEMENTS numbers per step."""
    if length <= SEQUENTIAL_STEPS:
        return length
    return min(length, max(SEQUENTIAL_STEPS, -(-length * state_size // LANE_ELEMENTS)))


def affine_scan(a_table: np.ndarray, b_table: np.ndarray, rows: np.ndarray, h0: np.ndarray) -> np.ndarray:
    """States (B, T, n) of H_t = A(r_t) H_{t−1} + B(r_t) from h0 (n,), for rows (B, T) of the tables.

    Dense when ``a_table`` is (R, n, n), diagonal (elementwise, e.g. complex) when it is (R, n) like ``b_table``."""
    bsz, length = rows.shape
    if length == 0:
        return np.empty((bsz, 0, *h0.shape), dtype=np.result_type(a_table, b_table, h0))
    h = np.broadcast_to(h0, (bsz, *h0.shape)).astype(np.result_type(a_table, b_table, h0))
    return _scan(a_table, b_table, np.asarray(rows, dtype=np.int64), h, a_table.ndim == b_table.ndim)


def _apply(a: np.ndarray, h: np.ndarray, b: np.ndarray, diagonal: bool) -> np.ndarray:
    """A h + b for every lane."""
    if diagonal:
        return a * h + b
    return np.einsum("lij,lj->li", a, h) + b  # einsum: faster than matmul's per-matrix calls for small n


def _scan(a_table: np.ndarray, b_table: np.ndarray, rows: np.ndarray, h: np.ndarray, diagonal: bool) -> np.ndarray:
    bsz, length = rows.shape
    state = h.shape[1:]
    c = chunk_length(length, h[0].size)
    k = -(-length // c)
    if k * c != length:  # pad with the identity map (A = I, b = 0): states past T are discarded
        ident = np.ones_like(a_table[:1]) if diagonal else np.eye(a_table.shape[-1], dtype=a_table.dtype)[None]
        a_table = np.concatenate([a_table, ident])
        b_table = np.concatenate([b_table, np.zeros_like(b_table[:1])])
        rows = np.concatenate([rows, np.full((bsz, k * c - length), a_table.shape[0] - 1, dtype=np.int64)], axis=1)
    lanes = bsz * k
    steps = np.ascontiguousarray(rows.reshape(lanes, c).T)  # (C, B·K): step t of every chunk of every word
    if k > 1:
        # (1) every chunk's map, composed from its first step on
        p, q = a_table[steps[0]], b_table[steps[0]]
        for t in range(1, c):
            at = a_table[steps[t]]
            p = at * p if diagonal else np.matmul(at, p)
            q = _apply(at, q, b_table[steps[t]], diagonal)
        # (2) the chunk totals, word b's chunks in order, scanned from h: the state after each chunk
        after = _scan(p, q, np.arange(lanes).reshape(bsz, k), h, diagonal)
        h = np.concatenate([h[:, None], after[:, :-1]], axis=1).reshape(lanes, *state)
    # (3) replay every chunk from its entering state
    out = np.empty((c, lanes, *state), dtype=h.dtype)
    for t in range(c):
        h = _apply(a_table[steps[t]], h, b_table[steps[t]], diagonal)
        out[t] = h
    out = out.reshape(c, bsz, k, *state)
    return np.moveaxis(out, 0, 2).reshape(bsz, k * c, *state)[:, :length]
