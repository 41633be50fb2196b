"""State names from predicted state indices: a model whose state leads out of its readout is an error, never a null.

``predict_states`` marks with −1 both the positions past a word's length and the steps at which the model's state
has no automaton state (an NFSM configuration its readout does not know, a hidden vector no code point decodes):
the second means that the model failed, at the dtype it runs at, to realize the automaton it was compiled from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..fsa.errors import ModelFileError


def state_names(
    states: Any,
    names: Sequence[str],
    lengths: Any = None,
    *,
    labels: Sequence[str] | None = None,
    dtype: str = "",
) -> list[list[str]]:
    """The state names of predicted indices ``states`` (B, T) (tensor or array), each row cut at its length.

    Raises ModelFileError naming the word and the step when an index within a word's length is −1 (or out of
    range): the model's state left its readout. ``labels`` name the rows in that message (e.g. "stdin line 3";
    default "word b"), ``dtype`` the precision the model ran at.
    """
    idx = np.asarray(states.cpu() if hasattr(states, "cpu") else states, dtype=np.int64)
    idx = idx.reshape(1, -1) if idx.ndim == 1 else idx
    bsz, length = idx.shape
    lens = np.full(bsz, length, dtype=np.int64) if lengths is None else np.asarray(lengths, dtype=np.int64)
    inside = np.arange(length)[None, :] < lens[:, None]
    bad = inside & ((idx < 0) | (idx >= len(names)))
    if bad.any():
        b, t = (int(v) for v in np.argwhere(bad)[0])
        word = labels[b] if labels is not None else f"word {b + 1}"
        at = f" at {dtype}" if dtype else ""
        raise ModelFileError(
            f"{word}: after symbol {t + 1} the model's state{at} is outside its readout (no automaton state): "
            "the model does not realize its automaton there"
        )
    table = np.asarray(list(names), dtype=object)
    return [table[row[:n]].tolist() for row, n in zip(idx, lens)]
