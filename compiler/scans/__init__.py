"""The numpy scans the executors share: the chunked affine scan of linear recurrences (affine_scan.py) and the keyed
table scan of integer tables (table_scan.py, which the torch ``impl="chunked"`` table scan runs too)."""

from .affine_scan import affine_scan
from .table_scan import table_scan

__all__ = ["affine_scan", "table_scan"]
