"""DeltaProduct in the chunked WY/UT form, in torch (README.md, "Chunk form").

The n_h delta steps of each token are laid end to end: a sequence of T·n_h delta steps in which only the state after
every n_h-th step is read. Cut into chunks of C = c_t·n_h steps (c_t tokens; C from 16 to 64), a chunk with keys K,
values V and β (rows r = 1..C) acts on the state S entering it as

    S ↦ P S + Kᵀ U,   P = I − Kᵀ W,   [W U] = (I + tril(diag(β) K Kᵀ, −1))⁻¹ [diag(β) K  diag(β) V]

(the WY representation of the product of its C generalized Householder matrices; the UT transform is the unit lower
triangular solve). The outputs of the chunk's tokens follow from the state entering it:

    O = Q S + (Q Kᵀ ⊙ M)(U − W S),   M[τ, r] = [r ≤ (τ + 1)·n_h],

so the only sequential work is the chain S_{c+1} = P_c S_c + Kᵀ_c U_c over T·n_h / C chunks: one batched product per
chunk. Everything else is batched over all chunks at once. Padding (the last chunk, positions t ≥ lengths[b]) is
β = 0, an identity step. The backward pass is autograd through these batched operations (README.md derives it).
"""

from __future__ import annotations

import math

import torch

from .naive import compute_dtype, valid_mask


def default_chunk(bsz: int, heads: int, dk: int, dv: int) -> int:
    """Delta steps per chunk. The chain costs a fixed dispatch overhead per chunk, the batched work grows as
    B·H·C·(dk + dv) per step, so the best C falls as 1/√(B·H·(dk + dv)): 64 at B·H·(dk + dv) ≤ 64 (the
    overhead-bound shape), down to 16 for wide batches."""
    c = 64 * (64 / max(1, bsz * heads * (dk + dv))) ** 0.5
    return int(min(64, max(16, 2 ** round(math.log2(max(c, 1))))))


def chunk_delta_product(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    beta: torch.Tensor,
    h0: torch.Tensor | None = None,
    lengths: torch.Tensor | None = None,
    *,
    chunk: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Same contract as :func:`naive_delta_product`; ``chunk`` delta steps per chunk (default: :func:`default_chunk`,
    rounded down to a multiple of n_h)."""
    bsz, length, heads, dk = q.shape
    n_h, dv = k.shape[2], v.shape[-1]
    chunk = default_chunk(bsz, heads, dk, dv) if chunk is None else chunk
    out_dtype, dt = q.dtype, compute_dtype(q.dtype)
    q, k, v, beta = q.to(dt), k.to(dt), v.to(dt), beta.to(dt)
    valid = valid_mask(lengths, bsz, length, q.device)
    if valid is not None:
        beta = beta * valid[:, :, None, None].to(dt)  # β = 0: the identity step
    ct = max(1, chunk // n_h)  # tokens per chunk
    c = ct * n_h  # delta steps per chunk
    n_c = max(1, -(-length // ct))
    pad = n_c * ct - length
    if pad:
        q, k, v, beta = (torch.nn.functional.pad(x, (0, 0) * (x.dim() - 2) + (0, pad)) for x in (q, k, v, beta))
    bh = bsz * heads
    # chunk-major layouts (n_c, B·H, rows, d): every chunk's slice is contiguous
    kc = k.view(bsz, n_c, ct, n_h, heads, dk).permute(1, 0, 4, 2, 3, 5).reshape(n_c, bh, c, dk)
    vc = v.view(bsz, n_c, ct, n_h, heads, dv).permute(1, 0, 4, 2, 3, 5).reshape(n_c, bh, c, dv)
    bc = beta.view(bsz, n_c, ct, n_h, heads).permute(1, 0, 4, 2, 3).reshape(n_c, bh, c, 1)
    qc = q.view(bsz, n_c, ct, heads, dk).permute(1, 0, 3, 2, 4).reshape(n_c, bh, ct, dk)

    kt = kc.transpose(-1, -2)
    a = torch.tril((bc * kc) @ kt, diagonal=-1)  # β_r k_rᵀ k_i for i < r
    wu = torch.linalg.solve_triangular(a, torch.cat([bc * kc, bc * vc], dim=-1), upper=False, unitriangular=True)
    w, u = wu[..., :dk], wu[..., dk:]
    p = torch.eye(dk, dtype=dt, device=q.device) - kt @ w  # (n_c, B·H, dk, dk): the chunk's GH product
    hu = kt @ u  # (n_c, B·H, dk, dv)

    s = q.new_zeros(bh, dk, dv) if h0 is None else h0.to(dt).reshape(bh, dk, dv)
    states = []
    for p_c, hu_c in zip(p.unbind(0), hu.unbind(0)):  # the only sequential part: S_{c+1} = P_c S_c + Kᵀ_c U_c
        states.append(s)  # (unbind, not indexing: autograd then stacks the gradients once)
        s = torch.baddbmm(hu_c, p_c, s)
    s_in = torch.stack(states)  # (n_c, B·H, dk, dv), the state entering each chunk

    rows = torch.arange(c, device=q.device)
    mask = rows[None, :] < (torch.arange(1, ct + 1, device=q.device) * n_h)[:, None]  # (ct, c)
    qk = (qc @ kt) * mask.to(dt)
    o = qc @ s_in + qk @ (u - w @ s_in)  # (n_c, B·H, ct, dv)
    o = o.view(n_c, bsz, heads, ct, dv).permute(1, 0, 3, 2, 4).reshape(bsz, n_c * ct, heads, dv)[:, :length]
    if valid is not None:
        o = o * valid[:, :, None, None].to(dt)
    return o.to(out_dtype), s.view(bsz, heads, dk, dv).to(out_dtype)
