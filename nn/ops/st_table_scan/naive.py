"""Sequential reference of the straight-through table scan: the NFSM training recurrence, one step at a time.

Per head, with z_t = θ_t + g_t (length-independent-state-tracking §6, straight-through Gumbel-softmax of Jang et al.):

    S̃_t = hard_t − sg(soft_t) + soft_t,   hard_t[k, j] = 1{j = argmax z_t[k, ·]},   soft_t = softmax(z_t / τ) by rows,
    a_0 = e_{h0},   a_t = S̃_tᵀ a_{t−1}   (a_t[j] = Σ_k a_{t−1}[k] S̃_t[k, j]),

with sg the stop-gradient: in value S̃_t is the hard table, so a_t = e_{h_t}; in the backward pass each row is the
softmax. A loop over ``unbind(1)``; autograd differentiates it. This is the recurrence of
``NFSMLayer.relaxed_forward`` (nn/nfsm.py) on given logits and noise; every other path is tested against it.
"""

from __future__ import annotations

import torch

from ..checks import length_mask


def gumbel_noise(
    shape: tuple[int, ...] | torch.Size,
    *,
    generator: torch.Generator | None = None,
    dtype: torch.dtype = torch.float32,
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """Standard Gumbel noise g = −log(−log u), u ~ U(0, 1) drawn in float32 on the CPU from ``generator`` and
    clamped to [1e-10, 1 − 1e-10] — in float32 and float64 the draw of nn/nfsm.py's ``straight_through_tables``
    (same seed, same noise). Half types are computed in float32 and rounded (u rounded to 1 would give g = ∞)."""
    work = dtype if dtype in (torch.float32, torch.float64) else torch.float32
    u = torch.rand(tuple(shape), generator=generator, dtype=torch.float32).to(device=device, dtype=work)
    return (-torch.log(-torch.log(u.clamp(1e-10, 1 - 1e-10)))).to(dtype)


def naive_st_table_scan(
    logits: torch.Tensor,
    h0: torch.Tensor,
    *,
    tau: float = 0.5,
    gumbel: torch.Tensor | None = None,
    lengths: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """logits (B, T, H, d, d), h0 (B, H) → states (B, T, H, d), indices (B, T, H); inputs assumed validated
    (see :func:`st_table_scan`). States are e_{h_t} exactly in value (the rounding of hard − soft + soft is removed
    by a stop-gradient correction, which leaves the gradient unchanged)."""
    bsz, length, heads, d, _ = logits.shape
    z = logits if gumbel is None else logits + gumbel
    soft = torch.softmax(z / tau, dim=-1)
    table = z.argmax(dim=-1)  # (B, T, H, d): σ_t(k)
    hard = torch.nn.functional.one_hot(table, d).to(soft.dtype)
    tables = hard - soft.detach() + soft  # S̃_t: the hard table in value, the softmax's derivative
    a = torch.nn.functional.one_hot(h0.long(), d).to(soft.dtype)  # (B, H, d)
    h = h0.long()
    states, indices = [], []
    for s_t, sigma_t in zip(tables.unbind(1), table.unbind(1)):
        a = torch.einsum("bhk,bhkj->bhj", a, s_t)  # a_t = S̃_tᵀ a_{t−1}
        h = sigma_t.gather(-1, h.unsqueeze(-1)).squeeze(-1)  # h_t = σ_t(h_{t−1})
        states.append(a)
        indices.append(h)
    if length == 0:
        return logits.new_zeros(bsz, 0, heads, d), torch.empty(bsz, 0, heads, dtype=torch.long, device=logits.device)
    st = torch.stack(states, 1)
    idx = torch.stack(indices, 1)
    st = st + (torch.nn.functional.one_hot(idx, d).to(st.dtype) - st).detach()
    if lengths is not None:
        pad = length_mask(lengths, length, logits.device)  # (B, T, 1)
        st = st.masked_fill(pad[..., None], 0)
        idx = idx.masked_fill(pad, -1)
    return st, idx
