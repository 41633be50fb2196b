"""The enumeration engine of fsa/monoid.py against independent oracles: a brute-force breadth-first search over
tuples with a dict (elements, BFS order, layers, words, both Cayley graphs, idempotents, products, index) in every
key mode (dense, int64, hash, and n > 64); the open-addressing table against a dict and Fibonacci hashing; the keys
against their formulas; powers_count against iterating t^e; the memory plan against the module docstring's formula
and the documented defaults (README: up to 2^25 elements; docs/monoid.md: dense table when n^n ≤ 2^25)."""

from __future__ import annotations

import inspect
import math
from decimal import Decimal, getcontext

import numpy as np
import pytest

from fsa2rnn.fsa import monoid as mono
from fsa2rnn.fsa.automaton import Automaton
from fsa2rnn.fsa.errors import LimitExceededError, SpecError
from fsa2rnn.fsa.monoid import TransitionMonoid, _HashTable, _Keys, full_transformation_generators, powers_count

# ---------------------------------------------------------------- oracles


def brute_bfs(gens, cap: int = 10**6):
    """Breadth-first search from the identity over tuples: s·δ_x = δ_x[s]; (order, depth, layer sizes)."""
    gens = [tuple(int(v) for v in g) for g in gens]
    n = len(gens[0])
    ident = tuple(range(n))
    order, depth, frontier, layers = [ident], {ident: 0}, [ident], [1]
    while frontier:
        nxt = []
        for s in frontier:
            for g in gens:
                p = tuple(g[v] for v in s)
                if p not in depth:
                    depth[p] = depth[s] + 1
                    order.append(p)
                    nxt.append(p)
                    if len(order) > cap:
                        return None
        if nxt:
            layers.append(len(nxt))
        frontier = nxt
    return order, depth, layers


def check_engine(M: TransitionMonoid, gens, full: bool = True) -> None:
    order, depth, layers = brute_bfs(gens)
    gens = [tuple(int(v) for v in g) for g in gens]
    n, k = len(gens[0]), len(gens)
    assert len(M) == M.size == len(order)
    got = [tuple(int(v) for v in e) for e in M.elements]
    assert set(got) == set(order) and len(set(got)) == len(got)
    assert list(M.layer_sizes) == layers
    assert [depth[e] for e in got] == sorted(depth[e] for e in got)  # breadth-first: nondecreasing length
    assert list(M.word_length()) == [depth[e] for e in got]
    order = got
    pos = {e: i for i, e in enumerate(order)}
    assert M.parent[0] == -1 and M.last_symbol[0] == -1
    for name in ("elements", "right_cayley", "parent", "last_symbol"):
        assert not getattr(M, name).flags.writeable
    assert not M.left_cayley.flags.writeable
    for i, e in enumerate(order):
        w = M.word(i)
        img = tuple(range(n))
        for x in w:
            img = tuple(gens[x][v] for v in img)
        assert img == e and len(w) == depth[e]
        if i:
            p, x = int(M.parent[i]), int(M.last_symbol[i])
            assert tuple(gens[x][v] for v in order[p]) == e and depth[order[p]] + 1 == depth[e]
        for x in range(k):
            assert M.right_cayley[i, x] == pos[tuple(gens[x][v] for v in e)]
            assert M.left_cayley[i, x] == pos[tuple(e[v] for v in gens[x])]
    idem = [i for i, e in enumerate(order) if tuple(e[v] for v in e) == e]
    assert list(M.idempotents) == idem and M.number_of_idempotents == len(idem)
    assert list(np.flatnonzero(M.idempotent_mask)) == idem
    # index of members (batch and single) and of non-members
    assert list(M.index(np.array(order))) == list(range(len(order)))
    assert M.index(np.array(order[-1])) == len(order) - 1
    rng = np.random.default_rng(len(order))
    others = [tuple(int(v) for v in rng.integers(0, n, n)) for _ in range(30)]
    got = M.index(np.array(others))
    assert list(got) == [pos.get(t, -1) for t in others]
    for t in others[:5]:
        assert M.index(np.array(t)) == pos.get(t, -1)
    if full and len(order) <= 60:
        T = M.multiplication_table()
        for i, a in enumerate(order):
            for j, b in enumerate(order):
                assert T[i, j] == pos[tuple(b[v] for v in a)]
        assert M.product(len(order) - 1, 0) == len(order) - 1


# ---------------------------------------------------------------- the engine in every key mode


def _random_small(rng, n, k, cap):
    while True:
        gens = rng.integers(0, n, size=(k, n))
        if brute_bfs(gens, cap) is not None:
            return gens


@pytest.mark.parametrize("seed", range(6))
def test_dense_mode_matches_brute_force(seed):
    rng = np.random.default_rng([33, seed])
    n, k = int(rng.integers(1, 6)), int(rng.integers(1, 4))
    gens = _random_small(rng, n, k, 400)
    M = TransitionMonoid(gens)
    assert M._keys.mode == "dense"
    check_engine(M, gens)


@pytest.mark.parametrize("seed", range(3))
def test_int64_mode_matches_brute_force(seed):
    rng = np.random.default_rng([34, seed])
    n = int(rng.integers(9, 13))
    gens = _random_small(rng, n, 2, 300)
    M = TransitionMonoid(gens)
    assert M._keys.mode == "int64"
    check_engine(M, gens)


def test_int64_mode_for_small_n_with_small_max_elements():
    # n = 6: 6^6 = 46656 = 64 · 729 table entries; dense needs 64 entries per allowed element (module docstring)
    gens = np.array([[1, 2, 0, 4, 5, 3], [0, 0, 2, 3, 4, 4]])
    size = len(brute_bfs(gens)[0])
    assert size <= 728
    M = TransitionMonoid(gens, max_elements=728)
    assert M._keys.mode == "int64"
    check_engine(M, gens)
    M = TransitionMonoid(gens, max_elements=729)
    assert M._keys.mode == "dense"
    check_engine(M, gens, full=False)
    assert TransitionMonoid([[1, 2, 3, 4, 0]], max_elements=48)._keys.mode == "int64"  # 64·48 < 5^5


@pytest.mark.parametrize("seed", range(3))
def test_hash_mode_matches_brute_force(seed):
    rng = np.random.default_rng([35, seed])
    n = int(rng.integers(16, 21))
    perm = rng.permutation(n)
    gens = np.stack([perm, _random_small(rng, n, 1, 200)[0]])
    if brute_bfs(gens, 500) is None:
        gens = np.stack([perm, np.zeros(n, dtype=int)])
    M = TransitionMonoid(gens)
    assert M._keys.mode == "hash" and not M._keys.exact
    check_engine(M, gens)


def test_hash_mode_cycles_and_long_images():
    n = 18
    cyc = np.roll(np.arange(n), -1)
    gens = np.stack([cyc, np.arange(n)[::-1], np.zeros(n, dtype=int)])  # D18 and the constants
    M = TransitionMonoid(gens, max_elements=5000)
    assert M._keys.mode == "hash"
    check_engine(M, gens, full=False)
    for n in (64, 65, 70):  # the n > 64 branches of the keys
        gens = np.stack([np.roll(np.arange(n), -1), np.zeros(n, dtype=int)])
        M = TransitionMonoid(gens)
        assert M._keys.mode == "hash"
        check_engine(M, gens, full=False)


def test_automaton_source_and_limits_name_the_symbol():
    a = Automaton([[1, 2, 0], [0, 0, 2]], states=["p", "q", "r"], symbols=["a", "b"])
    M = TransitionMonoid(a)
    check_engine(M, np.asarray(a.transitions))
    assert M.automaton is a
    assert repr(M) == f"TransitionMonoid(size={len(brute_bfs(np.asarray(a.transitions))[0])}, states=3, generators=2)"
    # the 3-cycle 'a' has 3 powers: refused at once when the limit is 2, with the symbol's name
    with pytest.raises(LimitExceededError, match=r"at least 3 elements \(the powers of symbol 'a'\)"):
        TransitionMonoid(a, max_elements=2)


def test_full_transformation_generators():
    for n in range(1, 5):
        gens = full_transformation_generators(n)
        order = brute_bfs(gens)[0]
        assert len(order) == n**n
        assert sorted(gens[0]) == list(range(n)) and all(gens[0][i] == (i + 1) % n for i in range(n))
        M = TransitionMonoid(gens)
        check_engine(M, gens, full=n <= 3)
    g = full_transformation_generators(2)
    assert g[1].tolist() == [1, 0] and g[2].tolist() == [0, 0]


def test_d_classes_partition_by_ideals():
    gens = np.array([[1, 2, 0, 3], [0, 0, 2, 3], [3, 3, 3, 3]])
    M = TransitionMonoid(gens)
    order = brute_bfs(gens)[0]

    def ideal(a):
        return frozenset(tuple(t[v] for v in tuple(a[u] for u in s)) for s in order for t in order)

    ideals = [ideal(a) for a in order]
    classes = M.D_classes()
    assert sorted(int(i) for c in classes for i in c) == list(range(len(order)))
    assert len(classes) == M.number_of_D_classes == len(set(ideals))
    for c in classes:
        assert len({ideals[int(i)] for i in c}) == 1


def test_index_rejects_out_of_range_and_shapes():
    gens = np.array([[1, 2, 0], [0, 0, 2]])
    M = TransitionMonoid(gens)
    assert M.index(np.array([0, 1, 3])) == -1  # an image equal to n
    assert M.index(np.array([0, -1, 1])) == -1
    assert list(M.index(np.array([[0, 1, 3], [0, 1, 2]]))) == [-1, -1]
    assert list(M.index(np.array([[0, 1, 2], [-1, 1, 2]]))) == [-1, -1]
    with pytest.raises(SpecError):
        M.index(np.array([0, 1]))
    n = 17  # hash mode: a non-member's key that is absent, and members
    gens = np.stack([np.roll(np.arange(n), -1)])
    M = TransitionMonoid(gens)
    assert M._keys.mode == "hash"
    assert M.index(np.zeros(n, dtype=int)) == -1
    assert list(M.index(np.stack([np.zeros(n, dtype=int), np.arange(n)]))) == [-1, 0]
    assert M.index(np.arange(n)) == 0
    assert list(M.index(np.stack([np.roll(np.arange(n), -1), np.arange(n)]))) == [1, 0]


def test_spec_errors():
    with pytest.raises(SpecError):
        TransitionMonoid([[0, 3, 1]])
    with pytest.raises(SpecError):
        TransitionMonoid([[0, -1, 1]])
    TransitionMonoid([[0, 2, 1]])


def test_multiplication_table_limit():
    gens = np.array([[1, 2, 0]])
    M = TransitionMonoid(gens)
    assert M.multiplication_table(limit=3).shape == (3, 3)
    with pytest.raises(LimitExceededError, match="limit of 2"):
        M.multiplication_table(limit=2)


# ---------------------------------------------------------------- the hash table


def _fib_slot(key: int, bits: int) -> int:
    getcontext().prec = 60
    phi = (1 + Decimal(5).sqrt()) / 2
    mult = int(Decimal(2**64) / phi)  # Fibonacci hashing: ⌊2^64/φ⌋
    return ((key % 2**64) * mult % 2**64) >> (64 - bits)


def _check_table(t: _HashTable, ref: dict) -> None:
    assert len(t.ids) == len(t.keys) == 1 << t.bits
    assert t.count == len(ref)
    assert 2 * t.count <= len(t.ids)  # doubles past a load of 1/2
    assert int((t.ids == -1).sum()) == len(t.ids) - len(ref)  # empty slots hold -1
    keys = np.array(list(ref), dtype=t.keys.dtype)
    if len(keys):
        assert t.find(keys).tolist() == [ref[int(v)] for v in keys]


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_hash_table_keys_sharing_a_home_slot_with_id_zero(dtype):
    """Linear probing past a slot that holds id 0 (the identity's): the slot is occupied, never reused."""
    t = _HashTable(np.dtype(dtype), bits=6)
    candidates = np.arange(1, 20_000, dtype=dtype)
    home = t._slot(candidates)
    same = candidates[home == home[0]][:5]  # five keys with one home slot
    assert len(same) == 5
    t.add(same[:1], np.array([0]))
    for i, key in enumerate(same[1:], start=1):  # one at a time: each probes past the occupied slots
        t.add(np.array([key], dtype=dtype), np.array([i]))
    assert t.find(same).tolist() == [0, 1, 2, 3, 4]
    assert t.find(np.array([0], dtype=dtype)).tolist() == [-1]


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_hash_table_against_dict(dtype):
    rng = np.random.default_rng(7)
    t = _HashTable(np.dtype(dtype), bits=4)
    assert len(t.ids) == 16 and t.count == 0 and (t.ids == -1).all()
    ref: dict = {}
    # 8 keys in a 16-slot table: load 1/2 exactly, no growth yet
    first = rng.choice(1 << 40, size=8, replace=False).astype(dtype)
    t.add(first, np.arange(8))
    ref.update({int(v): i for i, v in enumerate(first)})
    assert t.bits == 4
    _check_table(t, ref)
    # one more: grows to the least power of two ≥ 4 · 9 (load 1/4 after growing)
    extra = np.array([int(first.max()) + 1], dtype=dtype)
    t.add(extra, np.array([8]))
    ref[int(extra[0])] = 8
    assert t.bits == 6
    _check_table(t, ref)
    for need_batch in (7, 55, 200, 1000):
        fresh = []
        while len(fresh) < need_batch:
            v = int(rng.integers(0, 1 << 62))
            if v not in ref and v not in fresh:
                fresh.append(v)
        old_bits, old_count = t.bits, t.count
        t.add(np.array(fresh, dtype=dtype), np.arange(len(ref), len(ref) + need_batch))
        for i, v in enumerate(fresh):
            ref[v] = old_count + i
        need = old_count + need_batch
        if 2 * need > (1 << old_bits):
            assert t.bits == max(old_bits, math.ceil(math.log2(4 * need)))
        else:
            assert t.bits == old_bits
        _check_table(t, ref)
    absent = np.array([v for v in rng.integers(0, 1 << 62, 300).tolist() if v not in ref], dtype=dtype)
    assert (t.find(absent) == -1).all()
    assert t.find(np.array([], dtype=dtype)).tolist() == []


def test_hash_table_slots_are_fibonacci_hashing_and_collisions_probe():
    bits = 6
    t = _HashTable(np.dtype(np.uint64), bits=bits)
    rng = np.random.default_rng(3)
    cand = rng.integers(0, 1 << 62, 4000).astype(np.uint64)
    slots = t._slot(cand)
    assert slots.tolist() == [_fib_slot(int(v), bits) for v in cand]
    assert slots.dtype == np.int64
    # 5 keys sharing the last slot (probing wraps to slot 0) and 5 sharing slot 0, in one batch
    last = [int(v) for v in cand[slots == (1 << bits) - 1][:5]]
    zero = [int(v) for v in cand[slots == 0][:5]]
    assert len(last) == 5 and len(zero) == 5
    keys = np.array(last + zero, dtype=np.uint64)
    t.add(keys, np.arange(10))
    ref = {v: i for i, v in enumerate(last + zero)}
    _check_table(t, ref)
    others = [int(v) for v in cand[slots == 0][5:15]]
    assert (t.find(np.array(others, dtype=np.uint64)) == -1).all()


def test_hash_table_growth_to_an_exact_power_of_two():
    t = _HashTable(np.dtype(np.int64), bits=4)
    t.add(np.arange(8), np.arange(8))
    assert t.bits == 4
    t.add(np.arange(8, 16), np.arange(8, 16))  # need 16: 4 · 16 = 64 slots exactly
    assert t.bits == 6
    _check_table(t, {i: i for i in range(16)})


def test_hash_table_id_zero_survives_growth():
    t = _HashTable(np.dtype(np.int64), bits=3)
    t.add(np.array([5, -7, 11]), np.array([0, 1, 2]))
    t.add(np.arange(100, 140), np.arange(3, 43))
    assert t.find(np.array([5, -7, 11, 100, 139, 99])).tolist() == [0, 1, 2, 3, 42, -1]
    assert t.count == 43


# ---------------------------------------------------------------- keys


def test_key_modes_documented_boundaries():
    assert [_Keys(n).mode for n in range(1, 9)] == ["dense"] * 8  # n^n ≤ 2^25 (docs/monoid.md)
    assert [_Keys(n).mode for n in range(9, 16)] == ["int64"] * 7  # n^n < 2^63
    assert [_Keys(n).mode for n in (16, 20, 64, 65)] == ["hash"] * 4
    assert _Keys(5, dense_limit=3125).mode == "dense" and _Keys(5, dense_limit=3124).mode == "int64"
    assert _Keys(3).exact and _Keys(10).exact and _Keys(16).exact is False
    assert len(_Keys(4).table) == 256


def test_hash_weights_are_odd_and_seeded():
    a, b = _Keys(20, seed=0), _Keys(20, seed=1)
    assert a.weights.dtype == np.uint64
    assert (a.weights % 2 == 1).all() and (b.weights % 2 == 1).all()  # invertible mod 2^64
    assert not np.array_equal(a.weights, b.weights)
    assert np.array_equal(_Keys(20).weights, a.weights)  # the default is seed 0
    assert np.array_equal(_Keys(20, seed=1).weights, b.weights)


def _direct_key(row, w, mode):
    if mode == "hash":
        return sum(int(r) * int(x) for r, x in zip(row, w)) % 2**64
    return sum(int(r) * int(x) for r, x in zip(row, w))


@pytest.mark.parametrize("n", [1, 4, 7, 12, 16, 64, 65, 70])
def test_keys_encode_against_formulas(n):
    keys = _Keys(n)
    rng = np.random.default_rng(n)
    if keys.mode != "hash":
        assert [int(v) for v in keys.weights] == [n**i for i in range(n)]
    rows = rng.integers(0, n, size=(9, n)).astype(mono._image_dtype(n))
    w = keys.weights
    direct = [_direct_key(r, w, keys.mode) for r in rows]
    assert [int(v) for v in keys.encode(rows)] == direct
    t = rng.integers(0, n, n).astype(rows.dtype)
    prods = t[rows]
    assert [int(v) for v in keys.encode_products(rows, t)] == [_direct_key(r, w, keys.mode) for r in prods]
    cols = rng.integers(0, n, n)
    assert [int(v) for v in keys.encode_columns(rows, cols)] == [_direct_key(r, w, keys.mode) for r in rows[:, cols]]
    # dedup: one representative per distinct key (first occurrence, increasing) and each key's rank
    codes = keys.encode(rows[rng.integers(0, len(rows), 30)])
    reps, rank = keys.dedup(codes)
    distinct = set(codes.tolist())
    assert len(reps) == len(distinct) and {int(codes[r]) for r in reps} == distinct
    assert reps.tolist() == sorted(reps.tolist())
    assert codes[reps[rank]].tolist() == codes.tolist()
    # add / find; after dedup the dense table is empty again
    assert (keys.find(codes) == -1).all()
    keys.add(codes[reps], np.arange(len(reps), dtype=np.int32))
    assert keys.find(codes).tolist() == rank.tolist()
    if keys.mode == "dense":
        assert int((keys.table == -1).sum()) == len(keys.table) - len(reps)


def test_image_dtype():
    assert [mono._image_dtype(n) for n in (1, 256, 257, 65536, 65537)] == [
        np.uint8,
        np.uint8,
        np.uint16,
        np.uint16,
        np.int32,
    ]


def test_power_at_most():
    assert mono._power_at_most(3, 27) == 27 and mono._power_at_most(3, 26) is None
    assert mono._power_at_most(1, 1) == 1 and mono._power_at_most(70, 10**200) is None
    # the cut-off sits at n = 64 exactly: 64^64 = 2^384 is computed, 65^65 (about 2^391) never is
    assert mono._power_at_most(64, 2**384) == 2**384 and mono._power_at_most(64, 2**384 - 1) is None
    assert mono._power_at_most(65, 10**200) is None


# ---------------------------------------------------------------- powers_count


def brute_powers(t) -> int:
    t = [int(v) for v in t]
    seen, cur = set(), tuple(range(len(t)))
    while cur not in seen:
        seen.add(cur)
        cur = tuple(t[v] for v in cur)
    return len(seen)


def test_powers_count_against_iteration():
    rng = np.random.default_rng(11)
    cases = [np.arange(n) for n in (1, 2, 5)]  # identities
    cases += [np.zeros(n, dtype=int) for n in (1, 2, 9)]  # constants
    cases += [np.roll(np.arange(n), -1) for n in (1, 3, 8, 16, 17)]  # cycles
    cases += [np.maximum(np.arange(n) - 1, 0) for n in (2, 3, 4, 7, 8, 9, 16, 17, 33)]  # long tails
    for n in (5, 9, 13):  # a tail of length n - 3 into a 3-cycle
        t = np.arange(n) - 1
        t[:3] = [1, 2, 0]
        t[3] = 0
        cases.append(t)
    for tail in range(1, 30):  # two cycles and a tail into the first: the tail is longer than half of n
        for c1, c2 in ((2, 3), (1, 2), (3, 4)):
            n = c1 + c2 + tail
            t = np.arange(n)
            t[:c1] = np.roll(np.arange(c1), -1)
            t[c1 : c1 + c2] = np.roll(np.arange(c1, c1 + c2), -1)
            t[c1 + c2 :] = np.arange(c1 + c2 - 1, n - 1)
            t[c1 + c2] = 0
            cases.append(t)
    for _ in range(150):
        n = int(rng.integers(1, 25))
        cases.append(rng.permutation(n) if rng.random() < 0.3 else rng.integers(0, n, n))
    for t in cases:
        assert powers_count(t) == brute_powers(t), t.tolist()


# ---------------------------------------------------------------- the memory plan


def _documented_bpe(n: int, k: int, hashed: bool) -> int:
    """Module docstring and the constants' comments: image (n × index width), right Cayley graph (4·k), BFS tree (8),
    hash slots (at most 8 of 12 bytes plus the old table while growing: 10 · 12), Green's (4·k + 24·k + 64)."""
    width = 1 if n <= 256 else 2 if n <= 65536 else 4
    return n * width + 4 * k + 8 + (10 * 12 if hashed else 0) + (4 + 24) * k + 64


def _documented_limit(n, k, max_elements, max_bytes):
    chunk = max(k * n, min(1 << 23, max_bytes // (8 * 24)))  # CHUNK_ENTRIES, 24 working bytes per entry
    dense_limit = min(1 << 25, 64 * max_elements)
    table = n**n if n <= 64 and n**n <= dense_limit else 0
    fixed = chunk * 24 + 4 * table
    bpe = _documented_bpe(n, k, table == 0)
    return min(max_elements, max(0, max_bytes - fixed) // bpe), bpe


@pytest.mark.parametrize(
    "n,k,max_elements,max_bytes",
    [(3, 1, 10**6, 10**6), (3, 2, 100, 10**7), (12, 2, 10**9, 3 * 10**6), (20, 3, 10**9, 5 * 10**6),
     (300, 1, 10**9, 10**7), (4, 2, 10**9, 2 * 10**5), (6, 1, 10**9, 10**6), (20, 3, 10**9, 192 * 30)],
)  # fmt: skip
def test_bytes_per_element_and_element_limit(n, k, max_elements, max_bytes):
    gens = np.stack([np.arange(n)] * k)
    M = TransitionMonoid(gens, max_elements=max_elements, max_bytes=max_bytes)
    limit, bpe = _documented_limit(n, k, max_elements, max_bytes)
    assert M.bytes_per_element() == bpe
    assert M.element_limit == limit


def test_defaults_are_documented():
    M = TransitionMonoid([[1, 2, 0]])
    assert M.max_elements == 2**25 and M.element_limit == 2**25  # README: up to 2^25 elements
    assert M.max_bytes == 6 * 2**30
    n = 100  # a permutation with lcm(2, 3, 5, …, 23) powers: refused at once under the default 6 GiB
    perm, start = np.arange(n), 0
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23):
        perm[start : start + p] = np.roll(np.arange(start, start + p), -1)
        start += p
    limit, bpe = _documented_limit(n, 1, 2**25, 6 * 2**30)
    assert limit < 2**25
    msg = (
        f"transition monoid has at least {223092870:,} elements (the powers of symbol '0'), over the {limit:,} "
        f"elements that the memory limit of 6 GiB holds at {bpe:,} bytes each (100 states)"
    )
    with pytest.raises(LimitExceededError) as exc:
        TransitionMonoid([perm])
    assert str(exc.value) == msg


def test_limit_boundaries():
    cyc5 = [np.roll(np.arange(5), -1)]  # 5 powers, monoid of 5 elements
    assert len(TransitionMonoid(cyc5, max_elements=5)) == 5
    with pytest.raises(
        LimitExceededError,
        match=r"^transition monoid has at least 5 elements \(the powers of symbol '0'\), over the element limit of 4$",
    ):
        TransitionMonoid(cyc5, max_elements=4)
    # at_least: at the limit it is accepted, above it refused at once
    assert len(TransitionMonoid(cyc5, max_elements=6, at_least=6)) == 5
    with pytest.raises(
        LimitExceededError, match=r"^transition monoid has at least 7 elements, over the element limit of 6$"
    ):
        TransitionMonoid(cyc5, max_elements=6, at_least=7)
    # the limit hit during the enumeration: two 2-cycles generating 4 elements... powers only 2
    gens = np.array([[1, 0, 2, 3], [0, 1, 3, 2]])  # C2 × C2: 4 elements, each generator 2 powers
    assert len(TransitionMonoid(gens, max_elements=4)) == 4
    with pytest.raises(
        LimitExceededError, match=r"^transition monoid has at least 4 elements, over the element limit of 3$"
    ):
        TransitionMonoid(gens, max_elements=3)
    # the memory-limited message
    mb = next(b for b in range(1000, 10**6, 7) if _documented_limit(4, 2, 10**9, b)[0] == 3)
    limit, bpe = _documented_limit(4, 2, 10**9, mb)
    assert limit == 3
    with pytest.raises(LimitExceededError) as exc:
        TransitionMonoid(gens, max_bytes=mb)
    assert str(exc.value) == (
        f"transition monoid has at least 4 elements, over the 3 elements that the memory limit of "
        f"{mb / 2**30:.3g} GiB holds at {bpe:,} bytes each (4 states)"
    )


# ---------------------------------------------------------------- collisions, growth, chunks


def _equal_weights(monkeypatch, collide) -> list[int]:
    """Patch _Keys so that the attempts whose seed ``collide`` accepts get all-equal hash weights (every permutation
    of a row then collides); the seeds tried, in order."""
    seeds = []
    real_init = _Keys.__init__

    def init(self, n, seed=0, dense_limit=mono.DENSE_LIMIT):
        real_init(self, n, seed, dense_limit)
        seeds.append(seed)
        if collide(seed) and self.mode == "hash":
            self.weights = np.ones(n, dtype=np.uint64)

    monkeypatch.setattr(_Keys, "__init__", init)
    return seeds


def test_forced_hash_collision_retries_with_next_seed(monkeypatch):
    seeds = _equal_weights(monkeypatch, lambda seed: seed == 0)
    n = 16
    gens = np.stack([np.roll(np.arange(n), -1), np.arange(n)[::-1].copy()])  # the dihedral group D16
    M = TransitionMonoid(gens)
    assert seeds == [0, 1]
    check_engine(M, gens, full=False)


def test_collisions_in_every_attempt(monkeypatch):
    seeds = _equal_weights(monkeypatch, lambda seed: True)
    n = 16
    with pytest.raises(LimitExceededError, match="collisions"):
        TransitionMonoid([np.roll(np.arange(n), -1)])
    assert seeds == list(range(mono.HASH_RETRIES))


def test_collision_between_new_products_is_detected(monkeypatch):
    # weights that collide only among new products of one step (a first hit on the table is verified as well)
    real_init = _Keys.__init__

    def init(self, n, seed=0, dense_limit=mono.DENSE_LIMIT):
        real_init(self, n, seed, dense_limit)
        if seed == 0:
            self.weights = np.ones(n, dtype=np.uint64)

    monkeypatch.setattr(_Keys, "__init__", init)
    n = 16
    a, b = np.arange(n), np.arange(n)
    a[0] = 1  # sum 121
    b[1] = 2  # sum 121: a and b collide with each other, not with the identity (sum 120)
    gens = np.stack([a, b])
    M = TransitionMonoid(gens)
    check_engine(M, gens)


def test_index_verifies_hash_hits():
    n = 16
    M = TransitionMonoid([np.zeros(n, dtype=int)])  # {identity (sum 120), constant 0 (sum 0)}
    assert M._keys.mode == "hash"
    # re-key the members with all-equal weights: a non-member then shares the identity's key
    M._keys.weights = np.ones(n, dtype=np.uint64)
    M._keys.index = _HashTable(np.dtype(np.uint64), bits=4)
    M._keys.add(M._keys.encode(M.elements), np.arange(len(M), dtype=np.int32))
    swap = np.arange(n)
    swap[[0, 1]] = [1, 0]
    assert M.index(swap) == -1
    assert M.index(np.arange(n)) == 0 and M.index(np.zeros(n, dtype=int)) == 1
    assert M.index(np.stack([swap, np.zeros(n, dtype=int), np.arange(n)])).tolist() == [-1, 1, 0]


LATER: list = []  # key lookups after the enumeration (the left Cayley graph's steps)


def _spy_capacities(monkeypatch):
    """Record, at every key lookup of the enumeration, the capacities of its four growing arrays and the step size."""
    seen = []
    real_find = _Keys.find

    def find(self, keys):
        frame = inspect.currentframe().f_back
        owner = frame.f_locals.get("self")
        if isinstance(owner, TransitionMonoid) and hasattr(owner, "_arrays"):
            caps = {name: len(a) for name, a in owner._arrays.items()}
            seen.append((caps, len(keys), owner.element_limit, owner.n_states))
        elif frame.f_code.co_name == "left_cayley":
            LATER.append(len(keys))
        return real_find(self, keys)

    monkeypatch.setattr(_Keys, "find", find)
    return seen


def test_arrays_never_exceed_the_element_limit(monkeypatch):
    seen = _spy_capacities(monkeypatch)
    for gens, me in [([[0, 1, 2]], 1), ([[1, 0, 2]], 2), (full_transformation_generators(4), 256),
                     (full_transformation_generators(5), 3125), ([[1, 2, 0]], 10**6)]:  # fmt: skip
        seen.clear()
        M = TransitionMonoid(gens, max_elements=me)
        assert seen
        for caps, _, limit, _ in seen:
            assert len(set(caps.values())) == 1  # the four arrays grow together
            assert next(iter(caps.values())) <= max(1, limit)  # the limit holds for the real peak
        check_engine(M, gens, full=False) if me < 3125 else None


C32xC32 = np.concatenate([np.stack([np.roll(np.arange(32), -1), np.arange(32)]),
                          np.stack([np.arange(32, 64), np.roll(np.arange(32, 64), -1)])], axis=1)  # fmt: skip


def test_reserve_doubles_up_to_the_limit(monkeypatch):
    calls = []
    real = TransitionMonoid._reserve

    def reserve(self, need):
        before = len(self._arrays["parent"])
        real(self, need)
        after = {name: len(a) for name, a in self._arrays.items()}
        calls.append((before, need, after, self.element_limit))

    monkeypatch.setattr(TransitionMonoid, "_reserve", reserve)
    for gens, me in [(full_transformation_generators(5), 3125), (full_transformation_generators(5), 3000 * 2),
                     (full_transformation_generators(4), 1024), (C32xC32, 10**6)]:  # fmt: skip
        calls.clear()
        M = TransitionMonoid(gens, max_elements=me)
        assert len(M) == len(brute_bfs(gens)[0])
        assert any(need > before for before, need, _, _ in calls) or len(M) <= 1024
        for before, need, after, limit in calls:
            assert len(set(after.values())) == 1
            cap = next(iter(after.values()))
            if need <= before:
                assert cap == before
            else:
                assert cap == min(max(need, 2 * before), max(need, limit))


def test_chunked_enumeration(monkeypatch):
    seen = _spy_capacities(monkeypatch)
    for chunk_entries in (1, 8, 30):
        monkeypatch.setattr(mono, "CHUNK_ENTRIES", chunk_entries)
        for gens in (full_transformation_generators(3), np.array([[1, 2, 3, 0], [0, 0, 2, 3]]),
                     np.stack([np.roll(np.arange(16), -1), np.arange(16)[::-1], np.zeros(16, dtype=int)])):  # fmt: skip
            seen.clear()
            M = TransitionMonoid(gens, max_elements=10**5)
            k, n = np.shape(gens)
            steps = max(k * n, chunk_entries)
            for _, codes, _, _ in seen:
                assert codes * n <= steps  # at most CHUNK_ENTRIES image entries per step (one row at least)
            assert len(seen) > len(M.layer_sizes)  # several steps per layer
            LATER.clear()
            check_engine(M, gens, full=False)
            assert LATER and max(LATER) <= max(1, chunk_entries // n)  # the left Cayley graph's steps too


@pytest.mark.parametrize("n", [12, 20])
def test_element_limit_exactly_at_a_multiple(n):
    """max_bytes − working buffers an exact multiple of the bytes per element (no dense table in int64/hash mode)."""
    k = 2
    bpe = _documented_bpe(n, k, True)
    mb = next(b for b in range(10**6, 10**6 + 200 * bpe) if (b - max(k * n, b // (8 * 24)) * 24) % bpe == 0)
    limit, _ = _documented_limit(n, k, 10**9, mb)
    assert (mb - max(k * n, mb // (8 * 24)) * 24) == limit * bpe
    M = TransitionMonoid(np.stack([np.arange(n)] * k), max_elements=10**9, max_bytes=mb)
    assert M.element_limit == limit
