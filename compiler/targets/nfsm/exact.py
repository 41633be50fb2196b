"""The NFSM as a finite machine on configurations, in numpy: the exact interpreter of what a compiled or trained
NFSM computes, given its tables. Used by the compiler (exhaustive check, readout), by extraction
(realize/extract.py) and as the exact executor of compiled NFSMs (:meth:`NFSMMachine.from_program`).

A *configuration* is the tuple of attractor indices of every head of every layer (layers in order, heads in order).
Layer ℓ's table at step t is chosen by its *key*: the symbol x_t, followed (stacked layers, Prop. G.6) by the indices
of the heads of the layers above at step t−1 — the one-step causal shift of docs/theory.md. Key index (mixed radix,
symbol most significant): key = x·Π r_j + Σ c_j·Π_{i>j} r_i over the upper heads' dims r_j. ``bank[key, h]`` is
head h's table. A configuration's code is its mixed-radix number (first head most significant).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ....fsa.automaton import Automaton
from ....fsa.errors import ConstructionError, LimitExceededError
from ....fsa.inputs import check_symbol_ids
from ...keys import HIGH_FIRST, check_key_space, decode, encode, lookup_sorted
from ...wiring import layer_keys
from .program import NFSMProgram

#: Largest number of (configuration, state) pairs an exhaustive exploration visits.
MAX_PAIRS = 2_000_000


@dataclass
class LayerTables:
    """One NFSM layer as integer tables: ``bank`` (K, r, d_max), head h using ``bank[:, h, :heads[h]]``."""

    heads: list[int]
    upper: list[int]  #: global head indices (into the configuration) whose previous indices join the key
    bank: np.ndarray
    n_symbols: int


def check_radix_limit(radices: Sequence[int], what: str) -> None:
    """LimitExceededError past the int64 code space (compiler/keys.py ``check_key_space``)."""
    check_key_space(radices, what)


class NFSMMachine:
    """Layers of integer tables with the wiring above; ``initial`` is the start configuration."""

    def __init__(self, layers: list[LayerTables], initial: Sequence[int]) -> None:
        self.layers = layers
        self.dims = [d for layer in layers for d in layer.heads]
        offsets = np.cumsum([0] + [len(layer.heads) for layer in layers])
        self.head_slices = [slice(int(offsets[i]), int(offsets[i + 1])) for i in range(len(layers))]
        #: per layer: radices of its key digits (symbol, then the upper heads' dims)
        self.key_radices = [[layer.n_symbols] + [self.dims[g] for g in layer.upper] for layer in layers]
        for i, layer in enumerate(layers):
            if any(g >= self.head_slices[i].start for g in layer.upper):
                raise ConstructionError(f"layer {i} reads heads {layer.upper}: only heads of the layers above")
            if layer.bank.shape[0] != int(np.prod(self.key_radices[i], dtype=object)):
                raise ConstructionError(f"layer {i} has {layer.bank.shape[0]} tables for keys {self.key_radices[i]}")
        self.initial = np.asarray(initial, dtype=np.int64)
        self.readout: Readout | None = None  #: the stored readout of a compiled model (from_program)
        self.program: NFSMProgram | None = None  #: the compiled model's program (from_program)
        if len(self.initial) != len(self.dims):
            raise ConstructionError(f"start configuration has {len(self.initial)} indices for {len(self.dims)} heads")
        check_radix_limit(self.dims, "NFSM configurations")

    @classmethod
    def from_program(cls, program: NFSMProgram) -> NFSMMachine:
        """The machine of a compiled NFSM: its tables are the float64 argmax of the stored logits, its readout the
        stored one (``readout`` attribute)."""
        layers = [LayerTables(list(s.heads), list(s.upper), s.tables(), program.n_symbols) for s in program.layers]
        machine = cls(layers, program.initial_config)
        machine.readout = Readout(program.readout_codes.copy(), program.readout_states.copy(), list(program.dims))
        machine.program = program
        return machine

    @property
    def n_symbols(self) -> int:
        return self.layers[0].n_symbols

    def predict_states(self, symbol_ids: np.ndarray, lengths: np.ndarray | None = None) -> np.ndarray:
        """The readout's state after each symbol (a machine from :meth:`from_program`), answering the same inputs
        as the float executors (fsa/inputs.py); −1 past a length or for a configuration the readout lacks."""
        symbols = None if self.program is None else self.program.symbols
        x = check_symbol_ids(symbol_ids, self.n_symbols, lengths, symbols=symbols)
        return x.finish(self.readout(self.run(x.ids)))

    def keys(self, layer: int, configs: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Key of ``layer`` for symbols x after configurations ``configs`` (N, H) (the previous step's)."""
        upper = [configs[..., g] for g in self.layers[layer].upper]
        return layer_keys(np.asarray(x), upper, self.key_radices[layer], HIGH_FIRST)

    def step(self, configs: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Configurations after reading symbols x (N,) from configurations (N, H); all layers at once."""
        new = np.empty_like(configs)
        for i, lt in enumerate(self.layers):
            key = self.keys(i, configs, x)
            sl = self.head_slices[i]
            for h in range(len(lt.heads)):
                g = sl.start + h
                new[:, g] = lt.bank[key, h, configs[:, g]]
        return new

    def run(self, ids: np.ndarray) -> np.ndarray:
        """Configurations (B, T, H) after each symbol of words ids (B, T), from the start configuration."""
        ids = np.atleast_2d(np.asarray(ids, dtype=np.int64))
        bsz, length = ids.shape
        cur = np.broadcast_to(self.initial, (bsz, len(self.dims))).copy()
        out = np.empty((bsz, length, len(self.dims)), dtype=np.int64)
        for t in range(length):
            cur = self.step(cur, ids[:, t])
            out[:, t] = cur
        return out

    def code(self, configs: np.ndarray) -> np.ndarray:
        """The code of configurations (…, H) (high digit first)."""
        return encode(np.asarray(configs, dtype=np.int64), self.dims, HIGH_FIRST)

    def decode_code(self, codes: np.ndarray) -> np.ndarray:
        """The configurations (…, H) of codes: the inverse of :meth:`code`."""
        return decode(codes, self.dims, HIGH_FIRST)

    # ------------------------------------------------------------------ exploration
    def explore(
        self, automaton: Automaton, starts: Sequence[tuple[Sequence[int], int]], readout: Readout | None = None
    ) -> Exploration:
        """Breadth-first search of the (configuration, state) pairs reachable from ``starts`` under every symbol.

        With ``readout``, stops at the first pair whose readout differs from the state (a shortest failing word
        from that pair's start). Without it, collects the pairs (to build a readout) and reports a configuration
        reached with two different states (then no readout exists: the machine does not realize the automaton).
        """
        trans = np.asarray(automaton.transitions, dtype=np.int64)
        n = automaton.n_states
        check_radix_limit([*self.dims, n], "(configuration, state) pairs")
        cfg = np.array([s[0] for s in starts], dtype=np.int64).reshape(len(starts), len(self.dims))
        st = np.array([s[1] for s in starts], dtype=np.int64)
        codes = self.code(cfg) * n + st
        codes, first = np.unique(codes, return_index=True)
        cfg, st = cfg[first], st[first]
        parent: dict[int, tuple[int, int] | None] = dict.fromkeys(codes.tolist())  # a start pair: no parent
        frontier_cfg, frontier_st, frontier_code = cfg, st, codes
        while len(frontier_code):
            if readout is not None:
                bad = np.flatnonzero(readout(frontier_cfg) != frontier_st)
                if len(bad):
                    c = int(frontier_code[bad[0]])
                    return Exploration(parent, n, self, failing=c, word=_word(parent, c))
            nxt_cfg, nxt_st, nxt_code, par, sym = [], [], [], [], []
            for x in range(self.n_symbols):
                xs = np.full(len(frontier_code), x, dtype=np.int64)
                c2 = self.step(frontier_cfg, xs)
                s2 = trans[x, frontier_st]
                nxt_cfg.append(c2)
                nxt_st.append(s2)
                nxt_code.append(self.code(c2) * n + s2)
                par.append(frontier_code)
                sym.append(xs)
            all_code = np.concatenate(nxt_code)
            all_code, first = np.unique(all_code, return_index=True)
            fresh = np.fromiter((int(c) not in parent for c in all_code.tolist()), dtype=bool, count=len(all_code))
            all_code, first = all_code[fresh], first[fresh]
            par_all, sym_all = np.concatenate(par)[first], np.concatenate(sym)[first]
            parent.update(zip(all_code.tolist(), zip(par_all.tolist(), sym_all.tolist())))
            if len(parent) > MAX_PAIRS:
                raise LimitExceededError(
                    f"exploring the NFSM visits over {MAX_PAIRS} (configuration, state) pairs, over the limit"
                )
            frontier_cfg = np.concatenate(nxt_cfg)[first]
            frontier_st = np.concatenate(nxt_st)[first]
            frontier_code = all_code
        return Exploration(parent, n, self)


@dataclass
class Exploration:
    """Result of :meth:`NFSMMachine.explore`: visited pairs (code·n + state → (parent, symbol), None for a start)."""

    parent: dict[int, tuple[int, int] | None]
    n_states: int
    machine: NFSMMachine
    failing: int | None = None  #: code of the first pair found whose readout is wrong
    word: list[int] | None = None  #: the symbols leading to it from its start pair (a shortest such word)

    def pairs(self) -> tuple[np.ndarray, np.ndarray]:
        """(configuration codes, states) of every visited pair."""
        keys = np.fromiter(self.parent.keys(), dtype=np.int64, count=len(self.parent))
        return keys // self.n_states, keys % self.n_states

    def readout(self) -> Readout:
        """The readout configuration → state; ConstructionError when a configuration is reached with two states."""
        codes, states = self.pairs()
        order = np.argsort(codes, kind="stable")
        codes, states = codes[order], states[order]
        dup = np.flatnonzero(codes[1:] == codes[:-1])
        if len(dup):
            c = int(codes[dup[0]])
            cfg = self.machine.decode_code(np.array([c]))[0].tolist()
            raise ConstructionError(
                f"head indices {cfg} are reached with two automaton states ({int(states[dup[0]])} and "
                f"{int(states[dup[0] + 1])}): these heads do not determine the state"
            )
        return Readout(codes, states, list(self.machine.dims))


def _word(parent: dict[int, tuple[int, int] | None], code: int) -> list[int]:
    word = []
    while (link := parent[code]) is not None:
        code, x = link
        word.append(x)
    return word[::-1]


@dataclass
class Readout:
    """Sorted configuration codes and the automaton state of each; unknown configurations read as -1."""

    codes: np.ndarray
    states: np.ndarray
    dims: list[int]

    def __call__(self, configs: np.ndarray) -> np.ndarray:
        return self.lookup(encode(np.asarray(configs, dtype=np.int64), self.dims, HIGH_FIRST))

    def lookup(self, codes: np.ndarray) -> np.ndarray:
        idx = lookup_sorted(self.codes, codes)
        return np.where(idx >= 0, self.states[np.maximum(idx, 0)], -1) if len(self.codes) else idx
