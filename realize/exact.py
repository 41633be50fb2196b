"""The exact check of linear-RNN models (rational / angle-index / exponent arithmetic, no floating point).

It lives in compiler/exact/lrnn.py because every ``compile_householder`` / ``compile_diagonal`` runs it before
returning (``summary["verified"]``) and the compiler imports only ``fsa``; realize re-exports it here.
"""

from fsa2rnn.compiler.exact.lrnn import MAX_CONFIGURATIONS, exact_check, explore

__all__ = ["MAX_CONFIGURATIONS", "exact_check", "explore"]
