"""Scans of the linear-RNN recurrence H_t = A_t H_{t−1} + b_t: a sequential reference (naive.py) and parallel
scans — chunked and log-depth (torch_scan.py) — that must agree with it (tests/test_lrnn_scan.py)."""

from .naive import cmul, naive_recurrent_diagonal, naive_recurrent_gh, naive_recurrent_lrnn
from .torch_scan import logdepth_scan_diagonal, logdepth_scan_lrnn, parallel_scan_diagonal, parallel_scan_lrnn

__all__ = [
    "cmul",
    "naive_recurrent_lrnn",
    "naive_recurrent_gh",
    "naive_recurrent_diagonal",
    "parallel_scan_lrnn",
    "parallel_scan_diagonal",
    "logdepth_scan_lrnn",
    "logdepth_scan_diagonal",
]
