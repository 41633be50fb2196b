"""Scans of the linear-RNN recurrence H_t = A_t H_{t−1} + b_t: a sequential reference (naive.py), parallel scans —
chunked and log-depth (torch_scan.py) — that must agree with it, and the chunked scan of permutation/reset layers in
monomial form (monomial.py), which must equal it bit for bit (tests/nn/test_lrnn_scan.py)."""

from .monomial import monomial_form, monomial_scan
from .naive import cmul, naive_recurrent_diagonal, naive_recurrent_gh, naive_recurrent_lrnn
from .torch_scan import logdepth_scan_diagonal, logdepth_scan_lrnn, parallel_scan_diagonal, parallel_scan_lrnn

__all__ = [
    "cmul",
    "monomial_form",
    "monomial_scan",
    "naive_recurrent_lrnn",
    "naive_recurrent_gh",
    "naive_recurrent_diagonal",
    "parallel_scan_lrnn",
    "parallel_scan_diagonal",
    "logdepth_scan_lrnn",
    "logdepth_scan_diagonal",
]
