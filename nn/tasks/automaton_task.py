"""Every automaton is a task: its word problem (predict the state after each symbol), vectorized over the batch.

Symbol distributions (all drawn from the caller's ``torch.Generator``):

- uniform over the alphabet, or weighted by ``probs`` (``eval_probs`` may differ: the flip-flop task reads 90 %
  ``read`` in training and 1 % in evaluation);
- ``max_identity_run=k``: never more than k identity symbols (symbols whose δ_x is the identity) in a row — the
  word is drawn as before and any identity that would make a run of k + 1 is replaced by a uniformly drawn
  non-identity symbol (Brandoit et al.'s DFF5 uses k = 4, so the state depends on the last 5 symbols; their
  rule: inside a run of drawn identities the forced symbols fall at every 5th position);
- ``tokens_per_step=k``: one symbol every k tokens, a blank token (acting as the identity) between them, and the
  target lagged by k − 1 tokens (the negative-eigenvalues paper's "S5, 4 tokens per transition", App. E.2.1): the
  target at token t is the state after the symbols among tokens 0..t−k+1, the initial state before that.

Supervision: ``"dense"`` (the default: every position judged, the word problem) or ``"answer"`` (only each word's
last position: the class of the state the whole word reaches, as the negative-eigenvalues paper trains parity).

Readouts: ``"state"`` (the state itself), ``"accept"`` (accepting or not), or a class per state (``classes`` and
``state_class``, e.g. the value of a modular-arithmetic state).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ...fsa.automaton import Automaton
from ...fsa.errors import SpecError
from ..ops.table_scan import keyed_table_scan
from .base import SUPERVISIONS, Batch, LengthSpec, Task, answer_mask, draw_lengths, length_mask

PAD = "[PAD]"
BLANK = "[BLANK]"


@dataclass
class _Carry:
    """Where each of B words stands, so that a word can be continued chunk by chunk (long evaluations)."""

    state: torch.Tensor  # (B,) automaton state after the last symbol
    run: torch.Tensor  # (B,) identity symbols in a row at the end
    offset: int  # tokens already emitted (for tokens_per_step)
    lagged: torch.Tensor  # (B, k − 1) the states of the last k − 1 tokens, oldest first


class AutomatonTask(Task):
    """The word problem of an automaton (see the module docstring for the distributions and readouts)."""

    def __init__(
        self,
        automaton: Automaton,
        *,
        name: str | None = None,
        source: str = "fsa2rnn: the word problem of the spec",
        description: str | None = None,
        readout: str = "state",
        classes: list[str] | None = None,
        state_class: np.ndarray | None = None,
        probs: np.ndarray | None = None,
        eval_probs: np.ndarray | None = None,
        max_identity_run: int | None = None,
        tokens_per_step: int = 1,
        default_train_length: tuple[int, int] = (3, 40),
        supervision: str = "dense",
    ) -> None:
        if automaton.initial is None:
            raise SpecError(f"task {name or automaton.name!r}: the automaton needs an initial state")
        n, k = automaton.n_states, automaton.n_symbols
        if readout == "state":
            classes, state_class = list(automaton.states), np.arange(n)
        elif readout == "accept":
            if automaton.accepting is None:
                raise SpecError(f"task {name!r}: ':accept' needs an automaton with accepting states")
            classes = ["reject", "accept"]
            state_class = np.zeros(n, dtype=np.int64)
            state_class[list(automaton.accepting)] = 1
        elif readout != "classes" or classes is None or state_class is None:
            raise ValueError(f"unknown readout {readout!r}")
        if tokens_per_step < 1:
            raise SpecError(f"tokens_per_step must be ≥ 1, got {tokens_per_step}")
        vocab = list(automaton.symbols) + ([BLANK] if tokens_per_step > 1 else []) + [PAD]
        super().__init__(
            name=name or automaton.name or "automaton",
            vocab=vocab,
            classes=list(classes),
            chance=1.0 / len(classes),
            source=source,
            description=description or f"word problem: {n} states, {k} symbols",
            automaton=automaton,
            pad_id=len(vocab) - 1,
            default_train_length=default_train_length,
            supervisions=SUPERVISIONS,
        )
        self.with_labels(supervision)
        self.readout = readout
        self.state_class = torch.as_tensor(np.asarray(state_class), dtype=torch.long)
        self.table = torch.tensor(np.array(automaton.transitions), dtype=torch.long)  # (k, n)
        identity = np.all(automaton.transitions == np.arange(n)[None, :], axis=1)
        self.identity_symbols = torch.as_tensor(np.flatnonzero(identity), dtype=torch.long)
        self.other_symbols = torch.as_tensor(np.flatnonzero(~identity), dtype=torch.long)
        if max_identity_run is not None and (max_identity_run < 0 or len(self.other_symbols) == 0):
            raise SpecError(f"task {self.name!r}: max_identity_run needs k ≥ 0 and a non-identity symbol")
        self.max_identity_run = max_identity_run
        self.tokens_per_step = tokens_per_step
        self.probs = _check_probs(probs, k)
        self.eval_probs = _check_probs(eval_probs, k) if eval_probs is not None else self.probs
        self.info = {
            "readout": readout,
            "max_identity_run": max_identity_run,
            "tokens_per_step": tokens_per_step,
            "probs": None if probs is None else [float(p) for p in self.probs],
            "eval_probs": None if eval_probs is None else [float(p) for p in self.eval_probs],
        }

    # --- symbols --------------------------------------------------------------------------------------------------
    def _symbols(self, batch: int, length: int, gen: torch.Generator, train: bool, carry: _Carry) -> torch.Tensor:
        k = self.automaton.n_symbols
        probs = self.probs if train else self.eval_probs
        if probs is None:
            ids = torch.randint(0, k, (batch, length), generator=gen)
        else:
            p = torch.as_tensor(probs, dtype=torch.float64)
            ids = torch.multinomial(p.expand(batch, k), length, replacement=True, generator=gen)
        if self.max_identity_run is not None and len(self.identity_symbols):
            ids = self._break_identity_runs(ids, gen, carry)
        return ids

    def _break_identity_runs(self, ids: torch.Tensor, gen: torch.Generator, carry: _Carry) -> torch.Tensor:
        """Force a uniformly drawn non-identity symbol at every (k + 1)-th identity of a run of drawn identities.

        Closed form, no scan: inside a run, a forced symbol restarts the count, so the forced positions are those
        whose number of identities before them in the run (the carried run included) is k modulo k + 1."""
        k_max = self.max_identity_run
        batch, length = ids.shape
        if not length:
            return ids
        pos = torch.arange(length)
        is_id = torch.isin(ids, self.identity_symbols)
        last = torch.cummax(torch.where(is_id, torch.full_like(ids, -1), pos[None, :]), dim=1).values
        before = pos[None, :] - last - 1  # identities before t in its run, within this chunk
        before = torch.where(last < 0, before + carry.run[:, None], before)
        forced = is_id & (before % (k_max + 1) == k_max)
        pick = torch.randint(0, len(self.other_symbols), (batch, length), generator=gen)
        ids = torch.where(forced, self.other_symbols[pick], ids)
        end = before[:, -1] % (k_max + 1) + 1  # identities in a row at the end, after forcing
        carry.run = torch.where(is_id[:, -1] & ~forced[:, -1], end, torch.zeros_like(carry.run))
        return ids

    # --- words ----------------------------------------------------------------------------------------------------
    def _start(self, batch: int) -> _Carry:
        q0 = torch.full((batch,), int(self.automaton.initial), dtype=torch.long)
        k = self.tokens_per_step
        return _Carry(q0, torch.zeros(batch, dtype=torch.long), 0, q0[:, None].repeat(1, k - 1))

    def continue_words(
        self, batch: int, length: int, gen: torch.Generator, carry: _Carry | None, *, train: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor, _Carry]:
        """The next ``length`` tokens of ``batch`` words and their target classes; the carry continues them."""
        carry = self._start(batch) if carry is None else carry
        tokens = self._tokens(batch, length, gen, train, carry)
        return tokens, self._targets(tokens, carry), carry

    def _tokens(self, batch: int, length: int, gen: torch.Generator, train: bool, carry: _Carry) -> torch.Tensor:
        k = self.tokens_per_step
        if k == 1:
            return self._symbols(batch, length, gen, train, carry)
        slots = (torch.arange(length) + carry.offset) % k == 0
        tokens = torch.full((batch, length), self.automaton.n_symbols, dtype=torch.long)  # the blank
        n_sym = int(slots.sum())
        if n_sym:
            tokens[:, slots] = self._symbols(batch, n_sym, gen, train, carry)
        return tokens

    def _targets(self, tokens: torch.Tensor, carry: _Carry) -> torch.Tensor:
        """Run the automaton over the tokens from the carried states (advancing the carry); the target classes."""
        batch, length = tokens.shape
        k = self.tokens_per_step
        table = self.table
        if k > 1:
            table = torch.cat([table, torch.arange(table.shape[1])[None, :]], dim=0)  # the blank: identity
        if length:  # the exact table scan: states[:, t] = table[tokens[:, t], states[:, t − 1]]
            states = keyed_table_scan(table, tokens, carry.state, impl="chunked")
            carry.state = states[:, -1].clone()
        else:
            states = torch.empty((batch, 0), dtype=torch.long)
        if k > 1:
            seq = torch.cat([carry.lagged, states], dim=1)  # states of tokens offset−k+1 .. offset+length−1
            states, carry.lagged = seq[:, :length], seq[:, length:]
        carry.offset += length
        return self.state_class[states]

    def sample(self, batch: int, length: LengthSpec, generator: torch.Generator, *, train: bool = True) -> Batch:
        lengths = draw_lengths(batch, length, generator)
        t = int(lengths.max())
        tokens, targets, _ = self.continue_words(batch, t, generator, None, train=train)
        mask = length_mask(lengths, t)
        tokens = torch.where(mask, tokens, torch.full_like(tokens, self.pad_id))
        judged = answer_mask(lengths, t) if self.supervision == "answer" else mask
        return Batch(tokens, targets, judged, lengths)

    def word_source(self) -> Any:
        """The evaluation words as a source for ``fsa2rnn.nn.lmax.failing_length`` (evaluation distribution).

        The torch Generator is seeded from the numpy Generator that failing_length passes, so L_max is
        deterministic under its seed.
        """

        def sample(rng: np.random.Generator, n_words: int, length: int, carry: Any):
            if carry is None:
                gen = torch.Generator().manual_seed(int(rng.integers(2**62)))
                carry = (gen, None)
            gen, words = carry
            tokens, targets, words = self.continue_words(n_words, length, gen, words, train=False)
            return tokens.numpy(), targets.numpy(), (gen, words)

        return sample


def _check_probs(probs: Any, k: int) -> np.ndarray | None:
    if probs is None:
        return None
    p = np.asarray(probs, dtype=np.float64)
    if p.shape != (k,) or np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise SpecError(f"symbol probabilities must be {k} non-negative numbers summing to 1, got {list(p)}")
    return p / p.sum()
