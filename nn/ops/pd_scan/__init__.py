"""The PD-SSM scan (Terzić et al. 2025, arXiv 2509.22284): h_t = P_t D_t h_{t−1} + b_t with P_t column one-hot and
D_t diagonal (complex or real), P_t given as index arrays (column j of P_t has its one in row idx_t[j]).

- :func:`pd_scan` ``(idx, diag, b, h0=None, *, impl)``: P given; differentiable in ``diag``, ``b`` and ``h0``.
- :func:`pd_st_scan` ``(logits, diag, b, h0=None, *, impl)``: P_t the column hardmax of the logits M_t (N × N),
  with the paper's surrogate gradient (the column softmax's derivative, straight-through); returns the states
  and idx. Differentiable in ``logits`` too.
- :func:`pd_dict_st_scan` ``(weights, dictionary, diag, b, h0=None, *, impl)``: the same with M_t = Σ_k
  weights_t[k] dictionary[k], the PD-SSM layer's mixture; the torch path never holds all the logits (time blocks,
  activation checkpointing). Differentiable in ``weights`` and ``dictionary`` through the surrogate.

Paths: ``naive`` (the recurrence step by step, naive.py: the reference; for ``pd_st_scan`` the dense
straight-through matrices), ``torch`` (chunked scan in the class of PD matrices, torch_scan.py). ``auto``:
torch. README.md derives the composition and the surrogate.
"""

from __future__ import annotations

import torch

from ..checks import OpInputError, check_dtype, check_impl, check_shape, check_tensor
from .naive import naive_pd_dict_st_scan, naive_pd_scan, naive_pd_st_scan, pd_apply
from .torch_scan import LOGIT_BLOCK, torch_pd_dict_st_scan, torch_pd_scan, torch_pd_st_scan

IMPLEMENTATIONS = ("naive", "torch")
DTYPES = (torch.float32, torch.float64, torch.complex64, torch.complex128)
_REAL = {torch.complex64: torch.float32, torch.complex128: torch.float64}


def _check(op: str, diag: object, b: object, h0: object, impl: str) -> tuple[int, int, int]:
    check_impl(op, impl, IMPLEMENTATIONS)
    check_tensor(op, "diag", diag, 3)
    check_tensor(op, "b", b, 3)
    check_dtype(op, "diag", diag, DTYPES, "float32/64 or complex64/128")
    check_shape(op, "b", b, diag.shape, "the shape of diag, (B, T, N)")
    check_dtype(op, "b", b, diag.dtype, "the dtype of diag")
    bsz, length, n = diag.shape
    if h0 is not None:
        check_tensor(op, "h0", h0)
        check_shape(op, "h0", h0, (bsz, n), "(B, N) from diag's shape")
        check_dtype(op, "h0", h0, diag.dtype, "the dtype of diag")
    return bsz, length, n


def pd_scan(
    idx: torch.Tensor, diag: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None, *, impl: str = "auto"
) -> torch.Tensor:
    """States h (B, T, N) of h_t = P_t D_t h_{t−1} + b_t from h0 (zeros if None).

    ``idx`` (B, T, N) integers in [0, N): P_t's column j has its one in row idx[b, t, j]; ``diag``, ``b`` (B, T, N)
    and ``h0`` (B, N) of one dtype (float32/64, complex64/128). Differentiable in diag, b, h0 (PyTorch's convention
    for complex gradients)."""
    shape = _check("pd_scan", diag, b, h0, impl)
    check_tensor("pd_scan", "idx", idx, 3)
    check_shape("pd_scan", "idx", idx, shape, "the shape of diag, (B, T, N)")
    if idx.dtype.is_floating_point or idx.dtype.is_complex or idx.dtype == torch.bool:
        raise OpInputError(f"pd_scan: idx has dtype {str(idx.dtype).removeprefix('torch.')}, expected an integer")
    if idx.numel() and (int(idx.min()) < 0 or int(idx.max()) >= shape[2]):
        raise OpInputError(f"pd_scan: idx must lie in [0, {shape[2]}), got [{int(idx.min())}, {int(idx.max())}]")
    idx = idx.long()
    return naive_pd_scan(idx, diag, b, h0) if impl == "naive" else torch_pd_scan(idx, diag, b, h0)


def pd_st_scan(
    logits: torch.Tensor, diag: torch.Tensor, b: torch.Tensor, h0: torch.Tensor | None = None, *, impl: str = "auto"
) -> tuple[torch.Tensor, torch.Tensor]:
    """(h (B, T, N), idx (B, T, N) int64) of the PD-SSM with P_t the column hardmax of ``logits`` M_t (B, T, N, N)
    (idx_t[j] = argmax_i M_t[i, j], first index on ties) and the surrogate gradient of the paper: in the backward
    pass P_t acts as the column softmax S_t (its value stays the hard P_t). ``logits`` real, of diag's real dtype."""
    bsz, length, n = _check("pd_st_scan", diag, b, h0, impl)
    check_tensor("pd_st_scan", "logits", logits, 4)
    check_shape("pd_st_scan", "logits", logits, (bsz, length, n, n), "(B, T, N, N) from diag's shape")
    check_dtype("pd_st_scan", "logits", logits, _REAL.get(diag.dtype, diag.dtype), "the real dtype of diag")
    if impl == "naive":
        return naive_pd_st_scan(logits, diag, b, h0)
    return torch_pd_st_scan(logits, diag, b, h0)


def pd_dict_st_scan(
    weights: torch.Tensor,
    dictionary: torch.Tensor,
    diag: torch.Tensor,
    b: torch.Tensor,
    h0: torch.Tensor | None = None,
    *,
    impl: str = "auto",
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`pd_st_scan` with logits M_t = Σ_k weights[b, t, k] dictionary[k]: ``weights`` (B, T, K) and
    ``dictionary`` (K, N, N) real, of diag's real dtype. The torch path takes the column argmax and the surrogate
    :data:`LOGIT_BLOCK` logits at a time (recomputed in the backward pass); the naive path forms all the logits."""
    bsz, length, n = _check("pd_dict_st_scan", diag, b, h0, impl)
    check_tensor("pd_dict_st_scan", "weights", weights, 3)
    check_tensor("pd_dict_st_scan", "dictionary", dictionary, 3)
    k = dictionary.shape[0]
    check_shape("pd_dict_st_scan", "dictionary", dictionary, (k, n, n), "(K, N, N) from diag's shape")
    check_shape("pd_dict_st_scan", "weights", weights, (bsz, length, k), "(B, T, K) from diag and dictionary")
    real = _REAL.get(diag.dtype, diag.dtype)
    check_dtype("pd_dict_st_scan", "weights", weights, real, "the real dtype of diag")
    check_dtype("pd_dict_st_scan", "dictionary", dictionary, real, "the real dtype of diag")
    if impl == "naive":
        return naive_pd_dict_st_scan(weights, dictionary, diag, b, h0)
    return torch_pd_dict_st_scan(weights, dictionary, diag, b, h0)


__all__ = ["IMPLEMENTATIONS", "LOGIT_BLOCK", "naive_pd_dict_st_scan", "naive_pd_scan", "naive_pd_st_scan", "pd_apply",
           "pd_dict_st_scan", "pd_scan", "pd_st_scan", "torch_pd_dict_st_scan", "torch_pd_scan",
           "torch_pd_st_scan"]  # fmt: skip
