"""The Automaton core: a semiautomaton (Q, Σ, δ) with an optional initial state and accepting set.

States and symbols have names; internally they are indices 0..n-1 and 0..|Σ|-1 in spec order. δ is stored as an
integer array ``transitions`` of shape (|Σ|, n): ``transitions[x, q]`` is δ_x(q). A word w = x1…xk acts as
δ_w = δ_xk ∘ … ∘ δ_x1 (docs/theory.md, "Conventions"). Automata are validated at construction and immutable afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from . import dfa_interop, dot, minimize, product, reachable, relabel
from .errors import (
    MissingTransitionError,
    SpecError,
    UnknownStateError,
    UnknownSymbolError,
)
from .indices import STATE_DTYPE
from .inputs import STRING_WORD, check_symbol_ids, preview_names
from .io import atomic_write_text, parse_json
from .reader import decode_utf8, read_bounded
from .spec_scan import check_spec_size, check_spec_text

SPEC_FORMAT = "fsa2rnn.automaton/1"
_SPEC_KEYS = {"format", "states", "symbols", "transitions", "initial", "accepting", "name"}

#: Largest JSON spec file read (parsing costs several times the text in memory).
MAX_SPEC_FILE_BYTES = 256 << 20


def _declared_count(value: Any) -> int | None:
    """How many names a spec's "states"/"symbols" value declares (None when the value is malformed)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    return len(value) if isinstance(value, (list, tuple)) else None


def _names(value: Any, key: str) -> tuple[str, ...]:
    if isinstance(value, bool) or not isinstance(value, (int, list, tuple)):
        raise SpecError(f"spec key {key!r} must be a list of names or a positive integer, got {value!r}")
    if isinstance(value, int):
        if value <= 0:
            raise SpecError(f"spec key {key!r} must be positive, got {value}")
        return tuple(str(i) for i in range(value))
    if all(type(v) is str for v in value):
        names = list(value)
    else:
        names = []
        for v in value:
            if isinstance(v, bool) or not isinstance(v, (str, int)):
                raise SpecError(f"spec key {key!r}: name {v!r} is not a string")
            names.append(str(v))
    if not names:
        raise SpecError(
            f"spec key {key!r} is empty" + (": the alphabet needs at least one symbol" if key == "symbols" else "")
        )
    if key == "symbols" and "" in names:
        raise SpecError("spec key 'symbols': a symbol name must not be empty")
    if len(set(names)) < len(names):
        seen: set[str] = set()
        for nm in names:
            if nm in seen:
                raise SpecError(f"spec key {key!r}: duplicate name {nm!r}")
            seen.add(nm)
    return tuple(names)


class Automaton:
    """A finite semiautomaton with optional initial state and accepting set.

    Build with :meth:`from_spec`, :meth:`from_transformations`, :meth:`load`, or the constructor::

        Automaton(transitions, states=None, symbols=None, initial=None, accepting=None, name=None)

    ``transitions`` is an integer array of shape (|Σ|, n). ``states``/``symbols`` default to "0", "1", ….
    ``initial`` and ``accepting`` take state indices or names.
    """

    __slots__ = (
        "_transitions",
        "_states",
        "_symbols",
        "_initial",
        "_accepting",
        "_name",
        "_action",
        "_factors",
        "__dict__",
    )

    def __init__(
        self,
        transitions: Any,
        states: Sequence[str] | int | None = None,
        symbols: Sequence[str] | None = None,
        initial: int | str | None = None,
        accepting: Iterable[int | str] | None = None,
        name: str | None = None,
        action: Any = None,
        factors: Sequence[Automaton] | None = None,
    ) -> None:
        try:
            table = np.array(transitions, dtype=STATE_DTYPE, copy=True)
        except (TypeError, ValueError, OverflowError) as exc:
            raise SpecError(f"transitions must be an integer table of shape (symbols, states): {exc}") from None
        if table.ndim != 2 or table.shape[0] == 0:
            raise SpecError(
                f"transitions must have shape (symbols, states) with at least one symbol, got {table.shape}"
            )
        k, n = table.shape
        if n == 0:
            raise SpecError("an automaton needs at least one state")
        if isinstance(states, int) and not isinstance(states, bool) and states != n:  # before naming them all
            raise SpecError(f"transitions have {n} columns but there are {states} states")
        self._states = _names(n if states is None else states, "states")
        self._symbols = _names(k if symbols is None else list(symbols), "symbols")
        if len(self._states) != n:
            raise SpecError(f"transitions have {n} columns but there are {len(self._states)} states")
        if len(self._symbols) != k:
            raise SpecError(f"transitions have {k} rows but there are {len(self._symbols)} symbols")
        bad = np.argwhere((table < 0) | (table >= n))
        if len(bad):
            x, q = bad[0]
            raise SpecError(
                f"transitions[{self._symbols[x]!r}][{q}] = {table[x, q]} is out of range (states are 0..{n - 1})"
            )
        table.setflags(write=False)
        self._transitions = table
        self._initial = None if initial is None else self.state_index(initial)
        acc = np.zeros(n, dtype=bool)
        if accepting is not None:
            for a in accepting:
                acc[self.state_index(a)] = True
        acc.setflags(write=False)
        self._accepting = acc if accepting is not None else None
        self._name = name
        self._action = None if action is None else _check_action(action, k)
        self._factors = None if factors is None else tuple(factors)

    # ------------------------------------------------------------------ basic properties
    @property
    def transitions(self) -> np.ndarray:
        """δ as a read-only (|Σ|, n) integer array: ``transitions[x, q] = δ_x(q)``."""
        return self._transitions

    @property
    def states(self) -> tuple[str, ...]:
        return self._states

    @property
    def symbols(self) -> tuple[str, ...]:
        return self._symbols

    @property
    def n_states(self) -> int:
        return self._transitions.shape[1]

    @property
    def n_symbols(self) -> int:
        return self._transitions.shape[0]

    @property
    def initial(self) -> int | None:
        """Index of the initial state, or None for a pure semiautomaton."""
        return self._initial

    @property
    def accepting(self) -> np.ndarray | None:
        """Boolean mask of accepting states (read-only), or None when no accepting set was given."""
        return self._accepting

    @property
    def accepting_states(self) -> tuple[int, ...]:
        return () if self._accepting is None else tuple(int(i) for i in np.flatnonzero(self._accepting))

    @property
    def name(self) -> str | None:
        return self._name

    @property
    def action(self) -> np.ndarray | None:
        """A known faithful permutation action of the transition group, or None.

        Shape (|Σ|, d): row x is the permutation of {0..d-1} that symbol x induces. Builtin group word problems
        carry their natural action (S5 on 5 points, M11 on 11); compilers use it instead of searching for one.
        Not part of the JSON spec (it is lost on a JSON round trip).
        """
        return self._action

    @property
    def factors(self) -> tuple[Automaton, ...] | None:
        """The factors when this automaton was built as a direct product (state i = mixed-radix tuple), else None."""
        return self._factors

    def __repr__(self) -> str:
        nm = f" {self._name!r}" if self._name else ""
        return f"<Automaton{nm}: {self.n_states} states, {self.n_symbols} symbols>"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Automaton):
            return NotImplemented
        return (
            self._states == other._states
            and self._symbols == other._symbols
            and np.array_equal(self._transitions, other._transitions)
            and self._initial == other._initial
            and self.accepting_states == other.accepting_states
            and (self._accepting is None) == (other._accepting is None)
        )

    def __hash__(self) -> int:
        return hash((self._states, self._symbols, self._transitions.tobytes(), self._initial))

    # ------------------------------------------------------------------ names <-> indices
    @cached_property
    def _state_ids(self) -> dict[str, int]:
        return {s: i for i, s in enumerate(self._states)}

    @cached_property
    def _symbol_ids(self) -> dict[str, int]:
        return {s: i for i, s in enumerate(self._symbols)}

    def state_index(self, state: int | str) -> int:
        """Index of a state given by name (or by an index, checked)."""
        if isinstance(state, (int, np.integer)) and not isinstance(state, bool):
            if 0 <= int(state) < self.n_states:
                return int(state)
            raise UnknownStateError(f"state index {state} is out of range (0..{self.n_states - 1})")
        try:
            return self._state_ids[str(state)]
        except KeyError:
            raise UnknownStateError(f"unknown state {state!r}") from None

    def symbol_index(self, symbol: int | str) -> int:
        """Index of a symbol given by name."""
        try:
            return self._symbol_ids[str(symbol)]
        except KeyError:
            alphabet = preview_names(self._symbols)
            raise UnknownSymbolError(f"unknown symbol {symbol!r} (the alphabet is {alphabet})") from None

    def encode(self, word: Iterable[str]) -> np.ndarray:
        """Symbol names → an integer array of symbol ids (UnknownSymbolError names the first bad symbol)."""
        ids = self._symbol_ids
        try:
            return np.fromiter((ids[str(s)] for s in word), dtype=STATE_DTYPE)
        except KeyError as exc:
            raise UnknownSymbolError(
                f"unknown symbol {exc.args[0]!r} (the alphabet is {preview_names(self._symbols)})"
            ) from None

    def decode_states(self, ids: Iterable[int]) -> list[str]:
        names = self._states
        return [names[int(i)] for i in ids]

    # ------------------------------------------------------------------ running words
    def _start(self, start: int | str | None) -> int:
        if start is not None:
            return self.state_index(start)
        if self._initial is None:
            raise UnknownStateError("the automaton has no initial state: pass start=")
        return self._initial

    def delta(self, symbol: int | str) -> np.ndarray:
        """The transformation δ_x of a symbol (an image array)."""
        x = symbol if isinstance(symbol, (int, np.integer)) else self.symbol_index(symbol)
        return self._transitions[int(x)]

    def run(self, word: Any, start: int | str | None = None) -> np.ndarray:
        """States after each symbol of a word (or of a batch of words).

        ``word`` is a sequence of symbol names (str) or of symbol ids (int), a 1-D integer array of symbol ids, or a
        2-D integer array (B, T) of symbol ids (a batch, vectorized over B). ``start`` is a state index or name, or
        an int array of shape (B,) for a batch; default: the initial state. Returns int arrays of shape (T,) or (B, T).
        """
        ids = self._as_ids(word)
        if ids.ndim == 1:
            q = self._start(start)
            out = np.empty(ids.shape[0], dtype=STATE_DTYPE)
            table = self._transitions
            for t, x in enumerate(ids.tolist()):
                q = table[x, q]
                out[t] = q
            return out
        if ids.ndim != 2:
            raise SpecError(f"a batch of words must be a 2-D array (B, T), got shape {ids.shape}")
        b, length = ids.shape
        if start is None or isinstance(start, (int, str, np.integer)):
            q = np.full(b, self._start(start), dtype=STATE_DTYPE)
        else:
            q = np.asarray(start, dtype=STATE_DTYPE).copy()
        out = np.empty((b, length), dtype=STATE_DTYPE)
        table = self._transitions
        for t in range(length):
            q = table[ids[:, t], q]
            out[:, t] = q
        return out

    def final_state(self, word: Any, start: int | str | None = None) -> int:
        """The state δ_w(start) after reading the whole word (start itself for the empty word)."""
        ids = self._as_ids(word)
        q = self._start(start)
        table = self._transitions
        for x in ids.tolist():
            q = table[x, q]
        return int(q)

    def accepts(self, word: Any) -> bool:
        """Whether the word leads from the initial state into the accepting set."""
        if self._accepting is None:
            raise UnknownStateError("the automaton has no accepting set")
        return bool(self._accepting[self.final_state(word)])

    def _as_ids(self, word: Any) -> np.ndarray:
        """Symbol ids of a word (T,) or a batch (B, T): ids or names, checked by fsa/inputs.py's one check."""
        if isinstance(word, str):
            raise SpecError(STRING_WORD)
        x = check_symbol_ids(word, self.n_symbols, symbols=self._symbols)
        return x.ids[0] if x.single else x.ids

    # ------------------------------------------------------------------ specs and files
    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> Automaton:
        """Build from the JSON spec of docs/architecture.md ("fsa2rnn.automaton/1"), validating every key."""
        if not isinstance(spec, Mapping):
            raise SpecError(f"a spec must be a JSON object, got {type(spec).__name__}")
        unknown = sorted(set(spec) - _SPEC_KEYS)
        if unknown:
            raise SpecError(f"unknown spec key {unknown[0]!r} (allowed: {', '.join(sorted(_SPEC_KEYS))})")
        fmt = spec.get("format", SPEC_FORMAT)
        if fmt != SPEC_FORMAT:
            raise SpecError(f"spec key 'format' must be {SPEC_FORMAT!r}, got {fmt!r}")
        for key in ("states", "symbols", "transitions"):
            if key not in spec:
                raise SpecError(f"spec is missing the key {key!r}")
        n_declared, k_declared = _declared_count(spec["states"]), _declared_count(spec["symbols"])
        if n_declared is not None and k_declared is not None:
            check_spec_size(n_declared, k_declared)
        states = _names(spec["states"], "states")
        symbols = _names(spec["symbols"], "symbols")
        trans = spec["transitions"]
        if not isinstance(trans, Mapping):
            raise SpecError("spec key 'transitions' must be an object mapping each symbol to a list of state indices")
        for x in trans:
            if x not in symbols:
                raise UnknownSymbolError(f"spec key 'transitions' names unknown symbol {x!r}")
        n = len(states)
        rows = []
        for x in symbols:
            if x not in trans:
                raise MissingTransitionError(f"spec key 'transitions' has no entry for symbol {x!r}")
            row = trans[x]
            if not isinstance(row, list):
                raise SpecError(f"transitions[{x!r}] must be a list of {n} state indices, got {row!r}")
            if len(row) != n:
                raise MissingTransitionError(f"transitions[{x!r}] has {len(row)} entries but there are {n} states")
            fast = None
            if all(type(v) is int for v in row):  # bools are ints to numpy, not state indices
                try:
                    fast = np.array(row, dtype=STATE_DTYPE)
                except OverflowError:
                    fast = None
            if fast is None or fast.min() < 0 or fast.max() >= n:
                for q, v in enumerate(row):  # find and name the first bad entry
                    if isinstance(v, bool) or not isinstance(v, int):
                        raise SpecError(f"transitions[{x!r}][{q}] = {v!r} is not a state index")
                    if not 0 <= v < n:
                        raise SpecError(f"transitions[{x!r}][{q}] = {v} is out of range (states are 0..{n - 1})")
            rows.append(fast)
        initial = spec.get("initial")
        if initial is not None and not isinstance(initial, (str, int)):
            raise SpecError(f"spec key 'initial' must be a state name, got {initial!r}")
        accepting = spec.get("accepting")
        if accepting is not None and not isinstance(accepting, list):
            raise SpecError(f"spec key 'accepting' must be a list of state names, got {accepting!r}")
        name = spec.get("name")
        if name is not None and not isinstance(name, str):
            raise SpecError(f"spec key 'name' must be a string, got {type(name).__name__}")
        try:
            return cls(
                np.array(rows, dtype=STATE_DTYPE).reshape(len(symbols), n),
                states=states,
                symbols=symbols,
                initial=None if initial is None else str(initial),
                accepting=None if accepting is None else [str(a) for a in accepting],
                name=name,
            )
        except UnknownStateError as exc:
            key = "initial" if initial is not None and str(initial) not in states else "accepting"
            raise UnknownStateError(f"spec key {key!r}: {exc}") from None

    def to_spec(self) -> dict[str, Any]:
        """The JSON spec (a dict) of this automaton; ``from_spec(a.to_spec()) == a``."""
        spec: dict[str, Any] = {
            "format": SPEC_FORMAT,
            "states": list(self._states),
            "symbols": list(self._symbols),
            "transitions": {x: self._transitions[i].tolist() for i, x in enumerate(self._symbols)},
        }
        if self._initial is not None:
            spec["initial"] = self._states[self._initial]
        if self._accepting is not None:
            spec["accepting"] = [self._states[i] for i in self.accepting_states]
        if self._name:
            spec["name"] = self._name
        return spec

    @classmethod
    def from_json(cls, text: str) -> Automaton:
        """Build from a JSON spec text; its counts are checked against the limits before it is parsed
        (fsa/spec_scan.py)."""
        check_spec_text(text.encode() if isinstance(text, str) else text, _SPEC_KEYS)
        return cls.from_spec(parse_json(text))

    def to_json(self, indent: int | None = None) -> str:
        return json.dumps(self.to_spec(), indent=indent)

    @classmethod
    def load(cls, path: str | Path) -> Automaton:
        """Load a JSON spec file — a regular file, a device or a pipe, read within MAX_SPEC_FILE_BYTES and without
        waiting forever (fsa/reader.py)."""

        data = read_bounded(path, MAX_SPEC_FILE_BYTES, what="spec file", first=b"{")
        check_spec_text(data, _SPEC_KEYS)  # the counts, from the bytes as read: a refusal costs the file once
        text = decode_utf8(data, f"spec file {str(path)!r}")
        del data
        return cls.from_spec(parse_json(text))

    def save(self, path: str | Path) -> None:
        """Write the JSON spec (atomically: no partial file on failure)."""
        atomic_write_text(path, self.to_json(indent=1) + "\n")

    @classmethod
    def from_transformations(
        cls,
        transformations: Mapping[str, Sequence[int]] | Sequence[Sequence[int]],
        states: Sequence[str] | int | None = None,
        **kwargs: Any,
    ) -> Automaton:
        """Build from transformations (image arrays), given as a list or as a dict symbol name → images."""
        if isinstance(transformations, Mapping):
            symbols = [str(s) for s in transformations]
            rows = [list(v) for v in transformations.values()]
            return cls(rows, states=states, symbols=symbols, **kwargs)
        return cls([list(t) for t in transformations], states=states, **kwargs)

    def replace(self, **changes: Any) -> Automaton:
        """A copy with some of transitions/states/symbols/initial/accepting/name replaced."""
        args: dict[str, Any] = {
            "transitions": self._transitions,
            "states": self._states,
            "symbols": self._symbols,
            "initial": self._initial,
            "accepting": None if self._accepting is None else self.accepting_states,
            "name": self._name,
            "action": self._action,
            "factors": self._factors,
        }
        args.update(changes)
        return Automaton(**args)

    # ------------------------------------------------------------------ operations (each lives in its own module)
    def reachable(self) -> Automaton:
        """The part reachable from the initial state (fsa/reachable.py)."""
        return reachable.reachable(self)

    def minimize(self) -> Automaton:
        """The minimal DFA of the language; for a semiautomaton, the reachable part (fsa/minimize.py)."""
        return minimize.minimize(self)

    def product(self, *others: Automaton, accept: str = "all") -> Automaton:
        """The direct product with other automata over the same symbols, keeping ``factors`` (fsa/product.py)."""
        return product.product(self, *others, accept=accept)

    def relabel(self, states: Any = None, symbols: Any = None) -> Automaton:
        """Rename states and/or symbols: a list, a mapping old → new, or a function (fsa/relabel.py)."""
        return relabel.relabel(self, states=states, symbols=symbols)

    def is_isomorphic(self, other: Automaton) -> bool:
        """Whether a state bijection maps this automaton onto ``other`` (symbols matched by name)."""
        return relabel.is_isomorphic(self, other)

    def to_dfa(self, partial: bool = False) -> Any:
        """An automata-lib DFA with the same names; ``partial=True`` leaves out sink states (fsa/dfa_interop.py)."""
        return dfa_interop.to_dfa(self, partial=partial)

    @classmethod
    def from_dfa(cls, dfa: Any, name: str | None = None) -> Automaton:
        """From an automata-lib DFA; a partial DFA gains a sink state (fsa/dfa_interop.py)."""
        return cls(**dfa_interop.dfa_arguments(dfa, name=name))

    def to_dot(self) -> str:
        """Graphviz DOT source (fsa/dot.py)."""
        return dot.to_dot(self)

    # ------------------------------------------------------------------ predicates
    @cached_property
    def is_group_automaton(self) -> bool:
        """Whether every δ_x is a permutation of Q (then the transition monoid is a group)."""
        return rows_are_permutations(self._transitions)


def rows_are_permutations(table: np.ndarray) -> bool:
    """Whether every row of a (k, n) array with entries in 0..n-1 is a permutation (O(k·n), no sorting)."""
    k, n = table.shape
    hit = np.zeros((k, n), dtype=bool)
    hit[np.arange(k)[:, None], table] = True
    return bool(hit.all())


def _check_action(action: Any, n_symbols: int) -> np.ndarray:
    arr = np.array(action, dtype=STATE_DTYPE, copy=True)
    if arr.ndim != 2 or arr.shape[0] != n_symbols:
        raise SpecError(f"action must have shape ({n_symbols}, d), got {arr.shape}")
    if arr.size == 0 or arr.min() < 0 or arr.max() >= arr.shape[1] or not rows_are_permutations(arr):
        raise SpecError("every row of an action must be a permutation of 0..d-1")
    arr.setflags(write=False)
    return arr
