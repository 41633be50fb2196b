"""Cascade products of semiautomata and their simulation (docs/holonomy.md, "The cascade").

A cascade has levels 0..L-1, the top first. Level i is a semiautomaton on ``levels[i].n_points`` points whose input at
a step is the symbol x_t together with the coordinates c_0..c_{i-1} of the levels above *before* that step — the
cascade product of Definition 1 of the negative-eigenvalues paper, δ''((q, q'), x) = (δ(q, x), δ'(q', (q, x))),
iterated (docs/theory.md, "The timing of cascades").

A cascade is stored as tables: for each level i, the *dependency* rows ``keys`` (x, c_0, …, c_{i-1}) and ``images``
(the transformation that input applies to the level's points), covering every symbol with every upper prefix of a
reachable coordinate tuple. The reachable tuples are those reached from the *lifts* (``coordinates``) of the
emulated automaton's states, and each maps back to a state (``decode``): the emulation map.

Two constructors: :func:`fsa2rnn.fsa.holonomy.holonomy_decomposition` (Krohn–Rhodes, permutation-reset levels) and
:meth:`Cascade.product` (the cascade product of given automata, forward).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .automaton import STATE_DTYPE, Automaton
from .errors import LimitExceededError, SpecError
from .groups import describe_group
from .inputs import check_id_range

CASCADE_FORMAT = "fsa2rnn.cascade/1"

#: Most coordinate tuples a forward cascade product may have (its state set is the full product).
MAX_PRODUCT_TUPLES = 1_000_000
#: Most cells of the dense lookup tables used by step/decode/key_index (else binary search).
MAX_DENSE_CELLS = 20_000_000


@dataclass(frozen=True)
class Component:
    """A permutation-reset component of a level: ``points`` consecutive points starting at ``offset``.

    ``group`` (the names of docs/architecture.md, "Vocabulary"; ``order N`` beyond fsa.groups.MAX_NAMED_ORDER),
    ``group_order`` and ``composition_factors`` (``C<p>`` and non-abelian simple names, with multiplicity) describe
    the permutation group acting on the points (for a holonomy cascade, the holonomy group of the class; see
    fsa.groups.describe_group). ``representative`` and ``tiles`` (state indices) are set for holonomy components:
    point ``offset + j`` stands for tile ``tiles[j]`` of the representative set.
    """

    points: int
    group_order: int
    group: str
    offset: int
    representative: tuple[int, ...] | None = None
    tiles: tuple[tuple[int, ...], ...] | None = None
    composition_factors: tuple[str, ...] | None = None

    def to_json(self, state_names: Sequence[str] | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "points": self.points,
            "group_order": self.group_order,
            "group": self.group,
            "offset": self.offset,
        }
        if self.composition_factors is not None:
            out["composition_factors"] = list(self.composition_factors)
        if self.representative is not None:
            name = (lambda q: state_names[q]) if state_names is not None else (lambda q: q)
            out["representative"] = [name(q) for q in self.representative]
            out["tiles"] = [[name(q) for q in t] for t in self.tiles or ()]
        return out

    def label(self) -> str:
        return f"({self.points},{self.group})"


@dataclass(frozen=True)
class CascadeLevel:
    """One level: the disjoint union of its components, one permutation-reset semiautomaton on ``n_points``."""

    components: tuple[Component, ...]
    n_points: int = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "n_points", sum(c.points for c in self.components))


def _table(a: Any, cols: int, what: str) -> np.ndarray:
    arr = np.array(a, dtype=STATE_DTYPE)
    if arr.ndim != 2 or arr.shape[1] != cols:
        raise ValueError(f"{what} must have shape (rows, {cols}), got {arr.shape}")
    return arr


def _prefix_trie(tuples: np.ndarray, radices: Sequence[int]) -> tuple[list[np.ndarray], np.ndarray]:
    """Sorted codes of every prefix of the rows of ``tuples``: codes[j] holds pid_j * radices[j] + c_j, where pid_j
    is the rank of the prefix (c_0..c_{j-1}) among the prefixes of length j (so codes never overflow). Also returns
    each row's prefix ids, shape (rows, len(radices) + 1)."""
    codes = []
    pids = np.zeros((tuples.shape[0], len(radices) + 1), dtype=np.int64)
    for j, r in enumerate(radices):
        code = pids[:, j] * r + tuples[:, j]
        u, inv = np.unique(code, return_inverse=True)
        codes.append(u)
        pids[:, j + 1] = inv.reshape(-1)
    return codes, pids


def prefix_ids(tuples: np.ndarray, radices: Sequence[int]) -> np.ndarray:
    """(rows, L+1): column j is the rank of each row's prefix of length j among the rows' distinct such prefixes."""
    return _prefix_trie(np.asarray(tuples, dtype=STATE_DTYPE), radices)[1]


def _lookup(sorted_codes: np.ndarray, code: np.ndarray, ok: np.ndarray) -> np.ndarray:
    """Index of each code in a sorted array, -1 where absent or not ok."""
    if sorted_codes.size == 0:
        return np.full(code.shape, -1, dtype=np.int64)
    idx = np.searchsorted(sorted_codes, code)
    idx = np.minimum(idx, sorted_codes.size - 1)
    found = ok & (sorted_codes[idx] == code)
    return np.where(found, idx, -1)


class Cascade:
    """A cascade of semiautomata with its emulation map (docs/holonomy.md, "The cascade").

    Attributes: ``symbols``, ``n_levels``, ``levels`` (top first), ``coordinates`` ((n_states, n_levels): the lift of
    each original state), ``states`` (the emulated automaton's state names), ``skeleton`` (the holonomy
    :class:`~fsa2rnn.fsa.holonomy.Skeleton` it came from, or None), ``emulation_verified`` (True once
    :meth:`verify_emulation` passed). Build with :func:`~fsa2rnn.fsa.holonomy.holonomy_decomposition` or
    :meth:`product`.
    """

    def __init__(
        self,
        symbols: Sequence[str],
        levels: Sequence[CascadeLevel],
        keys: Sequence[np.ndarray],
        images: Sequence[np.ndarray],
        tuples: np.ndarray,
        tuple_states: np.ndarray,
        coordinates: np.ndarray,
        states: Sequence[str] | None = None,
        skeleton: Any = None,
    ) -> None:
        self.symbols = tuple(symbols)
        self.levels = list(levels)
        self.n_levels = len(self.levels)
        self._radices = [lv.n_points for lv in self.levels]
        L = self.n_levels
        tuples = _table(tuples, L, "tuples")
        self._trie, pids = _prefix_trie(tuples, self._radices)
        n_tuples = tuples.shape[0]
        full = pids[:, L]
        self._state_of_tuple = np.full(max(len(self._trie[-1]) if L else 1, 1), -1, dtype=STATE_DTYPE)
        self._state_of_tuple[full] = np.asarray(tuple_states, dtype=STATE_DTYPE).reshape(n_tuples)
        self._tuples = tuples
        self._tuples.setflags(write=False)
        self._key_codes: list[np.ndarray] = []
        self._keys: list[np.ndarray] = []
        self._images: list[np.ndarray] = []
        k = len(self.symbols)
        for i in range(L):
            kk = np.asarray(keys[i], dtype=STATE_DTYPE).reshape(-1, i + 1)
            im = np.asarray(images[i], dtype=STATE_DTYPE).reshape(kk.shape[0], self._radices[i])
            pid = self._prefix_ids(kk[:, 1:], i)
            if np.any(pid < 0):
                raise ValueError(f"level {i}: a dependency key's upper prefix is not a prefix of a reachable tuple")
            code = pid * k + kk[:, 0]
            order = np.argsort(code, kind="stable")
            code = code[order]
            if np.any(code[1:] == code[:-1]):
                raise ValueError(f"level {i}: duplicate dependency keys")
            kk, im = kk[order], im[order]
            for a in (code, kk, im):
                a.setflags(write=False)
            self._key_codes.append(code)
            self._keys.append(kk)
            self._images.append(im)
        self._build_dense()
        self.coordinates = _table(coordinates, L, "coordinates")
        self.coordinates.setflags(write=False)
        self.n_states = self.coordinates.shape[0]
        self.states = tuple(states) if states is not None else tuple(str(i) for i in range(self.n_states))
        self.skeleton = skeleton
        self.emulation_verified = False

    # ------------------------------------------------------------------ tables
    def _build_dense(self) -> None:
        """Dense child and row tables per level (prefix id × coordinate -> child id, prefix id × symbol -> row) when
        they fit in MAX_DENSE_CELLS; otherwise lookups use binary search in the sorted codes."""
        k = len(self.symbols)
        n_prefix = [1] + [len(t) for t in self._trie]
        cells = sum(n_prefix[j] * (self._radices[j] + k) for j in range(self.n_levels))
        self._child: list[np.ndarray] | None = None
        self._row: list[np.ndarray] | None = None
        if cells > MAX_DENSE_CELLS:
            return
        self._child, self._row = [], []
        for j in range(self.n_levels):
            child = np.full(n_prefix[j] * self._radices[j], -1, dtype=np.int64)
            child[self._trie[j]] = np.arange(len(self._trie[j]))
            row = np.full(n_prefix[j] * k, -1, dtype=np.int64)
            row[self._key_codes[j]] = np.arange(len(self._key_codes[j]))
            self._child.append(child.reshape(n_prefix[j], self._radices[j]))
            self._row.append(row.reshape(n_prefix[j], k))

    def _child_ids(self, j: int, pid: np.ndarray, c: np.ndarray) -> np.ndarray:
        """Prefix ids after appending coordinate c at level j (-1 where absent)."""
        r = self._radices[j]
        ok = (pid >= 0) & (c >= 0) & (c < r)
        if self._child is not None:
            return np.where(ok, self._child[j][np.where(ok, pid, 0), np.where(ok, c, 0)], -1)
        return _lookup(self._trie[j], np.where(ok, pid * r + c, -1), ok)

    def _row_ids(self, j: int, pid: np.ndarray, x: np.ndarray) -> np.ndarray:
        """Dependency row of (x, prefix) at level j (-1 where absent)."""
        k = len(self.symbols)
        ok = (pid >= 0) & (x >= 0) & (x < k)
        if self._row is not None:
            return np.where(ok, self._row[j][np.where(ok, pid, 0), np.where(ok, x, 0)], -1)
        return _lookup(self._key_codes[j], np.where(ok, pid * k + x, -1), ok)

    def _prefix_ids(self, coords: np.ndarray, length: int) -> np.ndarray:
        """Rank of the prefix coords[:, :length] among reachable prefixes of that length (-1 where absent)."""
        pid = np.zeros(coords.shape[0], dtype=np.int64)
        for j in range(length):
            c = coords[:, j]
            r = self._radices[j]
            ok = (pid >= 0) & (c >= 0) & (c < r)
            pid = _lookup(self._trie[j], np.where(ok, pid * r + c, -1), ok)
        return pid

    def dependency(self, level: int) -> tuple[np.ndarray, np.ndarray]:
        """(keys, images) of a level: rows (x, c_0, …, c_{level-1}) and the transformation each applies to the
        level's points (shape (m, n_points)); for a holonomy cascade every row is a permutation or a constant."""
        self._check_level(level)
        return self._keys[level], self._images[level]

    def key_index(self, level: int, keys: np.ndarray) -> np.ndarray:
        """Vectorized: rows (..., level+1) = (x, c_0..c_{level-1}) -> row index into dependency(level), -1 if absent."""
        self._check_level(level)
        keys = np.asarray(keys, dtype=STATE_DTYPE)
        if keys.shape[-1] != level + 1:
            raise ValueError(f"keys for level {level} must have {level + 1} columns, got shape {keys.shape}")
        flat = keys.reshape(int(np.prod(keys.shape[:-1])), level + 1)
        x = flat[:, 0]
        pid = np.zeros(flat.shape[0], dtype=np.int64)
        for j in range(level):
            pid = self._child_ids(j, pid, flat[:, j + 1])
        return self._row_ids(level, pid, x).reshape(keys.shape[:-1])

    def _check_level(self, level: int) -> None:
        if not 0 <= level < self.n_levels:
            raise IndexError(f"level {level} is out of range (the cascade has {self.n_levels} levels)")

    @property
    def reachable_tuples(self) -> np.ndarray:
        """Every coordinate tuple reachable from the lifts (read-only (R, n_levels))."""
        return self._tuples

    @property
    def widths(self) -> list[int]:
        """Points per level, top first."""
        return list(self._radices)

    # ------------------------------------------------------------------ emulation map and simulation
    def decode(self, coords: np.ndarray) -> np.ndarray:
        """(..., n_levels) coordinate tuples -> (...) original state index; -1 where not a reachable tuple."""
        coords = np.asarray(coords, dtype=STATE_DTYPE)
        if coords.shape[-1] != self.n_levels:
            raise ValueError(f"coordinates must have {self.n_levels} columns, got shape {coords.shape}")
        flat = coords.reshape(int(np.prod(coords.shape[:-1])), self.n_levels)
        pid = np.zeros(flat.shape[0], dtype=np.int64)
        for j in range(self.n_levels):
            pid = self._child_ids(j, pid, flat[:, j])
        out = np.where(pid >= 0, self._state_of_tuple[np.maximum(pid, 0)], -1)
        return out.reshape(coords.shape[:-1])

    def step(self, coords: np.ndarray, x: np.ndarray) -> np.ndarray:
        """One step of the cascade: coords (B, n_levels), symbol ids (B,) -> (B, n_levels).

        Level i's row is looked up with (x, c_0..c_{i-1}) *before* the step. Rows whose key is absent (a tuple not
        reachable from the lifts) become all -1.
        """
        coords = np.asarray(coords, dtype=STATE_DTYPE)
        x = np.asarray(x, dtype=STATE_DTYPE)
        B = coords.shape[0]
        new = np.empty_like(coords)
        bad = np.zeros(B, dtype=bool)
        pid = np.zeros(B, dtype=np.int64)
        for i in range(self.n_levels):
            c = coords[:, i]
            r = self._radices[i]
            row = self._row_ids(i, pid, x)
            valid = (row >= 0) & (c >= 0) & (c < r)
            bad |= ~valid
            new[:, i] = self._images[i][np.where(valid, row, 0), np.where(valid, c, 0)]
            pid = self._child_ids(i, pid, c)
        new[bad] = -1
        return new

    def run(self, ids: np.ndarray, start: np.ndarray) -> np.ndarray:
        """ids (B, T) symbol ids, start (B, n_levels) coordinates -> (B, T, n_levels) coordinates after each symbol.

        The cascade product (Definition 1): level i reads x_t with the coordinates of levels 0..i-1 before x_t.
        A batch row that leaves the reachable tuples becomes -1 from then on.
        """
        ids = np.asarray(ids, dtype=STATE_DTYPE)
        if ids.ndim != 2:
            raise ValueError(f"ids must have shape (B, T), got {ids.shape}")
        check_id_range(ids, len(self.symbols))
        c = np.asarray(start, dtype=STATE_DTYPE).reshape(ids.shape[0], self.n_levels)
        out = np.empty((ids.shape[0], ids.shape[1], self.n_levels), dtype=STATE_DTYPE)
        for t in range(ids.shape[1]):
            c = self.step(c, ids[:, t])
            out[:, t] = c
        return out

    def lift(self, states: np.ndarray | int) -> np.ndarray:
        """Coordinates of original states (the rows of ``coordinates``)."""
        return self.coordinates[np.asarray(states, dtype=STATE_DTYPE)]

    def verify_emulation(self, automaton: Automaton, n_words: int = 64, length: int = 256, seed: int = 0) -> bool:
        """Whether the cascade emulates ``automaton``: decode(run(lift(q), w)) == δ_w(q).

        Checked exhaustively on every (reachable tuple, symbol) — which covers every (state, symbol) and, by
        induction, every word from every lift — then on ``n_words`` random words of ``length`` symbols from random
        lifts (seeded). Sets ``emulation_verified``.
        """
        if automaton.n_symbols != len(self.symbols) or automaton.n_states != self.n_states:
            return False
        table = automaton.transitions
        if not np.array_equal(self.decode(self.coordinates), np.arange(self.n_states)):
            return False
        R = self._tuples
        src = self.decode(R)
        if np.any(src < 0):
            return False
        k = len(self.symbols)
        for x in range(k):
            nxt = self.decode(self.step(R, np.full(R.shape[0], x, dtype=STATE_DTYPE)))
            if not np.array_equal(nxt, table[x, src]):
                return False
        if n_words > 0 and length > 0:
            rng = np.random.default_rng(seed)
            q0 = rng.integers(0, self.n_states, size=n_words)
            ids = rng.integers(0, k, size=(n_words, length))
            got = self.decode(self.run(ids, self.coordinates[q0]))
            if not np.array_equal(got, automaton.run(ids, start=q0)):
                return False
        self.emulation_verified = True
        return True

    def is_permutation_reset(self) -> bool:
        """Whether every dependency row is a permutation of the level's points or a constant map."""
        for i in range(self.n_levels):
            im = self._images[i]
            if im.size == 0:
                continue
            perm = np.all(np.sort(im, axis=1) == np.arange(im.shape[1]), axis=1)
            const = np.all(im == im[:, :1], axis=1)
            if not np.all(perm | const):
                return False
        return True

    # ------------------------------------------------------------------ forward construction
    @classmethod
    def product(cls, automata: Sequence[Automaton], limit: int = MAX_PRODUCT_TUPLES) -> Cascade:
        """The cascade product A_0 ∘ A_1 ∘ … of given automata (Definition 1, iterated).

        A_0 reads the symbols Σ (its own alphabet). A_i (i ≥ 1) reads pairs (x, c_0, …, c_{i-1}) of a symbol and
        the states of the levels above *before* the step, encoded as the mixed-radix index
        ((x·n_0 + c_0)·n_1 + c_1)·… (n_j = number of states of A_j); so A_i needs |Σ|·n_0⋯n_{i-1} symbols. The
        cascade's states are all tuples (state j = index of the tuple in mixed radix, first level most
        significant); :meth:`to_automaton` returns the product automaton that the cascade emulates.
        """
        automata = list(automata)
        if not automata:
            raise SpecError("a cascade product needs at least one automaton")
        k = automata[0].n_symbols
        radices = [a.n_states for a in automata]
        total = int(np.prod(radices, dtype=object))
        if total > limit:
            raise LimitExceededError(f"the cascade product has {total} states (limit {limit})")
        for i, a in enumerate(automata):
            need = k * int(np.prod(radices[:i], dtype=object))
            if a.n_symbols != need:
                raise SpecError(
                    f"level {i} of a cascade product must read {need} symbols (|Σ| × states above), got {a.n_symbols}"
                )
        tuples = np.stack(np.unravel_index(np.arange(total), radices), axis=1).astype(STATE_DTYPE)
        keys, images, levels = [], [], []
        for i, a in enumerate(automata):
            upper = radices[:i]
            n_up = int(np.prod(upper, dtype=object))
            pre = np.stack(np.unravel_index(np.arange(n_up), upper), axis=1) if i else np.zeros((1, 0), int)
            x = np.repeat(np.arange(k), n_up)
            kk = np.concatenate([x[:, None], np.tile(pre, (k, 1))], axis=1).astype(STATE_DTYPE)
            sym = np.ravel_multi_index(tuple(kk.T), [k, *upper]) if i else kk[:, 0]
            keys.append(kk)
            images.append(a.transitions[sym])
            levels.append(CascadeLevel((_component_of_rows(a.transitions, 0),)))
        names = ["(" + ",".join(automata[j].states[t[j]] for j in range(len(automata))) + ")" for t in tuples]
        return cls(
            automata[0].symbols,
            levels,
            keys,
            images,
            tuples,
            np.arange(total),
            tuples,
            states=names,
        )

    def to_automaton(self) -> Automaton:
        """The semiautomaton this cascade runs on its reachable tuples (state i = reachable tuple i)."""
        R = self._tuples
        idx = {t.tobytes(): i for i, t in enumerate(R)}
        rows = []
        for x in range(len(self.symbols)):
            nxt = self.step(R, np.full(R.shape[0], x, dtype=STATE_DTYPE))
            rows.append([idx[t.tobytes()] for t in nxt])
        names = ["(" + ",".join(str(int(c)) for c in t) + ")" for t in R]
        return Automaton(rows, states=names, symbols=self.symbols)

    # ------------------------------------------------------------------ export
    def __str__(self) -> str:
        """SgpDec-style display, e.g. ``1: (2,C1) / 2: (3,S3) (4,C3)``."""
        if not self.n_levels:
            return "(no levels)"
        return " / ".join(f"{i + 1}: " + " ".join(c.label() for c in lv.components) for i, lv in enumerate(self.levels))

    def __repr__(self) -> str:
        return f"<Cascade {self}>"

    def to_json(self, tables: bool = False) -> dict[str, Any]:
        """A JSON-able description: levels (top first) with their components, the lifts, and optionally the
        dependency tables (``tables=True``: per level the keys and images)."""
        out: dict[str, Any] = {
            "format": CASCADE_FORMAT,
            "symbols": list(self.symbols),
            "n_levels": self.n_levels,
            "levels": [
                {"n_points": lv.n_points, "components": [c.to_json(self.states) for c in lv.components]}
                for lv in self.levels
            ],
            "coordinates": {s: self.coordinates[i].tolist() for i, s in enumerate(self.states)},
            "n_reachable_tuples": int(self._tuples.shape[0]),
            "emulation_verified": self.emulation_verified,
        }
        if tables:
            out["dependencies"] = [
                {"keys": self._keys[i].tolist(), "images": self._images[i].tolist()} for i in range(self.n_levels)
            ]
        return out

    def to_dot(self) -> str:
        """Graphviz DOT: one node per component, levels top to bottom, edges for the dependencies."""
        lines = ["digraph cascade {", "  rankdir=TB;", '  node [shape=box, fontname="Helvetica"];']
        lines.append(f'  input [shape=plaintext, label="input: {len(self.symbols)} symbols"];')
        for i, lv in enumerate(self.levels):
            lines.append(f"  subgraph cluster_{i} {{")
            lines.append(f'    label="level {i + 1} ({lv.n_points} points)";')
            for j, c in enumerate(lv.components):
                lines.append(f'    c{i}_{j} [label="{c.points} points\\n{c.group} (order {c.group_order})"];')
            lines.append("  }")
        prev = ["input"]
        for i, lv in enumerate(self.levels):
            cur = [f"c{i}_{j}" for j in range(len(lv.components))]
            for a in prev:
                for b in cur:
                    lines.append(f"  {a} -> {b};")
            prev = cur
        lines.append("}")
        return "\n".join(lines) + "\n"


def _component_of_rows(rows: np.ndarray, offset: int) -> Component:
    """A component on all the points of ``rows`` whose group is generated by the rows that are permutations."""
    n = rows.shape[1]
    perms = rows[np.all(np.sort(rows, axis=1) == np.arange(n), axis=1)]
    perms = np.unique(perms, axis=0) if perms.size else perms.reshape(0, n)
    g = describe_group(perms, degree=n, what=f"the group of a level on {n} points")
    return Component(
        points=n, group_order=g.order, group=g.name, offset=offset, composition_factors=g.composition_factors
    )


__all__ = ["Cascade", "CascadeLevel", "Component", "CASCADE_FORMAT", "MAX_PRODUCT_TUPLES"]
