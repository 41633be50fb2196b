"""The transition monoid M_δ = {δ_w : w ∈ Σ*} of a semiautomaton, enumerated by a vectorized breadth-first search.

Product convention (docs/theory.md, "Conventions"; libsemigroups'): s·t = "apply s, then t" = ``t[s]``, so δ_{uv} =
δ_u·δ_v.
Element 0 is the identity δ_ε; the others follow in breadth-first order (nondecreasing shortest-word length).

Engine. Elements are image arrays (uint8 for n ≤ 256 states) and are keyed by integers:
- ``dense``: the mixed-radix code Σ img[i]·n^i indexes an int32 lookup table of size n^n (n^n ≤ DENSE_LIMIT, and
  at most DENSE_PER_ELEMENT entries per element that ``max_elements`` allows);
- ``int64``: the same code as int64 (n^n < 2^63, n ≤ 15) in an open-addressing hash table (vectorized probing);
- ``hash``: a 64-bit multiplicative hash in the same table; every hit is verified against the stored images, so
  the result stays exact (a collision restarts the enumeration with new hash weights instead of merging two
  elements).
Each BFS layer is composed with every generator at once by numpy gathers, its keys looked up, and the new ones
deduplicated with ``np.unique``; the right Cayley graph falls out of the search, the left one is a column gather
of all elements per generator.

Limits (LimitExceededError). ``max_bytes`` (default MAX_BYTES) bounds the peak memory of the enumeration and of
Green's structure: what one element costs — its image (n × index width), both Cayley graphs, the BFS tree, its
hash-table slots and Green's per-element work — is known from the input alone, so before the enumeration starts
the element limit becomes min(``max_elements``, (max_bytes − working buffers) / bytes per element). The monoid is
refused at once when a lower bound on its size taken from the input (the powers of each generator:
index + period of its functional graph) already exceeds that limit, and otherwise as soon as the enumeration
passes it. The arrays grow in place (no copy of the elements found so far), so the limit holds for the real peak.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

import numpy as np

from .automaton import Automaton
from .errors import LimitExceededError, SpecError
from .green import GreenStructure

#: Default limit on the number of elements (T_8 has 16,777,216).
MAX_ELEMENTS = 1 << 25
#: Default limit on the bytes held by element images and both Cayley graphs.
MAX_BYTES = 6 << 30
#: n^n up to this size uses a dense int32 lookup table (128 MiB at most) ...
DENSE_LIMIT = 1 << 25
#: ... and at most this many table entries per element allowed (filling a table costs more than hashing few elements)
DENSE_PER_ELEMENT = 64
#: Target number of image entries composed per vectorized step (bounds temporary memory).
CHUNK_ENTRIES = 1 << 23
#: Bytes of working buffers per image entry of a step (products, keys, new images, hash-mode checks), measured.
WORK_BYTES_PER_ENTRY = 24
#: Hash-table bytes per element in int64/hash mode: at most 8 slots of 12 bytes, plus the old table while growing.
HASH_BYTES_PER_ELEMENT = 10 * 12
#: Green's structure per element: the left Cayley graph (4·k) and the SCC work of one Cayley graph (24·k + 64).
GREEN_BYTES_PER_SYMBOL, GREEN_BYTES_PER_ELEMENT = 28, 64
#: Images of at most this many points are keyed column by column (n vectorized steps, no (rows, n) copy); longer
#: ones by one matrix product (few rows, long images; the column form's n×n product table would not fit).
COLUMN_KEYS_MAX_N = 64
_INT64_MAX = int(np.iinfo(np.int64).max)


def _power_at_most(n: int, bound: int) -> int | None:
    """n**n when n ≤ 64 and n**n is at most ``bound``, else None (n**n is never computed for a larger n: every
    bound the module passes is below 2^64 < 65^65)."""
    if n > 64:
        return None
    big = n**n
    return big if big <= bound else None


def _gib(n_bytes: int) -> str:
    return f"{n_bytes / 2**30:.3g} GiB"


def _image_dtype(n: int) -> np.dtype:
    if n <= 1 << 8:
        return np.dtype(np.uint8)
    if n <= 1 << 16:
        return np.dtype(np.uint16)
    return np.dtype(np.int32)


class _HashTable:
    """An open-addressing (linear probing) key → id table with vectorized find and insert.

    Keys are int64 or uint64; slots are empty where ``ids == -1``. The table doubles past a load of 1/2, so a
    lookup costs O(1) expected probes; every probe round is one numpy gather over the keys still unresolved.
    """

    _MIX = np.uint64(0x9E3779B97F4A7C15)

    def __init__(self, dtype: np.dtype, bits: int = 16) -> None:
        self.bits = bits
        self.keys = np.zeros(1 << bits, dtype=dtype)
        self.ids = np.full(1 << bits, -1, dtype=np.int32)
        self.count = 0

    def _slot(self, keys: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            h = keys.astype(np.uint64, copy=False) * self._MIX
        return (h >> np.uint64(64 - self.bits)).astype(np.int64)

    def find(self, keys: np.ndarray) -> np.ndarray:
        out = np.full(len(keys), -1, dtype=np.int32)
        pos = self._slot(keys)
        active = np.arange(len(keys))
        mask = (1 << self.bits) - 1
        while len(active):
            p = pos[active]
            sid = self.ids[p]
            hit = (sid >= 0) & (self.keys[p] == keys[active])
            out[active[hit]] = sid[hit]
            go_on = (sid >= 0) & ~hit
            active, p = active[go_on], p[go_on]
            pos[active] = (p + 1) & mask
        return out

    def add(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Insert distinct keys that are not in the table."""
        if 2 * (self.count + len(keys)) > len(self.ids):
            self._grow(self.count + len(keys))
        pos = self._slot(keys)
        active = np.arange(len(keys))
        mask = (1 << self.bits) - 1
        ids = ids.astype(np.int32)
        while len(active):
            p = pos[active]
            empty = self.ids[p] < 0
            cand, pc = active[empty], p[empty]
            self.ids[pc] = ids[cand]  # several may write one slot: the one read back wins it
            won = self.ids[pc] == ids[cand]
            self.keys[pc[won]] = keys[cand[won]]
            placed = np.zeros(len(active), dtype=bool)
            placed[np.flatnonzero(empty)[won]] = True
            active, p = active[~placed], p[~placed]
            pos[active] = (p + 1) & mask
        self.count += len(keys)

    def _grow(self, need: int) -> None:
        occupied = self.ids >= 0
        keys, ids = self.keys[occupied], self.ids[occupied]
        while (1 << self.bits) < 4 * need:  # load 1/4 after growing: at most 8 slots per key before the next
            self.bits += 1
        self.keys = np.zeros(1 << self.bits, dtype=keys.dtype)
        self.ids = np.full(1 << self.bits, -1, dtype=np.int32)
        self.count = 0
        if len(keys):
            self.add(keys, ids)


class _HashCollision(Exception):
    """Two distinct transformations share a 64-bit hash (probability about |M|²/2^64): retry with new weights."""


#: Retries with fresh hash weights after a collision (each collision has probability about |M|²/2^64).
HASH_RETRIES = 4


class _Keys:
    """Integer keys of image rows and a key → id index (dense table, or an open-addressing hash table)."""

    def __init__(self, n: int, seed: int = 0, dense_limit: int = DENSE_LIMIT) -> None:
        self.n = n
        big = _power_at_most(n, dense_limit)
        if big is not None:
            self.mode = "dense"
            self.weights = n ** np.arange(n, dtype=np.int32)
            self.table = np.full(big, -1, dtype=np.int32)
        else:
            self.mode = "int64" if _power_at_most(n, _INT64_MAX) is not None else "hash"
            if self.mode == "int64":
                self.weights = n ** np.arange(n, dtype=np.int64)
            else:
                # odd weights (invertible mod 2^64), one stream per retry
                rng = np.random.default_rng(seed)
                self.weights = rng.integers(_INT64_MAX, size=n, dtype=np.int64).astype(np.uint64) | np.uint64(1)
            self.index = _HashTable(np.dtype(np.int64 if self.mode == "int64" else np.uint64))
        self.by_columns = n <= COLUMN_KEYS_MAX_N

    @property
    def exact(self) -> bool:
        return self.mode != "hash"

    def encode(self, rows: np.ndarray) -> np.ndarray:
        """Keys of image rows (r, n): Σ rows[:, i]·w[i] in int32 (dense), int64 or wrapping uint64 (hash)."""
        w = self.weights
        if self.by_columns:
            acc = rows[:, 0].astype(w.dtype) * w[0]
            for i in range(1, self.n):
                acc += rows[:, i].astype(w.dtype) * w[i]
            return acc
        return rows.astype(w.dtype) @ w

    def encode_products(self, rows: np.ndarray, t: np.ndarray) -> np.ndarray:
        """Keys of the products rows·t = t[rows] without forming them: Σ_i (t·w[i])[rows[:, i]] (n table gathers)."""
        w = self.weights
        if self.by_columns:
            tw = t.astype(w.dtype)[None, :] * w[:, None]  # tw[i, v] = t[v]·w[i]
            acc = np.take(tw[0], rows[:, 0])
            for i in range(1, self.n):
                acc += np.take(tw[i], rows[:, i])
            return acc
        return t.astype(w.dtype)[rows] @ w  # few rows, long images: the products, one dot product per row

    def encode_columns(self, rows: np.ndarray, columns: np.ndarray) -> np.ndarray:
        """Keys of rows[:, columns] without gathering: Σ_j rows[:, j]·(Σ_{i: columns[i] = j} w[i])."""
        if self.by_columns:
            w = np.zeros(self.n, dtype=self.weights.dtype)
            np.add.at(w, columns, self.weights)
            acc = np.zeros(len(rows), dtype=w.dtype)
            for j in np.flatnonzero(w):
                acc += rows[:, j].astype(w.dtype) * w[j]
            return acc
        return self.encode(rows[:, columns])

    def find(self, keys: np.ndarray) -> np.ndarray:
        """Ids of the keys, -1 where unknown."""
        if self.mode == "dense":
            return self.table[keys]
        return self.index.find(keys)

    def dedup(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For unknown keys (with repeats): the positions of one representative per distinct key, in increasing
        order, and for every key the rank of its representative. Dense mode scatters into the table (O(r));
        otherwise sorts (O(r log r))."""
        if self.mode == "dense":
            pos = np.arange(len(keys), dtype=np.int32)
            self.table[keys] = -2 - pos  # any writer wins; all equal keys then read the same winner
            winner = -2 - self.table[keys]
            reps = np.flatnonzero(winner == pos)
            rank = np.empty(len(keys), dtype=np.int32)
            rank[reps] = np.arange(len(reps), dtype=np.int32)
            self.table[keys] = -1
            return reps, rank[winner]
        _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        order = np.argsort(first, kind="stable")
        rank = np.empty(len(order), dtype=np.int32)
        rank[order] = np.arange(len(order), dtype=np.int32)
        return first[order], rank[inverse.ravel()]

    def add(self, keys: np.ndarray, ids: np.ndarray) -> None:
        """Insert new (distinct, unknown) keys."""
        if self.mode == "dense":
            self.table[keys] = ids
            return
        self.index.add(keys, ids)


def powers_count(t: np.ndarray) -> int:
    """|{t^0, t^1, t^2, …}| = index + period of the transformation t: the powers repeat from t^I on with period
    p, where I is the longest tail of its functional graph (steps from a point to the cycles) and p the lcm of its
    cycle lengths. O(n log n) time, O(n log n) memory, vectorized: squaring finds the cycles, pointer doubling
    their lengths, and a binary search over the powers t^(2^j) the tails."""
    t = np.asarray(t, dtype=np.int64)
    n = len(t)
    jumps = [t]  # t^(2^j)
    while (1 << (len(jumps) - 1)) <= n:  # t^e with e > n maps every point onto the cycles
        jumps.append(jumps[-1][jumps[-1]])
    on_cycle = np.zeros(n, dtype=bool)
    on_cycle[jumps[-1]] = True
    cyc = np.flatnonzero(on_cycle)
    # on the cycles t is a permutation: each cycle's length from the smallest point it reaches (pointer doubling)
    label, jump = cyc.copy(), t[cyc]
    pos = np.full(n, -1, dtype=np.int64)
    pos[cyc] = np.arange(len(cyc))
    for _ in range(len(jumps)):
        label = np.minimum(label, label[pos[jump]])
        jump = jump[pos[jump]]
    lengths = np.unique(np.bincount(label)[np.unique(label)])
    period = math.lcm(*(int(v) for v in lengths))
    if on_cycle.all():
        return period
    # tail of each point: the least e with t^e(p) on a cycle, bit by bit from the largest power down
    cur, tail = np.arange(n), np.zeros(n, dtype=np.int64)
    for j in range(len(jumps) - 1, -1, -1):
        nxt = jumps[j][cur]
        move = ~on_cycle[nxt]
        cur = np.where(move, nxt, cur)
        tail += move << j
    tail += ~on_cycle  # one more step from the last point off the cycles
    return int(tail.max()) + period


def _as_generators(source: Any) -> tuple[np.ndarray, Any]:
    if isinstance(source, Automaton):
        return np.asarray(source.transitions), source
    try:
        gens = np.asarray(source, dtype=np.int64)
    except (TypeError, ValueError) as exc:
        raise SpecError(f"transformations must be an integer array of shape (k, n): {exc}") from None
    if gens.ndim != 2 or gens.shape[0] == 0 or gens.shape[1] == 0:
        raise SpecError(f"transformations must have shape (k, n) with k ≥ 1 and n ≥ 1, got {gens.shape}")
    n = gens.shape[1]
    if gens.size and (gens.min() < 0 or gens.max() >= n):
        raise SpecError(f"transformation images must lie in 0..{n - 1}")
    return gens, None


class TransitionMonoid:
    """The transition monoid of an automaton (or of a list of transformations of {0..n-1}), fully enumerated.

    ``TransitionMonoid(automaton)`` or ``TransitionMonoid([[1, 2, 0], [0, 0, 2]])``; ``len(M)`` = ``M.size``.
    Construction runs the full enumeration with the right Cayley graph: O(|M|·|Σ|·n) time, O(|M|·(n + |Σ|))
    memory, within ``element_limit`` = min(``max_elements``, what ``max_bytes`` holds; module docstring), else
    LimitExceededError (at once when ``at_least``, a known lower bound on |M|, is over it). The left Cayley graph,
    idempotents and Green's structure are computed on first use.

    Attributes: ``elements`` (|M|, n) image arrays, element i = δ_{word(i)}; ``right_cayley`` (|M|, |Σ|) int32 with
    right_cayley[s, x] = id(s·δ_x); ``parent``/``last_symbol`` (the BFS tree: word(i) = word(parent[i]) + x);
    ``element_limit``; ``bytes_per_element()``.
    """

    def __init__(
        self,
        source: Any,
        *,
        max_elements: int = MAX_ELEMENTS,
        max_bytes: int = MAX_BYTES,
        at_least: int = 0,
    ) -> None:
        gens, automaton = _as_generators(source)
        self.automaton = automaton
        k, n = gens.shape
        self.n_states, self.n_generators = n, k
        self.max_elements, self.max_bytes = int(max_elements), int(max_bytes)
        self._dense_limit = min(DENSE_LIMIT, DENSE_PER_ELEMENT * self.max_elements)
        dtype = _image_dtype(n)
        self._gens = gens.astype(dtype)
        self._plan_memory(int(at_least))
        for seed in range(HASH_RETRIES):
            self._keys = _Keys(n, seed, self._dense_limit)
            try:
                self._enumerate(dtype)
                break
            except _HashCollision:
                continue
        else:  # pragma: no cover - probability about (|M|²/2^64)^HASH_RETRIES
            raise LimitExceededError(f"64-bit hash collisions in {HASH_RETRIES} attempts; the limit is {HASH_RETRIES}")

    # ------------------------------------------------------------------ enumeration
    def bytes_per_element(self) -> int:
        """Peak bytes one element costs: image, right and left Cayley graphs, BFS tree, hash slots, Green's work."""
        n, k = self.n_states, self.n_generators
        hashed = _power_at_most(n, self._dense_limit) is None
        return (
            n * self._gens.itemsize
            + 4 * k
            + 8
            + (HASH_BYTES_PER_ELEMENT if hashed else 0)
            + GREEN_BYTES_PER_SYMBOL * k
            + GREEN_BYTES_PER_ELEMENT
        )

    def _plan_memory(self, at_least: int) -> None:
        """Fix the step size and the element limit from the input alone, before anything is enumerated; refuse at
        once when the generators' powers, or ``at_least`` (a size the caller knows the monoid exceeds or reaches),
        already outnumber that limit."""
        n, k = self.n_states, self.n_generators
        self._chunk_entries = max(k * n, min(CHUNK_ENTRIES, self.max_bytes // (8 * WORK_BYTES_PER_ENTRY)))
        fixed = self._chunk_entries * WORK_BYTES_PER_ENTRY + 4 * (_power_at_most(n, self._dense_limit) or 0)
        bpe = self.bytes_per_element()
        fits = max(0, self.max_bytes - fixed) // bpe
        self.element_limit = min(self.max_elements, fits)
        self._why = (
            f"the element limit of {self.max_elements:,}"
            if self.element_limit == self.max_elements
            else f"the {self.element_limit:,} elements that the memory limit of {_gib(self.max_bytes)} holds at "
            f"{bpe:,} bytes each ({n:,} states)"
        )
        counts = [powers_count(g) for g in self._gens]
        x = max(range(k), key=counts.__getitem__)  # the first symbol with the most powers
        least = counts[x]
        if least > self.element_limit:
            name = self.automaton.symbols[x] if self.automaton is not None else str(x)
            raise LimitExceededError(
                f"transition monoid has at least {least:,} elements (the powers of symbol {name!r}), over {self._why}"
            )
        if at_least > self.element_limit:
            raise LimitExceededError(f"transition monoid has at least {at_least:,} elements, over {self._why}")

    def _check_limits(self, size: int) -> None:
        if size > self.element_limit:
            raise LimitExceededError(f"transition monoid has at least {size:,} elements, over {self._why}")

    def _enumerate(self, dtype: np.dtype) -> None:
        """Breadth-first search from the identity. Element i's image is row i of one array that grows in place
        (``ndarray.resize``: no copy of the rows found so far); a layer is the row range it was appended as."""
        n, k = self.n_states, self.n_generators
        gens = self._gens
        keys = self._keys
        identity = np.arange(n, dtype=dtype)[None, :]
        keys.add(keys.encode(identity), np.zeros(1, dtype=np.int32))
        self._arrays = {
            "elements": np.empty((min(1024, max(1, self.element_limit)), n), dtype=dtype),
            "right_cayley": np.empty((min(1024, max(1, self.element_limit)), k), dtype=np.int32),
            "parent": np.empty(min(1024, max(1, self.element_limit)), dtype=np.int32),
            "last_symbol": np.empty(min(1024, max(1, self.element_limit)), dtype=np.int32),
        }
        self._arrays["elements"][0] = identity
        self._arrays["parent"][0] = self._arrays["last_symbol"][0] = -1
        start, end, size = 0, 1, 1  # the frontier is elements[start:end]
        chunk = max(1, self._chunk_entries // max(1, k * n))
        layer_sizes = [1]
        while end > start:
            for c0 in range(start, end, chunk):
                block = self._arrays["elements"][c0 : min(c0 + chunk, end)].copy()  # the store may move
                # keys of the products s·δ_x = δ_x[s] for every s in the block and every x, in (s, x) order
                codes = np.empty((len(block), k), dtype=keys.weights.dtype)
                for x in range(k):
                    codes[:, x] = keys.encode_products(block, gens[x])
                codes = codes.ravel()
                ids = keys.find(codes)
                if not keys.exact:
                    self._verify(block, ids, size)
                unknown = np.flatnonzero(ids < 0)
                if len(unknown):
                    reps, rank = keys.dedup(codes[unknown])
                    self._check_limits(size + len(reps))
                    firsts = unknown[reps]
                    imgs = gens[firsts % k, block[firsts // k].T].T  # δ_x[s] for each new (s, x)
                    if not keys.exact and not np.array_equal(imgs[rank], self._products(block, unknown)):
                        raise _HashCollision
                    keys.add(codes[firsts], np.arange(size, size + len(reps), dtype=np.int32))
                    ids[unknown] = size + rank
                    self._reserve(size + len(reps))
                    self._arrays["elements"][size : size + len(reps)] = imgs
                    self._arrays["parent"][size : size + len(reps)] = c0 + firsts // k
                    self._arrays["last_symbol"][size : size + len(reps)] = firsts % k
                    size += len(reps)
                self._arrays["right_cayley"][c0 : c0 + len(block)] = ids.reshape(len(block), k)
            start, end = end, size
            if end > start:
                layer_sizes.append(end - start)
        for name, a in self._arrays.items():
            a.resize((size, *a.shape[1:]), refcheck=False)  # shrink in place
            a.setflags(write=False)
            setattr(self, name, a)
        del self._arrays
        self.layer_sizes = np.array(layer_sizes, dtype=np.int64)

    def _products(self, block: np.ndarray, flat: np.ndarray) -> np.ndarray:
        """The products block[f // k]·δ_{f % k} for flat (s, x) positions f."""
        k = self.n_generators
        return self._gens[flat % k, block[flat // k].T].T

    def _reserve(self, need: int) -> None:
        """Room for ``need`` elements: capacity doubles (at most to the element limit), in place — no view of the
        arrays is alive here, and a large array is moved by the kernel's mremap, not copied."""
        cap = len(self._arrays["parent"])
        if need <= cap:
            return
        cap = min(max(need, 2 * cap), max(need, self.element_limit))
        for a in self._arrays.values():
            a.resize((cap, *a.shape[1:]), refcheck=False)

    def _verify(self, block: np.ndarray, ids: np.ndarray, size: int) -> None:
        """Hash mode: the stored image of every hit must equal the computed product (exactness)."""
        hit = np.flatnonzero(ids >= 0)
        if not len(hit):
            return
        if not np.array_equal(self._arrays["elements"][ids[hit]], self._products(block, hit)):
            raise _HashCollision

    # ------------------------------------------------------------------ basic API
    def __len__(self) -> int:
        return len(self.elements)

    @property
    def size(self) -> int:
        """Number of elements |M| (the identity included)."""
        return len(self.elements)

    def __repr__(self) -> str:
        return f"TransitionMonoid(size={self.size}, states={self.n_states}, generators={self.n_generators})"

    @property
    def generators(self) -> np.ndarray:
        """The generators δ_x as a (|Σ|, n) array."""
        return self._gens

    def index(self, transformations: Any) -> np.ndarray | int:
        """Ids of transformations (one image array, or an (r, n) array of them); -1 for non-members."""
        arr = np.asarray(transformations)
        single = arr.ndim == 1
        rows = np.atleast_2d(arr)
        if rows.shape[1] != self.n_states:
            raise SpecError(f"transformations must have {self.n_states} images, got {rows.shape[1]}")
        if rows.min() < 0 or rows.max() >= self.n_states:
            return -1 if single else np.full(len(rows), -1, dtype=np.int32)
        rows = rows.astype(self.elements.dtype)
        ids = self._keys.find(self._keys.encode(rows))
        if not self._keys.exact:
            ok = ids >= 0
            ok[ok] = np.all(self.elements[ids[ok]] == rows[ok], axis=1)
            ids = np.where(ok, ids, -1)
        return int(ids[0]) if single else ids

    def word(self, i: int) -> list[int]:
        """A shortest word (symbol indices) w with δ_w = element i (from the BFS tree)."""
        out = []
        i = int(i)
        while i > 0:
            out.append(int(self.last_symbol[i]))
            i = int(self.parent[i])
        return out[::-1]

    def word_length(self) -> np.ndarray:
        """Length of a shortest word of every element (BFS depth)."""
        return np.repeat(np.arange(len(self.layer_sizes)), self.layer_sizes)

    def product(self, i: int, j: int) -> int:
        """Id of element i · element j (apply i, then j)."""
        return int(self.index(self.elements[j][self.elements[i]]))

    def multiplication_table(self, limit: int = 4096) -> np.ndarray:
        """The |M|×|M| table T[i, j] = id(i·j). Refused (LimitExceededError) above ``limit`` elements."""
        m = self.size
        if m > limit:
            raise LimitExceededError(f"multiplication table of {m:,} elements exceeds the limit of {limit:,}")
        E = self.elements
        rows = E[:, E]  # rows[j, i, :] = E[j][E[i]] = i·j
        return self.index(rows.transpose(1, 0, 2).reshape(m * m, self.n_states)).reshape(m, m)

    @cached_property
    def left_cayley(self) -> np.ndarray:
        """(|M|, |Σ|) int32: left_cayley[s, x] = id(δ_x·s) = id(s[δ_x]). One column gather of all elements per
        generator, O(|M|·|Σ|·n)."""
        E = self.elements
        m, n, k = self.size, self.n_states, self.n_generators
        out = np.empty((m, k), dtype=np.int32)
        chunk = max(1, CHUNK_ENTRIES // n)
        for x in range(k):
            g = self._gens[x].astype(np.intp)
            for c0 in range(0, m, chunk):
                # products of members are members, and members' keys are distinct (checked while enumerating),
                # so a hashed key identifies the product without a further comparison
                out[c0 : c0 + chunk, x] = self._keys.find(self._keys.encode_columns(E[c0 : c0 + chunk], g))
        out.setflags(write=False)
        return out

    @cached_property
    def idempotent_mask(self) -> np.ndarray:
        """Boolean mask of the idempotents e·e = e (e[e] == e): a filter on a few columns, then full rows in chunks."""
        E = self.elements
        rows = np.arange(self.size)
        for j in range(min(self.n_states, 4)):
            col = E[rows, j].astype(np.intp)
            rows = rows[E[rows, col] == E[rows, j]]
        mask = np.zeros(self.size, dtype=bool)
        chunk = max(1, CHUNK_ENTRIES // self.n_states)
        for c0 in range(0, len(rows), chunk):
            r = rows[c0 : c0 + chunk]
            block = E[r]
            mask[r] = np.all(np.take_along_axis(block, block.astype(np.intp), axis=1) == block, axis=1)
        return mask

    @property
    def idempotents(self) -> np.ndarray:
        """Ids of the idempotents."""
        return np.flatnonzero(self.idempotent_mask)

    @property
    def number_of_idempotents(self) -> int:
        return int(self.idempotent_mask.sum())

    # ------------------------------------------------------------------ Green's structure (fsa/green.py)
    @cached_property
    def green(self) -> Any:
        """Green's relations R, L, H, D (computed on first use; see :mod:`fsa2rnn.fsa.green`)."""
        return GreenStructure(self)

    def D_classes(self) -> list[np.ndarray]:
        return self.green.D_classes()

    @property
    def number_of_D_classes(self) -> int:
        return self.green.number_of_D_classes

    @property
    def number_of_R_classes(self) -> int:
        return self.green.number_of_R_classes

    @property
    def number_of_L_classes(self) -> int:
        return self.green.number_of_L_classes

    @property
    def number_of_H_classes(self) -> int:
        return self.green.number_of_H_classes

    def is_regular_element(self, i: int) -> bool:
        """Whether element i is regular (its D-class contains an idempotent)."""
        return self.green.is_regular_element(i)


def full_transformation_generators(n: int) -> np.ndarray:
    """Standard generators of T_n: the n-cycle, the transposition (0 1) and the map 1 ↦ 0 fixing the rest."""
    cyc = np.roll(np.arange(n), -1)
    swap = np.arange(n)
    if n > 1:
        swap[[0, 1]] = [1, 0]
    col = np.arange(n)
    if n > 1:
        col[1] = 0
    return np.stack([cyc, swap, col])


__all__ = ["TransitionMonoid", "full_transformation_generators", "MAX_ELEMENTS", "MAX_BYTES", "DENSE_LIMIT"]
