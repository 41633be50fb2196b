"""Permutation and reset layers in monomial form: H_t = A(r_t) H_{t−1} + B(r_t) where every row of A(r) holds at
most one nonzero entry, ±1 (signed permutation matrices, the zero matrix of a reset, and mixtures of the two), and
B(r) is zero on the rows where A(r) is not.

Then each coordinate of H_t is a signed copy of a coordinate of H_{t−1}, or the value B(r)_i. Append constant
coordinates to the state, H̃ = (H, c₁, …, c_k): the map becomes H̃ ↦ scale ⊙ H̃[src], one gather, stored per row as
the column ``src[r, i]`` and the value ``scale[r, i]`` of each row's nonzero — a row of A that is zero reads a
constant coordinate. (Ã H̃)[i] = scale[r, i] · H̃[src[r, i]] is the number the dense product gives, since the other
terms of Σ_j Ã_ij H̃_j are exact zeros. When no entry of any A(r) is −1 (permutations and resets), the constants are
the values of B and every scale is 1: the map is a pure gather, ``scale`` is None. The scan composes and applies
these maps with gathers (README.md, "Monomial form"):

    Ã₂ Ã₁:  src = src₁[src₂],  scale = scale₂ · scale₁[src₂].

Every product is ±1 times a stored value, so no rounding ever happens: every bracketing — the sequential
recurrence, the chunked scan here — gives bit-identical states at every dtype.
"""

from __future__ import annotations

from typing import NamedTuple

import torch

#: words up to this many steps are scanned sequentially (one chunk)
SEQUENTIAL_STEPS = 64
#: elements per vectorized step (lanes × width) from which the per-step overhead is amortized: no chunking
LANE_ELEMENTS = 1 << 16


class MonomialForm(NamedTuple):
    """H̃ = (H, constants) ↦ scale ⊙ H̃[src] for row r: src (R, m) int64, scale (R, m) or None (all ones),
    constants (m − n,) in the dtype of B."""

    src: torch.Tensor
    scale: torch.Tensor | None
    constants: torch.Tensor


def monomial_form(a_table: torch.Tensor, b_table: torch.Tensor) -> MonomialForm | None:
    """The monomial form of fused matrices a_table (R, n, n) and offsets b_table (R, n); None when some row of some
    A(r) has two nonzeros or an entry outside {−1, 0, 1}, or B(r) is nonzero on a row where A(r) is not zero."""
    a, b = a_table.detach(), b_table.detach()
    nonzero = a != 0
    if a.numel() == 0 or bool((nonzero.sum(-1) > 1).any()) or not bool(((a == 0) | (a.abs() == 1)).all()):
        return None
    live = nonzero.any(-1)
    if bool(((b != 0) & live).any()):
        return None
    n_rows, n = b.shape
    column = a.abs().argmax(-1)
    if bool((a == -1).any()):  # signed: one constant coordinate 1, a zero row of A reads it with scale B
        constants = b.new_ones(1)
        src = torch.where(live, column, n)
        scale = torch.where(live, torch.gather(a, -1, column.unsqueeze(-1)).squeeze(-1), b)
        scale = torch.cat([scale, torch.ones_like(scale[:, :1])], dim=1)
    else:  # a pure gather: one constant coordinate per value that B writes
        constants, which = torch.unique(torch.cat([b[~live], b.new_zeros(1)]), return_inverse=True)
        where_b = torch.full_like(column, -1)
        where_b[~live] = which[:-1]
        src = torch.where(live, column, n + where_b)
        scale = None
    k = constants.numel()
    keep = torch.arange(n, n + k, device=src.device).expand(n_rows, k)  # the constants map to themselves
    return MonomialForm(torch.cat([src, keep], dim=1), scale, constants)


def monomial_chunk(bsz: int, length: int, width: int) -> int:
    """Chunk length C for B words of T steps: the whole word (the sequential recurrence, vectorized over the batch)
    when T ≤ SEQUENTIAL_STEPS or the batch alone fills a step, else the C ≥ SEQUENTIAL_STEPS that makes the
    B·⌈T/C⌉ chunks fill a step. Every C gives the same states (module docstring); this only chooses the speed."""
    if length <= SEQUENTIAL_STEPS or bsz * width >= LANE_ELEMENTS:
        return length
    return min(length, max(SEQUENTIAL_STEPS, -(-length * bsz * width // LANE_ELEMENTS)))


def monomial_scan(
    form: MonomialForm, rows: torch.LongTensor, h0: torch.Tensor, chunk: int | None = None
) -> torch.Tensor:
    """Chunked scan of the monomial recurrence: rows (B, T), h0 (n,) → H (B, T, n).

    With chunks of C steps (default :func:`monomial_chunk`): (1) every chunk of every word composes its C maps at
    once, (2) the chunk totals carry the state from h0 across the K = ⌈T/C⌉ chunks — a monomial scan of K steps
    itself —, (3) every chunk replays its steps from its entering state.
    """
    bsz, length = rows.shape
    n = h0.shape[0]
    h = torch.cat([h0, form.constants.to(h0.dtype)]).expand(bsz, -1)
    return _scan(form.src, form.scale, rows, h, chunk)[..., :n]


def _scan(
    src: torch.Tensor, scale: torch.Tensor | None, rows: torch.Tensor, h: torch.Tensor, chunk: int | None
) -> torch.Tensor:
    """Augmented states (B, T, m) from entering states h (B, m)."""
    bsz, length = rows.shape
    m = src.shape[-1]
    if length == 0:
        return h.new_empty(bsz, 0, m)
    c = monomial_chunk(bsz, length, m) if chunk is None else max(1, min(int(chunk), length))
    k = -(-length // c)
    if k * c != length:  # pad with the identity (src = i, scale = 1): states past T are discarded
        src = torch.cat([src, torch.arange(m, device=src.device)[None]])
        scale = None if scale is None else torch.cat([scale, torch.ones_like(scale[:1])])
        rows = torch.cat([rows, rows.new_full((bsz, k * c - length), src.shape[0] - 1)], dim=1)
    lanes = bsz * k
    steps = rows.reshape(lanes, c).T.contiguous()  # (C, B·K): step t of every chunk of every word
    if k > 1:
        # (1) compose each chunk: the map H̃ ↦ S ⊙ H̃[P]
        perm = src.index_select(0, steps[0])
        s_acc = None if scale is None else scale.index_select(0, steps[0])
        for t in range(1, c):
            sr = src.index_select(0, steps[t])
            perm = torch.gather(perm, 1, sr)
            if scale is not None:
                s_acc = scale.index_select(0, steps[t]) * torch.gather(s_acc, 1, sr)
        # (2) the chunk totals as a table of B·K maps, word b's chunks in order: the state after each chunk
        after = _scan(perm, s_acc, torch.arange(lanes, device=rows.device).view(bsz, k), h, None)
        h = torch.cat([h[:, None], after[:, :-1]], dim=1).reshape(lanes, m)
    # (3) replay every chunk from its entering state
    out = h.new_empty(lanes, c, m)
    for t in range(c):
        h = torch.gather(h, 1, src.index_select(0, steps[t]))
        if scale is not None:
            h = scale.index_select(0, steps[t]) * h
        out[:, t] = h
    return out.view(bsz, k * c, m)[:, :length]
