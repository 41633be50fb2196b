"""Parallel scans of affine maps h ↦ A h + b in pure torch.

The recurrence H_t = A_t H_{t−1} + b_t is the prefix composition of the affine maps (A_t, b_t) under
(A₂, b₂) ∘ (A₁, b₁) = (A₂A₁, A₂b₁ + b₂), which is associative. Two schedules:

- ``parallel_scan_lrnn`` (chunked, the default parallel path): the sequence is cut into chunks of C steps; all chunks
  compose their prefixes at once (C batched steps), the chunk totals are chained (T/C small steps), and every
  position is finished with one batched product — sequential depth C + T/C, work O(T n³).
- ``logdepth_scan_lrnn``: a Hillis–Steele inclusive scan in ⌈log₂ S⌉ rounds (work O(T log S · n³)).

Both run over segments of S steps chained through the carried state, which bounds memory at (B, S, n, n).
Diagonal maps compose elementwise (complex, as (re, im) pairs).
"""

from __future__ import annotations

import torch

from .naive import cmul

#: steps per segment: memory is B·S·n² per segment
DEFAULT_SEGMENT = 2048
#: steps per chunk of the chunked scan
DEFAULT_CHUNK = 16


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


def _chunked(a: torch.Tensor, b: torch.Tensor, h: torch.Tensor, chunk: int, diagonal: bool) -> torch.Tensor:
    """One segment: a (B, S, ...) and b (B, S, ...) with S a multiple of chunk, carried state h → states (B, S, ...).

    Inside the segment the chunk position leads ((C, B·K, ...), contiguous per step) so that every batched product
    reads and writes contiguous memory.
    """
    bsz, length = a.shape[:2]
    k = length // chunk
    a_shape, b_shape = a.shape[2:], b.shape[2:]
    a = a.reshape(bsz * k, chunk, *a_shape).transpose(0, 1).contiguous()  # (C, B·K, ...)
    b = b.reshape(bsz * k, chunk, *b_shape).transpose(0, 1).contiguous()
    ps, cs = [a[0]], [b[0]]  # lists, not in-place writes: the scan stays differentiable
    for j in range(1, chunk):  # prefixes inside every chunk at once
        if diagonal:
            ps.append(cmul(a[j], ps[-1]))
            cs.append(cmul(a[j], cs[-1]) + b[j])
        else:
            ps.append(torch.bmm(a[j], ps[-1]))
            cs.append(torch.bmm(a[j], cs[-1].unsqueeze(-1)).squeeze(-1) + b[j])
    p, c = torch.stack(ps), torch.stack(cs)
    p_tot = ps[-1].reshape(bsz, k, *a_shape)
    c_tot = cs[-1].reshape(bsz, k, *b_shape)
    hs = []
    for i in range(k):  # chain the chunk totals
        hs.append(h)
        if diagonal:
            h = cmul(p_tot[:, i], h) + c_tot[:, i]
        else:
            h = torch.bmm(p_tot[:, i], h.unsqueeze(-1)).squeeze(-1) + c_tot[:, i]
    h_in = torch.stack(hs, dim=1)
    h_in = h_in.reshape(1, bsz * k, *b_shape)
    if diagonal:
        out = cmul(p, h_in) + c
    else:
        out = torch.matmul(p, h_in.unsqueeze(-1)).squeeze(-1) + c
    return out.transpose(0, 1).reshape(bsz, length, *b_shape)


def _padded_tables(a_table: torch.Tensor, b_table: torch.Tensor, diagonal: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """Tables with one extra identity row (A = I, b = 0) used to pad the last chunk."""
    if diagonal:
        ident = torch.zeros_like(a_table[:1])
        ident[..., 0] = 1
    else:
        ident = torch.eye(a_table.shape[-1], dtype=a_table.dtype, device=a_table.device)[None]
    return torch.cat([a_table, ident]), torch.cat([b_table, torch.zeros_like(b_table[:1])])


def _chunked_scan(a_table, b_table, rows, h0, segment, chunk, diagonal):
    bsz, length = rows.shape
    a_ext, b_ext = _padded_tables(a_table, b_table, diagonal)
    pad_row = a_table.shape[0]
    h = h0.expand(bsz, *h0.shape)
    segs = []
    segment = max(chunk, segment - segment % chunk)
    for s in range(0, length, segment):
        r = rows[:, s : s + segment]
        n = r.shape[1]
        if n % chunk:
            r = torch.cat([r, r.new_full((bsz, chunk - n % chunk), pad_row)], dim=1)
        seg = _chunked(_gather(a_ext, r), _gather(b_ext, r), h, chunk, diagonal)[:, :n]
        segs.append(seg)
        h = seg[:, -1]
    return torch.cat(segs, dim=1) if segs else h0.new_empty(bsz, 0, *h0.shape)


def parallel_scan_lrnn(
    a_table: torch.Tensor,
    b_table: torch.Tensor,
    rows: torch.LongTensor,
    h0: torch.Tensor,
    segment: int = 8192,
    chunk: int = DEFAULT_CHUNK,
) -> torch.Tensor:
    """Chunked scan; same contract as naive_recurrent_lrnn: (R, n, n), (R, n), rows (B, T), h0 (n,) → (B, T, n)."""
    return _chunked_scan(a_table, b_table, rows, h0, segment, chunk, diagonal=False)


def parallel_scan_diagonal(
    lam_table: torch.Tensor,
    b_table: torch.Tensor,
    rows: torch.LongTensor,
    h0: torch.Tensor,
    segment: int = 8192,
    chunk: int = DEFAULT_CHUNK,
) -> torch.Tensor:
    """Chunked scan; same contract as naive_recurrent_diagonal, (re, im) in the last dimension."""
    return _chunked_scan(lam_table, b_table, rows, h0, segment, chunk, diagonal=True)
