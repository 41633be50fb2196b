"""Parallel scans of affine maps h ↦ A h + b in pure torch.

The recurrence H_t = A_t H_{t−1} + b_t is the prefix composition of the affine maps (A_t, b_t) under
(A₂, b₂) ∘ (A₁, b₁) = (A₂A₁, A₂b₁ + b₂), which is associative. Two schedules:

- ``parallel_scan_lrnn`` (chunked, the default parallel path): the sequence is cut into K chunks of C steps; all
  chunks compose their maps at once (C batched steps), the K chunk totals are scanned the same way (recursively)
  to give each chunk's entering state, and every chunk replays its steps from there (C batched steps) — about 2C
  vectorized steps per level, work O(T n³), memory O(B·T·n) (no prefix matrices are kept).
- ``logdepth_scan_lrnn``: a Hillis–Steele inclusive scan in ⌈log₂ S⌉ rounds (work O(T log S · n³)).

Both run over segments of S steps chained through the carried state (the log-depth scan's memory is (B, S, n, n)).
Diagonal maps compose elementwise (complex, as (re, im) pairs).
"""

from __future__ import annotations

import torch

from .naive import cmul

#: steps per segment of the log-depth scan: memory is B·S·n² per segment
DEFAULT_SEGMENT = 2048
#: words up to this many steps are scanned in one chunk by the chunked scans (the sequential order)
SEQUENTIAL_STEPS = 64
#: state numbers per vectorized step (lanes × state size) that amortize the per-step overhead
LANE_ELEMENTS = 1 << 16


def _gather(table: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    """table[rows] through index_select (the fast path for small trailing dimensions)."""
    return table.index_select(0, rows.reshape(-1)).view(*rows.shape, *table.shape[1:])


def _scan_matrix(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Inclusive scan over dim 1 of (a (B, S, n, n), b (B, S, n)) under affine composition."""
    length = a.shape[1]
    d = 1
    while d < length:
        a_prev, b_prev = a[:, :-d], b[:, :-d]
        a_cur, b_cur = a[:, d:], b[:, d:]
        new_a = torch.matmul(a_cur, a_prev)
        new_b = torch.matmul(a_cur, b_prev.unsqueeze(-1)).squeeze(-1) + b_cur
        a = torch.cat([a[:, :d], new_a], dim=1)
        b = torch.cat([b[:, :d], new_b], dim=1)
        d *= 2
    return a, b


def _scan_diagonal(lam: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Inclusive scan over dim 1 of (λ (B, S, n, 2), b (B, S, n, 2)) under elementwise complex affine composition."""
    length = lam.shape[1]
    d = 1
    while d < length:
        new_l = cmul(lam[:, d:], lam[:, :-d])
        new_b = cmul(lam[:, d:], b[:, :-d]) + b[:, d:]
        lam = torch.cat([lam[:, :d], new_l], dim=1)
        b = torch.cat([b[:, :d], new_b], dim=1)
        d *= 2
    return lam, b


def logdepth_scan_lrnn(
    a_table: torch.Tensor,
    b_table: torch.Tensor,
    rows: torch.LongTensor,
    h0: torch.Tensor,
    segment: int = DEFAULT_SEGMENT,
) -> torch.Tensor:
    """Same contract as naive_recurrent_lrnn: a_table (R, n, n), b_table (R, n), rows (B, T), h0 (n,) → (B, T, n)."""
    bsz, length = rows.shape
    h = h0.expand(bsz, -1)
    out = h0.new_empty(bsz, length, h0.shape[-1])
    for s in range(0, length, segment):
        r = rows[:, s : s + segment]
        cum_a, cum_b = _scan_matrix(_gather(a_table, r), _gather(b_table, r))
        seg = torch.matmul(cum_a, h[:, None, :, None]).squeeze(-1) + cum_b
        out[:, s : s + segment] = seg
        h = seg[:, -1]
    return out


def logdepth_scan_diagonal(
    lam_table: torch.Tensor,
    b_table: torch.Tensor,
    rows: torch.LongTensor,
    h0: torch.Tensor,
    segment: int = DEFAULT_SEGMENT,
) -> torch.Tensor:
    """Same contract as naive_recurrent_diagonal, (re, im) in the last dimension."""
    bsz, length = rows.shape
    h = h0.expand(bsz, -1, -1)
    out = h0.new_empty(bsz, length, *h0.shape)
    for s in range(0, length, segment):
        r = rows[:, s : s + segment]
        cum_l, cum_b = _scan_diagonal(_gather(lam_table, r), _gather(b_table, r))
        seg = cmul(cum_l, h[:, None]) + cum_b
        out[:, s : s + segment] = seg
        h = seg[:, -1]
    return out


def _padded_tables(a_table: torch.Tensor, b_table: torch.Tensor, diagonal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Tables with one extra identity row (A = I, b = 0) used to pad the last chunk."""
    if diagonal:
        ident = torch.zeros_like(a_table[:1])
        ident[..., 0] = 1
    else:
        ident = torch.eye(a_table.shape[-1], dtype=a_table.dtype, device=a_table.device)[None]
    return torch.cat([a_table, ident]), torch.cat([b_table, torch.zeros_like(b_table[:1])])


def default_chunk(length: int, state_size: int) -> int:
    """Chunk length C for words of ``length`` steps whose state has ``state_size`` numbers: the whole word up to
    SEQUENTIAL_STEPS (the sequential order), else the C ≥ SEQUENTIAL_STEPS that gives a single word about
    LANE_ELEMENTS state numbers per vectorized step. It depends on the word length and the layer alone, so the
    rounding of a word does not depend on the batch it is scanned in."""
    if length <= SEQUENTIAL_STEPS:
        return length
    return min(length, max(SEQUENTIAL_STEPS, -(-length * state_size // LANE_ELEMENTS)))


def _scan(a_table, b_table, rows, h, chunk, diagonal):
    """rows (B, T), entering states h (B, ...) → states (B, T, ...): (1) every chunk composes its maps, all chunks
    at once, (2) the chunk totals — a table of B·K maps — are scanned by this function to give each chunk's entering
    state, (3) every chunk replays its steps from there. No prefix matrices are kept."""
    bsz, length = rows.shape
    state = h.shape[1:]
    c = default_chunk(length, h[0].numel()) if chunk is None else max(1, min(int(chunk), length))
    k = -(-length // c)
    if k * c != length:
        a_table, b_table = _padded_tables(a_table, b_table, diagonal)
        rows = torch.cat([rows, rows.new_full((bsz, k * c - length), a_table.shape[0] - 1)], dim=1)
    if diagonal:
        compose = cmul

        def apply(m: torch.Tensor, x: torch.Tensor, off: torch.Tensor) -> torch.Tensor:
            return cmul(m, x) + off
    else:
        compose = torch.bmm

        def apply(m: torch.Tensor, x: torch.Tensor, off: torch.Tensor) -> torch.Tensor:
            return torch.bmm(m, x.unsqueeze(-1)).squeeze(-1) + off

    lanes = bsz * k
    steps = rows.reshape(lanes, c).T.contiguous()  # (C, B·K): step t of every chunk of every word
    if k > 1:
        p, q = _gather(a_table, steps[0]), _gather(b_table, steps[0])
        for t in range(1, c):
            at = _gather(a_table, steps[t])
            p, q = compose(at, p), apply(at, q, _gather(b_table, steps[t]))
        after = _scan(p, q, torch.arange(lanes, device=rows.device).view(bsz, k), h, None, diagonal)
        h = torch.cat([h.unsqueeze(1), after[:, :-1]], dim=1).reshape(lanes, *state)
    out = h.new_empty(lanes, c, *state)
    for t in range(c):
        h = apply(_gather(a_table, steps[t]), h, _gather(b_table, steps[t]))
        out[:, t] = h
    return out.view(bsz, k * c, *state)[:, :length]


def _chunked_scan(a_table, b_table, rows, h0, segment, chunk, diagonal):
    bsz, length = rows.shape
    if length == 0:
        return h0.new_empty(bsz, 0, *h0.shape)
    segment = length if segment is None else max(1, int(segment))
    h = h0.expand(bsz, *h0.shape)
    segs = []
    for s in range(0, length, segment):
        seg = _scan(a_table, b_table, rows[:, s : s + segment], h, chunk, diagonal)
        segs.append(seg)
        h = seg[:, -1]
    return torch.cat(segs, dim=1) if len(segs) > 1 else segs[0]


def parallel_scan_lrnn(
    a_table: torch.Tensor,
    b_table: torch.Tensor,
    rows: torch.LongTensor,
    h0: torch.Tensor,
    segment: int | None = None,
    chunk: int | None = None,
) -> torch.Tensor:
    """Chunked scan; same contract as naive_recurrent_lrnn: (R, n, n), (R, n), rows (B, T), h0 (n,) → (B, T, n).
    ``chunk`` None: :func:`default_chunk`; ``segment`` None: the whole word in one segment (memory O(B·T·n))."""
    return _chunked_scan(a_table, b_table, rows, h0, segment, chunk, diagonal=False)


def parallel_scan_diagonal(
    lam_table: torch.Tensor,
    b_table: torch.Tensor,
    rows: torch.LongTensor,
    h0: torch.Tensor,
    segment: int | None = None,
    chunk: int | None = None,
) -> torch.Tensor:
    """Chunked scan; same contract as naive_recurrent_diagonal, (re, im) in the last dimension."""
    return _chunked_scan(lam_table, b_table, rows, h0, segment, chunk, diagonal=True)
