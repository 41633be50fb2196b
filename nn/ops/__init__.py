"""Scans and differentiable ops that run the recurrences of nn/ layers: one folder per op, each with a sequential
reference (naive.py) that every faster path is tested against.

Each op's package imports its Triton kernels only when ``impl="triton"`` (or ``"auto"`` on CUDA) asks for them,
so importing this package never imports triton. The ops are imported here eagerly, which also keeps
``fsa2rnn.nn.ops.diag_scan`` the function even after its folder's modules are imported.
"""

from .delta_product import delta_product
from .diag_scan import diag_scan, selective_scan
from .dlr import dlr_kernel_conv
from .pd_scan import pd_dict_st_scan, pd_scan, pd_st_scan
from .st_table_scan import st_table_scan

__all__ = [
    "delta_product",
    "diag_scan",
    "dlr_kernel_conv",
    "pd_dict_st_scan",
    "pd_scan",
    "pd_st_scan",
    "selective_scan",
    "st_table_scan",
]
