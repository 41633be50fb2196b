"""DeltaProduct (DeltaNet for n_h = 1): a linear RNN whose state S ∈ R^{dk×dv} moves by generalized Householder
steps (negative-eigenvalues §4.2). Per token t, for j = 1..n_h,

    S ← (I − β_{t,j} k_{t,j} k_{t,j}ᵀ) S + β_{t,j} k_{t,j} v_{t,j}ᵀ,   then   o_t = Sᵀ q_t,

with β ∈ [0, 2] (eigenvalues of each factor in [−1, 1]); keys are used as given. Paths (README.md derives them):

- ``naive``   the recurrence, one delta step at a time (naive.py): the reference of every test
- ``torch``   the chunked WY/UT form (chunk.py): one batched product per chunk of 16–64 delta steps
- ``triton``  a fused recurrent kernel, forward and backward (triton.py; CUDA, or CPU under TRITON_INTERPRET=1)
- ``fla``     flash-linear-attention's chunk kernels (chunk_delta_rule, chunk_gated_delta_product), when installed
"""

from __future__ import annotations

import torch

from ..checks import OpInputError, check_dtype, check_impl, check_lengths, check_shape, check_tensor
from .chunk import chunk_delta_product
from .naive import naive_delta_product, valid_mask

IMPLEMENTATIONS = ("naive", "torch", "triton", "fla")
_OP = "delta_product"
_FLOATS = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def delta_product(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    beta: torch.Tensor,
    h0: torch.Tensor | None = None,
    *,
    lengths: torch.Tensor | None = None,
    impl: str = "auto",
) -> tuple[torch.Tensor, torch.Tensor]:
    """q (B, T, H, dk), k (B, T, n_h, H, dk), v (B, T, n_h, H, dv), beta (B, T, n_h, H) in [0, 2], h0 (B, H, dk, dv)
    or None (zeros) → (o (B, T, H, dv), S_T (B, H, dk, dv)).

    Positions t ≥ lengths[b] give o = 0 and leave S unchanged, so S_T is each sequence's state after its own length.
    ``impl="auto"``: Triton on CUDA tensors, else the chunked torch path. Bad shapes, dtypes or β outside [0, 2]
    (padding included) raise :class:`OpInputError` (a ValueError) naming the tensor.
    """
    _check(q, k, v, beta, h0, lengths, impl)
    if impl == "auto":
        impl = "triton" if q.is_cuda and _has_triton() else "torch"
    if impl == "naive":
        return naive_delta_product(q, k, v, beta, h0, lengths)
    if impl == "torch":
        return chunk_delta_product(q, k, v, beta, h0, lengths)
    if impl == "triton":
        from .triton import triton_delta_product  # lazy: importing the ops never imports triton

        return triton_delta_product(q, k, v, beta, h0, lengths)
    return fla_delta_product(q, k, v, beta, h0, lengths)


def fla_delta_product(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    beta: torch.Tensor,
    h0: torch.Tensor | None = None,
    lengths: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """flash-linear-attention's chunk kernel on the same contract (scale 1; the n_h steps of a token laid end to end,
    as fla's gated delta product lays them; padding as β = 0). fla takes half-precision inputs on CUDA."""
    try:
        from fla.ops.delta_rule import chunk_delta_rule
        from fla.ops.gated_delta_product import chunk_gated_delta_product
    except ImportError as e:
        raise RuntimeError(
            "delta_product: impl='fla' needs flash-linear-attention (pip install flash-linear-attention)"
        ) from e
    if not q.is_cuda:
        raise RuntimeError("delta_product: impl='fla' runs fla's Triton kernels and needs CUDA tensors")
    if q.dtype not in (torch.float16, torch.bfloat16):
        raise RuntimeError(f"delta_product: impl='fla' takes float16 or bfloat16 (fla's chunk kernels), got {q.dtype}")
    bsz, length, heads, dk = q.shape
    n_h, dv = k.shape[2], v.shape[-1]
    valid = valid_mask(lengths, bsz, length, q.device)
    if valid is not None:
        beta = beta * valid[:, :, None, None].to(beta.dtype)
    kf = k.reshape(bsz, length * n_h, heads, dk)
    vf = v.reshape(bsz, length * n_h, heads, dv)
    bf = beta.reshape(bsz, length * n_h, heads)
    s0 = h0.float() if h0 is not None else None
    if n_h == 1:
        o, s = chunk_delta_rule(q, kf, vf, bf, scale=1.0, initial_state=s0, output_final_state=True)
    else:
        o, s = chunk_gated_delta_product(
            q, kf, vf, None, bf, num_householder=n_h, scale=1.0, initial_state=s0, output_final_state=True
        )
    if valid is not None:
        o = o * valid[:, :, None, None].to(o.dtype)
    return o, s.to(q.dtype)


def _has_triton() -> bool:
    from .triton import HAS_TRITON

    return HAS_TRITON


def _check(q, k, v, beta, h0, lengths, impl) -> None:
    """Shapes, dtypes, devices and β ∈ [0, 2], before any work."""
    check_impl(_OP, impl, IMPLEMENTATIONS)
    check_tensor(_OP, "q", q, 4)
    bsz, length, heads, dk = q.shape
    check_dtype(_OP, "q", q, _FLOATS, "a floating dtype")
    check_tensor(_OP, "k", k, 5)
    n_h = k.shape[2]
    check_shape(_OP, "k", k, (bsz, length, n_h, heads, dk), "(B, T, n_h, H, dk) from q (B, T, H, dk)")
    if n_h < 1:
        raise OpInputError(f"{_OP}: k has shape {tuple(k.shape)}, expected n_h = k.shape[2] ≥ 1")
    check_tensor(_OP, "v", v, 5)
    dv = v.shape[-1]
    check_shape(_OP, "v", v, (bsz, length, n_h, heads, dv), "(B, T, n_h, H, dv) from q and k")
    check_tensor(_OP, "beta", beta, 4)
    check_shape(_OP, "beta", beta, (bsz, length, n_h, heads), "(B, T, n_h, H) from q and k")
    named = [("k", k), ("v", v), ("beta", beta)]
    if h0 is not None:
        check_tensor(_OP, "h0", h0, 4)
        check_shape(_OP, "h0", h0, (bsz, heads, dk, dv), "(B, H, dk, dv) from q and v")
        named.append(("h0", h0))
    for name, t in named:
        check_dtype(_OP, name, t, q.dtype, "the dtype of q")
        if t.device != q.device:
            raise OpInputError(f"{_OP}: {name} is on {t.device}, expected {q.device} (the device of q)")
    check_lengths(_OP, lengths, bsz, length)
    if beta.numel():
        lo, hi = (float(x) for x in torch.aminmax(beta.detach()))
        if not (lo >= 0 and hi <= 2):  # also rejects NaN
            raise OpInputError(
                f"{_OP}: beta has shape {tuple(beta.shape)} with values in [{lo:g}, {hi:g}], expected values in [0, 2]"
            )


__all__ = ["IMPLEMENTATIONS", "delta_product", "naive_delta_product", "chunk_delta_product", "fla_delta_product"]
