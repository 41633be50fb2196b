"""green_classes (fsa/dclasses.py): Green's structure from image/kernel orbits and Schützenberger groups, against the
full enumeration (fsa/monoid.py + fsa/green.py) on every monoid of the oracle tests, libsemigroups' Konieczny on
seeded and hypothesis-random transformation monoids (per D-class), and the published counts of T_n."""

from __future__ import annotations

import math

import numpy as np
import pytest
from cases import SMALL_CASES, case_automaton
from hypothesis import given, settings
from hypothesis import strategies as st

from fsa2rnn.fsa import Automaton, LimitExceededError, TransitionMonoid, dclasses, green_classes, resolve_spec
from fsa2rnn.fsa.classify import classify, definite_degree, definite_degree_of_generators
from fsa2rnn.fsa.monoid import full_transformation_generators
from fsa2rnn.fsa.realizability import realizability

IDEMPOTENTS_OF_T = [1, 3, 10, 41, 196, 1057, 6322, 41393]  # OEIS A000248, n = 1..8
GREEN_OF_T = {3: (3, 7, 5, 13), 4: (4, 15, 15, 71), 5: (5, 31, 52, 456)}  # (D, L, R, H), docs/architecture.md


def _counts(S) -> tuple:
    G = S.green
    return (
        S.size,
        S.number_of_idempotents,
        G.number_of_D_classes,
        G.number_of_R_classes,
        G.number_of_L_classes,
        G.number_of_H_classes,
        G.number_of_regular_D_classes,
    )


def _subgroups(S) -> list[tuple]:
    return sorted((h.order, h.rank, tuple(sorted(h.composition_factors))) for h in S.green.maximal_subgroups)


@pytest.mark.parametrize("n", range(1, 9))
def test_full_transformation_monoids_public_oracles(n):
    S = green_classes(full_transformation_generators(n))
    assert S.size == n**n and S.number_of_idempotents == IDEMPOTENTS_OF_T[n - 1]
    assert S.number_of_D_classes == S.number_of_regular_D_classes == n
    if n in GREEN_OF_T:
        assert (S.number_of_D_classes, S.number_of_L_classes, S.number_of_R_classes, S.number_of_H_classes) == (
            GREEN_OF_T[n]
        )
    assert sorted(h.order for h in S.maximal_subgroups) == sorted(math.factorial(r) for r in range(1, n + 1))
    if n >= 3:
        assert S.maximal_subgroups[0].name == f"S{n}"  # the identity's D-class comes first


@pytest.mark.parametrize("case", SMALL_CASES, ids=lambda c: c.name)
def test_matches_the_full_enumeration_on_every_case(case):
    a = case_automaton(case)
    M, S = TransitionMonoid(a), green_classes(a)
    assert _counts(S) == _counts(M)
    assert _subgroups(S) == _subgroups(M)
    assert [h.name for h in S.maximal_subgroups if h.order > 1] == [
        h.name for h in M.green.maximal_subgroups if h.order > 1
    ] or case.is_group is False
    assert classify(S) == classify(M)


@pytest.mark.parametrize("n", range(1, 7))
def test_matches_the_full_enumeration_on_t_n(n):
    M, S = TransitionMonoid(full_transformation_generators(n)), green_classes(full_transformation_generators(n))
    assert _counts(S) == _counts(M) and _subgroups(S) == _subgroups(M)


@pytest.mark.parametrize("n", range(3, 7))
def test_t_n_recognized_equals_the_general_path(n, monkeypatch):
    """Sym(n) and a map of rank n − 1 generate T_n: the closed form gives what the orbit search gives, D-class by
    D-class in the same order (the search runs with the recognition switched off)."""
    gens = np.concatenate([full_transformation_generators(n)[::-1], np.random.default_rng(n).permutation(n)[None]])
    fast = green_classes(gens)
    monkeypatch.setattr(dclasses, "_full_transformation_classes", lambda g: None)
    slow = green_classes(gens)
    row = lambda d: (d.rank, d.images, d.kernels, d.lambda_order, d.rho_order, d.group_order, d.regular, d.idempotents)  # noqa: E731
    assert [row(d) for d in fast.d_classes] == [row(d) for d in slow.d_classes]
    assert [h.name for h in fast.maximal_subgroups] == [h.name for h in slow.maximal_subgroups]


@pytest.mark.parametrize("n", [4, 5])
def test_t_n_is_not_recognized_without_a_rank_n_minus_1_map(n):
    """Sym(n) with a map of rank n − 2 generates a proper submonoid of T_n: the orbit search, as the enumeration."""
    gens = full_transformation_generators(n)
    gens[2] = np.minimum(np.arange(n), n - 3)  # rank n − 2
    M, S = TransitionMonoid(gens), green_classes(gens)
    assert S.size < n**n and _counts(S) == _counts(M) and _subgroups(S) == _subgroups(M)


def _konieczny_profile(gens: np.ndarray) -> tuple[tuple, list[tuple]]:
    ls = pytest.importorskip("libsemigroups_pybind11")
    guard = ls.ReportGuard(False)  # noqa: F841 - silences libsemigroups while alive
    n = gens.shape[1]
    K = ls.Konieczny([ls.Transf([int(v) for v in g]) for g in gens] + [ls.Transf(list(range(n)))])
    counts = (
        K.size(),
        K.number_of_idempotents(),
        K.number_of_D_classes(),
        K.number_of_R_classes(),
        K.number_of_L_classes(),
        K.number_of_H_classes(),
        K.number_of_regular_D_classes(),
    )
    profile = sorted(
        (
            d.size(),
            d.number_of_L_classes(),
            d.number_of_R_classes(),
            d.size_H_class(),
            d.is_regular_D_class(),
            d.number_of_idempotents(),
        )
        for d in K.D_classes()
    )
    return counts, profile


def _our_profile(S) -> list[tuple]:
    return sorted((d.size, d.l_classes, d.r_classes, d.group_order, d.regular, d.idempotents) for d in S.d_classes)


@pytest.mark.parametrize("seed", range(60))
def test_d_class_profiles_match_konieczny(seed):
    """Per D-class (size, L, R, H size, regular, idempotents) against libsemigroups' Konieczny, 2–9 states,
    1–4 symbols (these random monoids have many non-regular D-classes)."""
    rng = np.random.default_rng(1000 + seed)
    n, k = int(rng.integers(2, 10)), int(rng.integers(1, 5))
    gens = rng.integers(0, n, size=(k, n))
    S = green_classes(gens)
    counts, profile = _konieczny_profile(gens)
    assert _counts(S) == counts and _our_profile(S) == profile
    assert sorted(h.order for h in S.maximal_subgroups) == sorted(p[3] for p in profile if p[4])


@settings(max_examples=60, deadline=None)
@given(
    st.integers(1, 8).flatmap(
        lambda n: st.lists(st.lists(st.integers(0, n - 1), min_size=n, max_size=n), min_size=1, max_size=4)
    )
)
def test_hypothesis_random_monoids_match_konieczny(rows):
    gens = np.asarray(rows)
    S = green_classes(gens)
    counts, profile = _konieczny_profile(gens)
    assert _counts(S) == counts and _our_profile(S) == profile


def test_larger_state_counts_match_konieczny():
    """16–20 states (the hashed-key monoids of test_monoid.py) and M11 on 11 points (ATLAS generators)."""
    rng = np.random.default_rng(7)
    for n in (16, 17, 20):
        gens = np.stack([np.roll(np.arange(n), 1), rng.integers(0, 2, size=n), np.arange(n) % 3])
        S = green_classes(gens)
        counts, profile = _konieczny_profile(gens)
        assert _counts(S) == counts and _our_profile(S) == profile
    m11 = np.array([np.roll(np.arange(11), -1), [0, 1, 6, 9, 5, 3, 10, 2, 8, 4, 7]])  # (2,6,10,7)(3,9,4,5)
    S = green_classes(m11)
    assert _counts(S) == (7920, 1, 1, 1, 1, 1, 1) and S.maximal_subgroups[0].name == "M11"


@pytest.mark.parametrize("seed", range(40))
def test_definite_degree_from_the_pair_graph_matches_the_monoid(seed):
    """Definite automata are rare at random: half of the seeds draw generators that collapse towards a sink."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(1, 7)), int(rng.integers(1, 4))
    gens = rng.integers(0, n, size=(k, n))
    if seed % 2:
        gens = np.minimum(gens, np.maximum(np.arange(n) - 1 - rng.integers(0, 2, size=(k, n)), 0))  # strictly down
    assert definite_degree_of_generators(gens) == definite_degree(TransitionMonoid(gens))


@pytest.mark.parametrize("spec", ["flipflop", "T3", "parity", "S4", "regex:(ab)*", "gridworld:3"])
def test_realizability_from_the_d_classes_matches_the_full_path(spec):
    a = resolve_spec(spec)
    assert realizability(a, green_classes(a), cascade=False) == realizability(a, TransitionMonoid(a), cascade=False)


def test_analyze_json_is_the_same_on_both_paths(monkeypatch):
    """The green path (forced by a threshold of 0) gives the same JSON as the enumeration, up to the numbering of
    the D-classes that carry the subgroups."""
    from fsa2rnn.fsa import analysis

    for spec in ("T4", "flipflop", "S4", "gridworld:3"):
        a = resolve_spec(spec)
        full = analysis.analyze(a, cascade=False)
        monkeypatch.setattr(analysis, "ENUMERATION_THRESHOLD", 0)
        assert type(analysis.monoid_structure(a)).__name__ == "GreenClasses"
        green = analysis.analyze(a, cascade=False)
        monkeypatch.undo()
        for r in (full, green):
            r["monoid"]["subgroups"] = sorted(
                tuple(sorted((k, str(v)) for k, v in h.items() if k != "d_class")) for h in r["monoid"]["subgroups"]
            )
        assert green == full


def test_limits_are_stated():
    with pytest.raises(LimitExceededError, match="orbit has more than"):
        green_classes(np.random.default_rng(0).integers(0, 12, (3, 12)), max_bytes=1 << 16)
    with pytest.raises(LimitExceededError, match="Schützenberger group"):
        green_classes(resolve_spec("M11"), max_bytes=1 << 20)  # the regular action: 7920 elements on 7920 points


def test_analyze_t7_takes_the_green_path_with_the_same_keys():
    """T_7 (823,543 elements > ENUMERATION_THRESHOLD) is reported from its D-classes: the public counts, and the same
    JSON keys as an enumerated monoid (T4)."""
    import json

    from click.testing import CliRunner

    from fsa2rnn.cli.main import main
    from fsa2rnn.fsa.analysis import monoid_structure

    assert type(monoid_structure(resolve_spec("T7"))).__name__ == "GreenClasses"
    big = json.loads(CliRunner().invoke(main, ["analyze", "T7", "--json", "--no-cascade"]).output)
    small = json.loads(CliRunner().invoke(main, ["analyze", "T4", "--json", "--no-cascade"]).output)
    m = big["monoid"]
    assert (m["size"], m["idempotents"], m["d_classes"], m["regular_d_classes"]) == (7**7, 6322, 7, 7)
    assert big.keys() == small.keys() and m.keys() == small["monoid"].keys()
    assert big["realizability"].keys() == small["realizability"].keys()
    assert [h.keys() for h in m["subgroups"]] == [h.keys() for h in small["monoid"]["subgroups"]][:1] * 7
    assert [h["name"] for h in m["subgroups"]] == ["S7", "S6", "S5", "S4", "S3", "C2", "C1"]
    res = CliRunner().invoke(main, ["analyze", "T7", "--max-elements", "800000"])
    assert res.exit_code == 2 and "has 823,543 elements, over the element limit of 800,000" in res.output


def _sorted_subgroups(report: dict) -> dict:
    """The report with its subgroups sorted and without their D-class numbers (the two paths number D-classes in
    different orders)."""
    out = {**report, "monoid": dict(report["monoid"])}
    out["monoid"]["subgroups"] = sorted(
        tuple(sorted((k, str(v)) for k, v in h.items() if k != "d_class")) for h in report["monoid"]["subgroups"]
    )
    return out


@pytest.mark.parametrize("seed", range(10))
def test_analyze_on_random_automata_against_libsemigroups_both_paths_and_sympy(seed, monkeypatch):
    """``fsa.analyze`` (``analyze --json``) on the benchmark's automata, np.random.default_rng(seed).integers(0, n,
    (k, n)), 5–7 states and 2–3 symbols: its counts and subgroup orders equal libsemigroups' Konieczny; the
    enumeration and the D-class path (threshold 0) give the same report; and the subgroups named from their
    element tables are named the same when every group goes through sympy (tables off)."""
    from fsa2rnn.fsa import analysis, groups

    n, k = 5 + seed % 3, 2 + seed % 2
    gens = np.random.default_rng(seed).integers(0, n, (k, n))
    a = Automaton(gens, symbols=[f"x{i}" for i in range(k)])
    full = analysis.analyze(a, cascade=False)
    counts, profile = _konieczny_profile(gens)
    m = full["monoid"]
    keys = ("size", "idempotents", "d_classes", "r_classes", "l_classes", "h_classes", "regular_d_classes")
    assert tuple(m[key] for key in keys) == counts
    assert sorted(h["order"] for h in m["subgroups"]) == sorted(p[3] for p in profile if p[4])
    monkeypatch.setattr(analysis, "ENUMERATION_THRESHOLD", 0)
    assert type(analysis.monoid_structure(a)).__name__ == "GreenClasses"
    assert _sorted_subgroups(analysis.analyze(a, cascade=False)) == _sorted_subgroups(full)
    monkeypatch.undo()
    monkeypatch.setattr(groups, "MAX_TABLE_CELLS", 0)
    groups._summary.cache_clear()
    try:
        assert analysis.analyze(a, cascade=False) == full
    finally:
        groups._summary.cache_clear()
