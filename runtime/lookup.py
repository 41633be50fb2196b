"""Integer key → value maps of the executors: :class:`~fsa2rnn.compiler.keys.KeyLookup`, re-exported (the one
definition and its dense threshold live in compiler/keys.py)."""

from __future__ import annotations

from fsa2rnn.compiler.keys import DENSE_KEYS, KeyLookup

__all__ = ["DENSE_KEYS", "KeyLookup"]
