"""The integer dtype of state and symbol indices, shared by the Automaton and the operations on it."""

from __future__ import annotations

import numpy as np

#: dtype of transition tables and state arrays.
STATE_DTYPE = np.int64

__all__ = ["STATE_DTYPE"]
