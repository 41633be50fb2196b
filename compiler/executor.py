"""What every numpy executor shares: the program it runs, the symbol-id check, lengths, and the accepting readout.

A subclass implements ``_states(ids)``: the automaton state after each symbol of a checked batch (B, T) with
B, T ≥ 1, −1 where the model's state left its readout. :meth:`Executor.predict_states` and
:meth:`Executor.predict_accept` take a word (T,) or a batch (B, T) with optional ``lengths`` (B,), exactly as the
torch modules of fsa2rnn.nn do, and reject the same ids the same way (compiler/inputs.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fsa2rnn.compiler.inputs import check_symbol_ids
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.program import Program, program_of


def causal_shift(column: np.ndarray, start: int | np.ndarray) -> np.ndarray:
    """(B, T) values one step earlier: out[:, 0] = start, out[:, t] = column[:, t − 1] — how a cascade's lower layer
    sees the upper layers (docs/theory.md, "The timing of cascades")."""
    out = np.empty_like(column)
    out[:, 0] = start
    out[:, 1:] = column[:, :-1]
    return out


def accepted(states: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Whether each state is accepting, False for −1 (past a length, or outside the readout)."""
    return (states >= 0) & mask[np.maximum(states, 0)]


class Executor:
    """A compiled model run in numpy at float64: ``predict_states`` and ``predict_accept`` (module docstring)."""

    def __init__(self, model: CompiledModel, program: Program | None = None) -> None:
        self.compiled = model
        self.program = program_of(model) if program is None else program
        self.n_symbols = self.program.n_symbols

    def predict_states(self, symbol_ids: Any, lengths: Any = None) -> np.ndarray:
        """The automaton state after each symbol, int64 (B, T) ((T,) for one word); −1 past each word's length or
        where the model's state left its readout. SymbolIdError for ids that are not a batch of ids of the
        alphabet."""
        x = check_symbol_ids(symbol_ids, self.n_symbols, lengths)
        if x.ids.size == 0:
            return x.finish(np.full(x.ids.shape, -1, dtype=np.int64))
        return x.finish(self._states(x.ids))

    def predict_accept(self, symbol_ids: Any, lengths: Any = None) -> np.ndarray:
        """Whether each prefix is accepted, bool (B, T) (False past a word's length); UnknownStateError when the
        model's automaton has no accepting set."""
        mask = self.program.accepting_mask()
        return accepted(self.predict_states(symbol_ids, lengths), mask)

    def _states(self, ids: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


__all__ = ["Executor", "accepted", "causal_shift"]
