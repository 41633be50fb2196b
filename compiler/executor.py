"""What every numpy executor shares: the program it runs, the symbol-id check, lengths, and the accepting readout.

A subclass implements ``_states(ids)``: the automaton state after each symbol of a checked batch (B, T) with
B, T ≥ 1, −1 where the model's state left its readout. :meth:`Executor.predict_states` and
:meth:`Executor.predict_accept` take a word (T,) or a batch (B, T) with optional ``lengths`` (B,), exactly as the
torch modules of fsa2rnn.nn do, and reject the same ids the same way (fsa/inputs.py); they also take symbol
names, as ``Automaton.run`` does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fsa.inputs import check_symbol_ids
from .model import CompiledModel
from .program import Program, accepted
from .registry import program_of


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
        x = check_symbol_ids(symbol_ids, self.n_symbols, lengths, symbols=self.program.symbols)
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


__all__ = ["Executor"]
