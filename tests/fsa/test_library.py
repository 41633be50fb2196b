"""The builtin catalogue and the word-problem builders, checked against independent oracles: sympy's permutation
groups, libsemigroups (monoid sizes), Python's own evaluation of expressions, and brute force on small cases."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
from cases import CASES, SMALL_CASES, case_automaton
from sympy.combinatorics import Permutation, PermutationGroup

from fsa2rnn.fsa import (
    LimitExceededError,
    NotAGroupError,
    SpecError,
    UnknownBuiltinError,
    resolve_spec,
)
from fsa2rnn.fsa.library.builtins import CATALOGUE
from fsa2rnn.fsa.library.tasks import modular_value
from fsa2rnn.fsa.library.word_problems import transformation_automaton, word_problem


def _parse_cycles(name: str, degree: int) -> Permutation:
    """Independent parser of cycle notation "(0 1 2)(3 4)" / "e"."""
    if name == "e":
        return Permutation(list(range(degree)))
    cycles = [[int(v) for v in c.split()] for c in re.findall(r"\(([^)]*)\)", name)]
    return Permutation(cycles, size=degree)


def _monoid_size(a) -> int:
    """|transition monoid| by an oracle: sympy's group order, or libsemigroups' Froidure–Pin enumeration."""
    if a.is_group_automaton:
        # the regular representation on thousands of states is slow in sympy: use the natural action when the
        # states are the group elements (test_word_problem_state_is_product_of_letters checks it agrees with δ)
        rows = a.transitions
        if a.n_states > 1000 and a.action is not None:
            rows = a.action
        return PermutationGroup([Permutation(list(map(int, row))) for row in rows]).order()
    lsg = pytest.importorskip("libsemigroups_pybind11")
    guard = lsg.ReportGuard(False)  # noqa: F841 - silences libsemigroups' progress reports
    gens = [lsg.Transf([int(v) for v in row]) for row in a.transitions]
    # the monoid includes the identity (the empty word)
    gens.append(lsg.Transf(list(range(a.n_states))))
    return lsg.FroidurePin(gens).size()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_facts(case):
    a = case_automaton(case)
    assert a.n_states == case.n_states
    assert a.n_symbols == case.n_symbols
    assert a.is_group_automaton == case.is_group
    assert (a.accepting is not None) == case.has_accepting
    assert a.initial is not None
    if case.monoid_size is not None:
        assert _monoid_size(a) == case.monoid_size


@pytest.mark.parametrize("case", [c for c in CASES if c.idempotents is not None], ids=lambda c: c.name)
def test_case_idempotents_match_libsemigroups(case):
    """The table's published idempotent counts hold for the builtin as built (so other stages can rely on them)."""
    lsg = pytest.importorskip("libsemigroups_pybind11")
    guard = lsg.ReportGuard(False)  # noqa: F841
    a = case_automaton(case)
    gens = [lsg.Transf([int(v) for v in row]) for row in a.transitions] + [lsg.Transf(list(range(a.n_states)))]
    assert lsg.FroidurePin(gens).number_of_idempotents() == case.idempotents


@pytest.mark.parametrize("case", SMALL_CASES, ids=lambda c: c.name)
def test_case_round_trips_through_json(case):
    a = case_automaton(case)
    b = type(a).from_json(a.to_json())
    assert b == a and b.name == a.name


def test_catalogue_examples_resolve_and_are_named():
    for entry in CATALOGUE:
        a = resolve_spec(entry.example)
        assert a.name == entry.example or entry.example.startswith(a.name.split(":")[0])


# D20 and S4 also exercise the enumeration from a generating subset (> 8 symbols); D20 the degree > 15 path
WORD_PROBLEMS = ["S3", "S4", "D20", "S4:gens", "S5:swaps", "S5:s3", "A5", "D5:gens", "PSL(2,7):gens", "M11", "Z6:gen"]


@pytest.mark.parametrize("spec", WORD_PROBLEMS)
def test_word_problem_state_is_product_of_letters(spec):
    """The state after w = x1…xk is the product x1·x2·…·xk (sympy composes left to right, like the product of
    docs/theory.md)."""
    a = resolve_spec(spec)
    assert a.action is not None
    d = a.action.shape[1]
    rng = np.random.default_rng(1)
    words = rng.integers(0, a.n_symbols, size=(20, 30))
    states = a.run(words)
    for w, path in zip(words, states):
        prod = Permutation(list(range(d)))
        for t, x in enumerate(w):
            prod = prod * Permutation(list(map(int, a.action[x])))
            if spec.startswith("Z"):
                assert prod.array_form[0] == int(a.states[path[t]])
            else:
                assert _parse_cycles(a.states[path[t]], d) == prod


def test_symbol_names_are_the_permutations():
    a = resolve_spec("S4")
    for x, name in enumerate(a.symbols):
        assert _parse_cycles(name, 4).array_form == a.action[x].tolist()
    assert a.states[a.initial] == "e"


def test_s5_variants_match_the_paper():
    """Negative-eigenvalues paper, App. E.2: swaps = permutations moving <= 2 points; s3 = moving <= 3 points."""
    for spec, k in (("S5:swaps", 2), ("S5:s3", 3)):
        a = resolve_spec(spec)
        moved = np.sum(a.action != np.arange(5), axis=1)
        assert moved.max() == k
        expected = sum(1 for p in itertools.permutations(range(5)) if sum(i != v for i, v in enumerate(p)) <= k)
        assert a.n_symbols == expected


def test_alternating_symbols_are_even():
    a = resolve_spec("A5")
    assert all(Permutation(list(map(int, row))).is_even for row in a.action)


def test_m11_generators_have_the_atlas_order():
    a = resolve_spec("M11")
    group = PermutationGroup([Permutation(list(map(int, row))) for row in a.action])
    assert group.order() == 7920 == a.n_states
    assert group.is_transitive() and group.degree == 11


def test_quaternion_relations():
    a = resolve_spec("Q8")

    def mul(u, v):
        return a.states[a.transitions[a.symbol_index(v), a.state_index(u)]]

    assert mul("i", "i") == mul("j", "j") == mul("k", "k") == "-1"
    assert mul("i", "j") == "k" and mul("j", "i") == "-k"
    assert mul("j", "k") == "i" and mul("k", "i") == "j"
    assert all(mul("-1", g) == mul(g, "-1") for g in a.states)
    group = PermutationGroup([Permutation(list(map(int, row))) for row in a.transitions])
    assert group.order() == 8 and not group.is_abelian
    assert sum(1 for g in group.elements if g.order() == 2) == 1  # Q8, not D8


def test_dihedral_is_the_symmetry_group_of_the_polygon():
    a = resolve_spec("D6")
    edges = {frozenset((i, (i + 1) % 6)) for i in range(6)}
    for row in a.action:
        assert {frozenset((int(row[u]), int(row[v]))) for u, v in map(tuple, edges)} == edges
    assert a.n_symbols == 12


def test_cyclic_and_cycle_nav_add():
    z = resolve_spec("Z7")
    rng = np.random.default_rng(2)
    w = rng.integers(0, 7, size=50)
    assert np.array_equal(z.run(w), np.cumsum(w) % 7)
    c = resolve_spec("cycle_nav")
    moves = rng.integers(0, 3, size=50)
    step = np.array([1, -1, 0])[moves]
    assert np.array_equal(c.run(moves), np.cumsum(step) % 5)


def test_parity_counts_ones():
    a = resolve_spec("parity")
    for w in itertools.product("01", repeat=6):
        assert a.accepts(list(w)) == (w.count("1") % 2 == 1)


def test_flipflop_remembers_the_last_write():
    a = resolve_spec("flipflop:3")
    for w in itertools.product(["w0", "w1", "w2", "read"], repeat=4):
        writes = [int(x[1]) for x in w if x != "read"]
        assert int(a.states[a.final_state(list(w))]) == (writes[-1] if writes else 0)
    ff = resolve_spec("flipflop")
    assert ff.states[ff.final_state(["set", "read", "read"])] == "1"
    assert ff.states[ff.final_state(["set", "reset", "read"])] == "0"


def test_full_transformation_generators():
    a = resolve_spec("T5")
    assert a.transitions[a.symbol_index("cycle")].tolist() == [1, 2, 3, 4, 0]
    assert a.transitions[a.symbol_index("swap")].tolist() == [1, 0, 2, 3, 4]
    assert a.transitions[a.symbol_index("collapse")].tolist() == [0, 0, 2, 3, 4]


def test_even_pairs_brute_force():
    a = resolve_spec("even_pairs")
    for n in range(7):
        for w in itertools.product("ab", repeat=n):
            s = "".join(w)
            pairs = sum(1 for i in range(n - 1) if s[i] != s[i + 1])
            assert a.accepts(list(w)) == (pairs % 2 == 0), s


def test_gridworld_clips_at_walls():
    a = resolve_spec("gridworld:3")
    rng = np.random.default_rng(3)
    moves = rng.integers(0, 4, size=200)
    r = c = 0
    path = a.run(moves)
    for x, q in zip(moves, path):
        dr, dc = {"N": (-1, 0), "S": (1, 0), "E": (0, 1), "W": (0, -1)}[a.symbols[x]]
        r, c = min(max(r + dr, 0), 2), min(max(c + dc, 0), 2)
        assert a.states[q] == f"({r},{c})"
    assert a.factors is not None and len(a.factors) == 2


@pytest.mark.parametrize("m", [2, 5, 7])
def test_modular_arithmetic_matches_python_evaluation(m):
    """The running value equals Python's evaluation of the prefix (same precedence and associativity) mod m."""
    a = resolve_spec(f"modarith:{m}")
    rng = np.random.default_rng(m)
    for _ in range(200):
        n_ops = int(rng.integers(0, 8))
        tokens = [str(rng.integers(0, m))]
        for _ in range(n_ops):
            tokens += [str(rng.choice(["+", "-", "*"])), str(rng.integers(0, m))]
        path = a.run(tokens)
        for t in range(0, len(tokens), 2):
            assert modular_value(a.states[path[t]], m) == eval("".join(tokens[: t + 1])) % m
        final = a.states[a.final_state(tokens + ["="])]
        assert final == f"={eval(''.join(tokens)) % m}"
    for bad in (["+"], ["1", "0"], ["1", "+", "*"], ["1", "=", "1"]):
        assert a.states[a.final_state(bad)] == "err"


def test_modarith_is_minimal_for_its_readout():
    """No two states have the same future outputs: all 2m²+3m+2 states are needed (checked with accepting set =
    each value's states in turn, which refines Nerode classes to the readout's)."""
    from fsa2rnn.fsa.minimize import nerode_classes

    m = 3
    a = resolve_spec(f"modarith:{m}")
    labels = np.array([(-1 if modular_value(s, m) is None else modular_value(s, m)) for s in a.states])
    # distinguish operator states from each other too: value-less states get distinct outputs per kind
    kinds = np.array([s[-1] if modular_value(s, m) is None else "v" for s in a.states])
    joint = np.zeros(a.n_states, dtype=np.int64)
    for v, lab in enumerate(sorted(set(zip(labels.tolist(), kinds.tolist())))):
        joint[(labels == lab[0]) & (kinds == lab[1])] = v
    partition = None
    for v in np.unique(joint):
        cls = nerode_classes(a.replace(accepting=np.flatnonzero(joint == v).tolist()))
        key = cls if partition is None else partition * (cls.max() + 1) + cls
        partition = np.unique(key, return_inverse=True)[1]
    assert len(np.unique(partition)) == a.n_states


def test_word_problem_accepts_sympy_groups_and_rejects_non_permutations():
    g = PermutationGroup([Permutation([1, 0, 2, 3]), Permutation([1, 2, 3, 0])])
    a = word_problem(g, name="S4-from-sympy")
    assert a.n_states == 24 and a.symbols == ("(0 1)", "(0 1 2 3)")
    with pytest.raises(NotAGroupError, match="not a permutation"):
        word_problem([[0, 0, 1]])
    with pytest.raises(SpecError):
        word_problem([[0, 1]], symbol_names=["a", "b"])


def test_transformation_automaton_is_the_cayley_graph():
    gens = [[1, 2, 0], [1, 0, 2], [0, 0, 2]]
    a = transformation_automaton(gens)
    assert a.n_states == 27
    rng = np.random.default_rng(4)
    for w in rng.integers(0, 3, size=(30, 12)):
        t = np.arange(3)
        for x in w:
            t = np.asarray(gens[x])[t]  # apply t, then x
        assert a.states[a.final_state(w)] == "[" + ",".join(map(str, t)) + "]"


def test_transformation_automaton_matches_libsemigroups():
    lsg = pytest.importorskip("libsemigroups_pybind11")
    guard = lsg.ReportGuard(False)  # noqa: F841
    gens = [[1, 2, 3, 4, 0], [1, 0, 2, 3, 4], [0, 0, 2, 3, 4], [4, 4, 1, 1, 2]]
    a = transformation_automaton(gens)
    fp = lsg.FroidurePin([lsg.Transf(g) for g in gens] + [lsg.Transf(list(range(5)))])
    assert a.n_states == fp.size() == 5**5


def test_limits_name_size_and_limit():
    with pytest.raises(LimitExceededError, match="5040.*5000"):
        resolve_spec("S7")
    with pytest.raises(LimitExceededError, match="7920.*5000"):
        resolve_spec("M11:all")
    with pytest.raises(LimitExceededError, match="100000"):
        resolve_spec("S9:gens")
    with pytest.raises(LimitExceededError, match="400000 elements on 200000 points.*50000000 stored entries"):
        resolve_spec("D200000:gens")
    with pytest.raises(LimitExceededError, match="limit 100"):
        transformation_automaton([[1, 2, 3, 4, 0], [1, 0, 2, 3, 4], [0, 0, 2, 3, 4]], limit=100)


def test_enumeration_memory_limit(monkeypatch):
    from fsa2rnn.fsa.library import cayley

    monkeypatch.setattr(cayley, "MAX_ENTRIES", 1000)
    with pytest.raises(LimitExceededError, match="on 100 points has at least 11 elements.*limit of 1000"):
        word_problem([np.roll(np.arange(100), 1)])  # C100 on 100 points


@pytest.mark.parametrize("spec", ["S0", "A2", "D2", "T1", "Z0", "S5:foo", "nope", "parity:3", "modarith:0"])
def test_bad_builtin_parameters(spec):
    with pytest.raises(SpecError) as info:
        resolve_spec(spec)
    assert "\n" not in str(info.value)


def test_unknown_builtin_suggests_list():
    with pytest.raises(UnknownBuiltinError, match=r"'S5:foo'.*fsa2rnn list"):
        resolve_spec("S5:foo")


def test_resolve_spec_reads_json_files(tmp_path):
    a = resolve_spec("even_pairs")
    path = tmp_path / "ep.json"
    a.save(path)
    assert resolve_spec(str(path)) == a
