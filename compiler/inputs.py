"""The symbol-id input of every executor of a compiled model (numpy, torch, exact interpreter, stepper).

:func:`check_symbol_ids` is the one check: every executor calls it first, so the same ids get the same answer —
the same :class:`~fsa2rnn.fsa.errors.SymbolIdError` (a subclass of UnknownSymbolError) with the same message, or
the same normalized batch — wherever they are run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from fsa2rnn.fsa.errors import SymbolIdError


@dataclass(frozen=True)
class SymbolIds:
    """A checked input: ``ids`` (B, T) int64 with every padding position set to 0, ``lengths`` (B,) int64 or None
    (every word T long), ``single`` when the input was one word (T,) (the executor answers (T,) then)."""

    ids: np.ndarray
    lengths: np.ndarray | None
    single: bool

    def padding(self) -> np.ndarray | None:
        """(B, T) bool, True past each word's length; None when there is none."""
        if self.lengths is None:
            return None
        return np.arange(self.ids.shape[1])[None, :] >= self.lengths[:, None]

    def finish(self, out: np.ndarray, fill: Any = -1) -> np.ndarray:
        """``out`` (B, T) with ``fill`` past each word's length, (T,) for a single word."""
        pad = self.padding()
        if pad is not None and pad.any():
            out = np.where(pad, fill, out)
        return out[0] if self.single else out


def _as_array(x: Any, what: str) -> np.ndarray:
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor (never imported here)
        x = x.detach().cpu().numpy()
    try:
        arr = np.asarray(x)
    except ValueError:  # ragged nested lists
        raise SymbolIdError(f"{what} must be a word (T,) or a batch (B, T) of words of one length") from None
    return arr


def check_symbol_ids(symbol_ids: Any, n_symbols: int, lengths: Any = None) -> SymbolIds:
    """Check and normalize symbol ids: a word (T,) or a batch (B, T) (array, tensor or nested lists) of integers
    in 0..n_symbols−1 within each word's length (``lengths`` (B,), each 0..T; positions past it are padding and
    may hold anything). An empty input is an empty batch. SymbolIdError names the first problem."""
    arr = _as_array(symbol_ids, "symbol ids")
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.dtype == object or arr.ndim not in (1, 2):
        raise SymbolIdError(
            f"symbol ids must be a word (T,) or a batch (B, T) of words of one length, got shape {list(arr.shape)}"
        )
    if arr.dtype.kind not in "iu":
        raise SymbolIdError(f"symbol ids must be integers, got dtype {arr.dtype}")
    single = arr.ndim == 1
    ids = arr.astype(np.int64).reshape(1, -1) if single else arr.astype(np.int64)
    bsz, length = ids.shape
    lens = None
    if lengths is not None:
        la = _as_array(lengths, "lengths")
        if la.size == 0:
            la = la.astype(np.int64)
        la = la.reshape(-1) if la.ndim <= 1 else la
        if la.dtype.kind not in "iu" or la.shape != (bsz,):
            raise SymbolIdError(f"lengths must be {bsz} integers (one per word), got shape {list(la.shape)}")
        lens = la.astype(np.int64)
        if lens.size and (lens.min() < 0 or lens.max() > length):
            raise SymbolIdError(f"a length is outside 0..{length} (the words have {length} positions)")
    inside = ids if lens is None else np.where(np.arange(length)[None, :] < lens[:, None], ids, 0)
    bad = (inside < 0) | (inside >= n_symbols)
    if bad.any():
        b, t = (int(v) for v in np.argwhere(bad)[0])
        raise SymbolIdError(
            f"symbol id {int(inside[b, t])} is out of range (ids are 0..{n_symbols - 1}): word {b + 1}, "
            f"position {t + 1}"
        )
    return SymbolIds(inside, lens, single)


__all__ = ["SymbolIds", "check_symbol_ids"]
