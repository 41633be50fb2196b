"""Exact scans over transition tables (docs/theory.md, "Neural Finite-State Machines"): h_t = σ_t(h_{t−1}) with integer
tables σ_t.

Every path takes a *keyed* table scan: ``bank`` (K, d) holds the distinct tables, ``keys`` (B, T) picks the table of
each step (for an NFSM layer, the symbol or the symbol with the indices of the layer above), ``h0`` (B,) the start
index, ``lengths`` (B,) optional. :func:`table_scan` takes per-step tables (B, T, d) instead. All paths return the
same (B, T) int64 states, -1 past each length:

- ``naive``   sequential reference (naive.py)
- ``chunked`` fast CPU path in numpy (chunked.py)
- ``torch``   Hillis–Steele parallel composition, O(log T) depth (torch_scan.py)
- ``triton``  chunked Triton kernels; CUDA, or CPU under TRITON_INTERPRET=1 (triton.py)

triton itself is imported on first use of the Triton path (``triton_available``, ``triton_table_scan``, or
``impl="triton"``/``"auto"`` on CUDA), so importing this package does not import it.
"""

from __future__ import annotations

import torch

from ....fsa.lazy import lazy_getattr
from .chunked import chunked_table_scan
from .naive import naive_table_scan
from .torch_scan import torch_table_scan

IMPLEMENTATIONS = ("naive", "chunked", "torch", "triton")


def keyed_table_scan(
    bank: torch.Tensor,
    keys: torch.Tensor,
    h0: torch.Tensor,
    lengths: torch.Tensor | None = None,
    *,
    impl: str = "auto",
) -> torch.Tensor:
    """States after each step: h_t = bank[keys[:, t], h_{t−1}] from h0; -1 at positions t ≥ lengths[b].

    ``impl="auto"``: Triton on CUDA tensors, else the chunked CPU path.
    """
    if impl == "auto":
        impl = "triton" if keys.is_cuda and _kernels().triton_available(keys.device) else "chunked"
    if impl == "naive":
        return naive_table_scan(bank, keys, h0, lengths)
    if impl == "chunked":
        return chunked_table_scan(bank, keys, h0, lengths)
    if impl == "torch":
        return torch_table_scan(bank, keys, h0, lengths)
    if impl == "triton":
        return _kernels().triton_table_scan(bank, keys, h0, lengths)
    raise ValueError(f"unknown table scan {impl!r} (choose from {', '.join(IMPLEMENTATIONS)} or auto)")


def table_scan(
    tables: torch.Tensor, h0: torch.Tensor, lengths: torch.Tensor | None = None, *, impl: str = "auto"
) -> torch.Tensor:
    """Scan per-step tables ``tables`` (B, T, d): h_t = tables[b, t, h_{t−1}]."""
    bsz, length, d = tables.shape
    if impl == "triton" or (impl == "auto" and tables.is_cuda and _kernels().triton_available(tables.device)):
        return _kernels().triton_table_scan(tables.reshape(-1, d), None, h0, lengths, direct_shape=(bsz, length))
    keys = torch.arange(bsz * length, device=tables.device).view(bsz, length)
    return keyed_table_scan(tables.reshape(-1, d), keys, h0, lengths, impl=impl)


def _kernels():
    """The Triton module (triton.py), imported on first use: importing triton is slow, and optional."""
    from . import triton as kernels

    return kernels


__getattr__ = lazy_getattr(
    __name__, {"triton_available": ("triton", "triton_available"), "triton_table_scan": ("triton", "triton_table_scan")}
)


__all__ = [
    "IMPLEMENTATIONS",
    "keyed_table_scan",
    "table_scan",
    "naive_table_scan",
    "chunked_table_scan",
    "torch_table_scan",
    "triton_table_scan",
    "triton_available",
]
