"""Triton table scan, chunked: compose within a chunk, carry across chunks, replay each chunk (README.md).

Three kernels, each a loop over time inside one program, all runnable under the CPU interpreter (TRITON_INTERPRET=1):
1. ``_compose``  grid (B, n_c): Π_c = σ_{cC+C-1} ∘ … ∘ σ_{cC} as a D_PAD-lane vector (d ≤ 256 indices): load the
   row σ_t (its address does not depend on the running composite), then compose by a register gather
   ``tl.gather(row, Π, 0)``.
2. ``_carry``    grid (B,):     s_0 = h0, s_{c+1} = Π_c(s_c).
3. ``_replay``   grid (B, n_c): h ← σ_t(h) from s_c, storing every state (row load + select, or a dependent load).
Tables may be stored as uint8 (d ≤ 256), int16, int32 or int64; uint8 is the packing that pays (one byte per
entry), wider integer packing of several indices per word does not reduce traffic further for gathers.
Imports are guarded: without triton, :data:`HAS_TRITON` is False and calling the scan raises.
"""

from __future__ import annotations

import os

import torch

from ....fsa.errors import LimitExceededError
from .naive import _mask

try:  # pragma: no cover - exercised where triton is installed
    import triton
    import triton.language as tl

    HAS_TRITON = True
except ImportError:  # pragma: no cover
    HAS_TRITON = False

#: Largest number of attractor indices per table the kernels accept.
MAX_INDICES = 256

if HAS_TRITON:

    @triton.jit
    def _compose(bank, keys, comp, T, n_c, d, CHUNK: tl.constexpr, D_PAD: tl.constexpr, DIRECT: tl.constexpr):
        b = tl.program_id(0).to(tl.int64)
        c = tl.program_id(1).to(tl.int64)
        offs = tl.arange(0, D_PAD)
        lane = offs < d
        cur = offs
        for s in range(CHUNK):
            t = c * CHUNK + s
            valid = t < T
            tc = tl.minimum(t, T - 1)  # past the end: reread the last table, then discard it
            if DIRECT:
                key = b * T + tc
            else:
                key = tl.load(keys + b * T + tc).to(tl.int64)
            # the row's address does not depend on cur: loads of successive steps can be in flight together
            row = tl.load(bank + key * d + offs, mask=lane, other=0).to(tl.int32)
            cur = tl.where(valid, tl.gather(row, cur, 0), cur)  # (σ_t ∘ Π)(j) = σ_t[Π[j]]
        tl.store(comp + (b * n_c + c) * d + offs, cur.to(tl.int64), mask=lane)

    @triton.jit
    def _carry(comp, h0, starts, n_c, d):
        b = tl.program_id(0).to(tl.int64)
        h = tl.load(h0 + b).to(tl.int64)
        for c in range(n_c):
            tl.store(starts + b * n_c + c, h)
            h = tl.load(comp + (b * n_c + c) * d + h).to(tl.int64)

    @triton.jit
    def _replay(
        bank,
        keys,
        starts,
        out,
        T,
        n_c,
        d,
        CHUNK: tl.constexpr,
        D_PAD: tl.constexpr,
        DIRECT: tl.constexpr,
        ROWS: tl.constexpr,
    ):
        b = tl.program_id(0).to(tl.int64)
        c = tl.program_id(1).to(tl.int64)
        h = tl.load(starts + b * n_c + c).to(tl.int64)
        offs = tl.arange(0, D_PAD)
        lane = offs < d
        for s in range(CHUNK):
            t = c * CHUNK + s
            valid = t < T
            tc = tl.minimum(t, T - 1)
            if DIRECT:
                key = b * T + tc
            else:
                key = tl.load(keys + b * T + tc).to(tl.int64)
            if ROWS:  # load the whole row (independent of h), select entry h
                row = tl.load(bank + key * d + offs, mask=lane, other=0).to(tl.int64)
                h = tl.sum(tl.where(offs == h, row, 0))
            else:  # one dependent scalar load per step
                h = tl.load(bank + key * d + h).to(tl.int64)
            tl.store(out + b * T + tc, h, mask=valid)


def triton_available(device: torch.device | str | None = None) -> bool:
    """Whether the kernels can run for tensors on ``device`` (CUDA, or CPU under TRITON_INTERPRET=1)."""
    if not HAS_TRITON:
        return False
    dev = torch.device(device) if device is not None else None
    if dev is not None and dev.type == "cuda":
        return True
    return os.environ.get("TRITON_INTERPRET") == "1"


def triton_table_scan(
    bank: torch.Tensor,
    keys: torch.Tensor | None,
    h0: torch.Tensor,
    lengths: torch.Tensor | None = None,
    *,
    chunk: int = 64,
    direct_shape: tuple[int, int] | None = None,
    replay_rows: bool = True,
) -> torch.Tensor:
    """Same contract as :func:`naive_table_scan`. With ``keys=None`` and ``direct_shape=(B, T)``, ``bank`` is the
    (B·T, d) stack of per-step tables and step t of sequence b uses row b·T + t (no key reads).
    ``replay_rows``: the replay loads whole rows and selects (pipelinable) instead of one dependent load per step."""
    if not HAS_TRITON:
        raise RuntimeError("triton is not installed")
    d = bank.shape[1]
    if d > MAX_INDICES:
        raise LimitExceededError(f"the Triton table scan takes at most {MAX_INDICES} indices per table, got {d}")
    if keys is None:
        if direct_shape is None:
            raise ValueError("keys=None needs direct_shape=(B, T)")
        bsz, length = direct_shape
    else:
        bsz, length = keys.shape
        keys = keys.contiguous()
    device = bank.device
    out = torch.empty(bsz, length, dtype=torch.long, device=device)
    if length == 0 or bsz == 0:
        return out
    chunk = max(1, min(int(chunk), length))
    n_c = -(-length // chunk)
    d_pad = max(2, triton.next_power_of_2(d))
    bank = bank.contiguous()
    comp = torch.empty(bsz * n_c * d, dtype=torch.long, device=device)
    starts = torch.empty(bsz * n_c, dtype=torch.long, device=device)
    h0 = h0.to(device=device, dtype=torch.long).contiguous()
    key_arg = keys if keys is not None else h0  # any pointer; unused when DIRECT
    direct = keys is None
    warps = max(1, min(8, d_pad // 32))
    _compose[(bsz, n_c)](bank, key_arg, comp, length, n_c, d, CHUNK=chunk, D_PAD=d_pad, DIRECT=direct, num_warps=warps)
    _carry[(bsz,)](comp, h0, starts, n_c, d, num_warps=1)
    _replay[(bsz, n_c)](
        bank,
        key_arg,
        starts,
        out,
        length,
        n_c,
        d,
        CHUNK=chunk,
        D_PAD=d_pad,
        DIRECT=direct,
        ROWS=replay_rows,
        num_warps=warps,
    )
    return _mask(out, lengths)
