"""Words given as symbols: the one check of symbol ids, and of symbol names where an alphabet is known.

:func:`check_symbol_ids` is what ``Automaton.run`` and every executor of a compiled model (numpy, torch, exact
interpreter, stepper) run first, so the same input gets the same answer everywhere: the same normalized batch, or
the same :class:`~fsa2rnn.fsa.errors.SymbolIdError` (an UnknownSymbolError) with the same message.
:func:`check_id_range` is its range test alone, for callers that hold an integer array or tensor already (a cascade,
a trained model's embedding); it reads numpy arrays and torch tensors alike and converts nothing unless an id is
bad.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .errors import SymbolIdError

_SHAPE = "symbol ids must be a word (T,) or a batch (B, T) of words of one length"
#: what a word given as one string is told (Automaton.run raises it as a SpecError)
STRING_WORD = "a word is a sequence of symbol names, not a string (use list('abc') for one-letter symbols)"


def preview_names(names: Sequence[str], k: int = 8) -> str:
    """``{'a', 'b', …}``: the first ``k`` names of an alphabet or state set, for messages."""
    shown = ", ".join(repr(s) for s in list(names)[:k])
    return "{" + shown + (", …" if len(names) > k else "") + "}"


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


def _numpy(x: Any) -> Any:
    if hasattr(x, "detach") and hasattr(x, "cpu"):  # a torch tensor (never imported here)
        return x.detach().cpu().numpy()
    return x


def check_id_range(ids: Any, n_symbols: int) -> None:
    """SymbolIdError naming the first id of an integer array or tensor (…, T) outside 0..n_symbols−1 (word and
    position counted from 1; one word: position only)."""
    if ids.shape and 0 in ids.shape:
        return
    if int(ids.min()) >= 0 and int(ids.max()) < n_symbols:
        return
    arr = np.asarray(_numpy(ids)).reshape(-1, ids.shape[-1] if ids.ndim else 1)
    b, t = (int(v) for v in np.argwhere((arr < 0) | (arr >= n_symbols))[0])
    where = f"position {t + 1}" if ids.ndim < 2 else f"word {b + 1}, position {t + 1}"
    raise SymbolIdError(
        f"symbol id {int(arr[b, t])} is out of range (ids are 0..{n_symbols - 1}; names are given as strings): "
        f"{where}"
    )


def _names_to_ids(items: list, symbols: Sequence[str]) -> np.ndarray:
    """Ids of a word of symbol names (str), refusing a mixture with ids and any other type."""
    index = {s: i for i, s in enumerate(symbols)}
    is_name = [isinstance(s, str) for s in items]
    for s, name in zip(items, is_name):
        if not name and not (isinstance(s, (int, np.integer)) and not isinstance(s, bool)):
            raise SymbolIdError(f"a word's symbols are names (str) or ids (int), got {type(s).__name__} {s!r}")
    if not all(is_name):
        raise SymbolIdError("a word mixes symbol names (str) and symbol ids (int): use one or the other")
    try:
        return np.fromiter((index[s] for s in items), dtype=np.int64, count=len(items))
    except KeyError as exc:
        raise SymbolIdError(
            f"unknown symbol name {exc.args[0]!r} (the alphabet is {preview_names(symbols)}; ids 0..{len(symbols) - 1} "
            "are given as ints)"
        ) from None


def _as_array(x: Any, symbols: Sequence[str] | None) -> np.ndarray:
    """An array of ``x`` (integer ids unless the input is bad); symbol names become ids when the alphabet is known."""
    if isinstance(x, str):
        raise SymbolIdError(STRING_WORD)
    x = _numpy(x)
    if isinstance(x, np.ndarray):
        if x.dtype.kind in "US" and symbols is not None and x.ndim in (1, 2):
            ids = np.stack([_names_to_ids(list(r), symbols) for r in x.reshape(-1, x.shape[-1])])
            return ids.reshape(x.shape)
        return x
    if isinstance(x, (list, tuple)):
        batch = bool(x) and all(isinstance(r, (list, tuple, np.ndarray)) for r in x)
        rows = list(x) if batch else [x]
        if any(isinstance(s, (list, tuple, np.ndarray)) for r in rows for s in r):
            raise SymbolIdError(f"{_SHAPE}, got nested lists of more than two levels")
        if symbols is not None and any(isinstance(s, str) for r in rows for s in r):
            ids = [_names_to_ids(list(r), symbols) for r in rows]
            if len({len(r) for r in ids}) > 1:
                raise SymbolIdError(_SHAPE)
            return np.stack(ids) if batch else ids[0]
    try:
        return np.asarray(x)
    except ValueError:  # ragged nested lists
        raise SymbolIdError(_SHAPE) from None


def check_symbol_ids(
    symbol_ids: Any, n_symbols: int, lengths: Any = None, *, symbols: Sequence[str] | None = None
) -> SymbolIds:
    """Check and normalize a word (T,) or a batch (B, T) of words of one length: an integer array, a tensor, nested
    lists of ints, or — when the alphabet ``symbols`` is given — of symbol names (str), as ``Automaton.run`` reads
    them. ``lengths`` (B,), each 0..T, marks padding past each word (it may hold anything). An empty input is an
    empty batch. SymbolIdError names the first problem."""
    arr = _as_array(symbol_ids, symbols)
    if arr.size == 0:
        arr = arr.astype(np.int64)
    if arr.dtype == object or arr.ndim not in (1, 2):
        raise SymbolIdError(f"{_SHAPE}, got shape {list(arr.shape)}")
    if arr.dtype.kind not in "iu":
        raise SymbolIdError(f"symbol ids must be integers, got {arr.dtype} values")
    single = arr.ndim == 1
    ids = arr.astype(np.int64).reshape(1, -1) if single else arr.astype(np.int64)
    bsz, length = ids.shape
    lens = None
    if lengths is not None:
        la = np.asarray(_numpy(lengths)) if not isinstance(lengths, np.ndarray) else lengths
        if la.size == 0:
            la = la.astype(np.int64)
        la = la.reshape(-1) if la.ndim <= 1 else la
        if la.dtype.kind not in "iu" or la.shape != (bsz,):
            raise SymbolIdError(f"lengths must be {bsz} integers (one per word), got shape {list(la.shape)}")
        lens = la.astype(np.int64)
        if lens.size and (lens.min() < 0 or lens.max() > length):
            raise SymbolIdError(f"a length is outside 0..{length} (the words have {length} positions)")
    inside = ids if lens is None else np.where(np.arange(length)[None, :] < lens[:, None], ids, 0)
    check_id_range(inside if not single else inside[0], n_symbols)
    return SymbolIds(inside, lens, single)


__all__ = ["STRING_WORD", "SymbolIds", "check_id_range", "check_symbol_ids", "preview_names"]
