"""Composition-series cascades (fsa/group_series.py) and `compile --target diagonal --construction series`.

Oracles: Automaton.run (float64 runs of 10^4 symbols), the exhaustive emulation check of Cascade, the exact check of
the compiled weights, and sympy's derived and composition series for the layer counts.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.compiler import compile_diagonal
from fsa2rnn.compiler.targets.lrnn.exact import exact_check
from fsa2rnn.fsa import Automaton, ConstructionError, resolve_spec
from fsa2rnn.fsa.group_series import diagonal_widths, group_cascade, series_sizes
from fsa2rnn.fsa.library.word_problems import word_problem
from fsa2rnn.fsa.realizability import realizability
from fsa2rnn.nn import load_model

WREATH = [[1, 0, 2, 3], [2, 3, 0, 1]]  # C2 ≀ C2 on 4 points: (0 1) and (0 2)(1 3), order 8


def _shuffled(spec: str, tmp_path, seed: int) -> Automaton:
    """The builtin's Cayley table with its state indices permuted, written as a JSON spec (no natural action)."""
    a = resolve_spec(spec)
    pi = np.random.default_rng(seed).permutation(a.n_states)  # old index q -> new index pi[q]
    t = np.empty_like(a.transitions)
    t[:, pi] = pi[a.transitions]
    names = [""] * a.n_states
    for q, s in enumerate(a.states):
        names[pi[q]] = s
    b = Automaton(t, states=names, symbols=a.symbols, initial=names[pi[a.initial]], name=f"{spec} shuffled")
    path = tmp_path / f"{spec}.json"
    path.write_text(json.dumps(b.to_spec()))
    out = resolve_spec(str(path))
    assert out.action is None and not np.array_equal(out.transitions, a.transitions)
    return out


def _automaton(spec: str, tmp_path) -> Automaton:
    if spec == "C2wrC2":
        return word_problem(np.array(WREATH), name="C2 wr C2")
    if spec.endswith("@json"):
        return _shuffled(spec[:-5], tmp_path, seed=len(spec))
    return resolve_spec(spec)


def _series_lengths(a: Automaton) -> tuple[int, int]:
    """(derived length, composition length) of the transition group, from sympy directly."""
    from sympy.combinatorics import Permutation, PermutationGroup

    G = PermutationGroup([Permutation(list(map(int, r))) for r in a.transitions])
    return len(G.derived_series()) - 1, len(G.composition_series()) - 1


GROUPS = ["S4", "A4", "Q8", "C2wrC2", "S3"] + [f"D{n}" for n in range(3, 13)] + ["D6@json", "D12@json", "Q8@json"]


@pytest.mark.parametrize("spec", GROUPS)
def test_group_cascade_emulates_with_levels_between_derived_and_composition_length(spec, tmp_path):
    a = _automaton(spec, tmp_path)
    c = group_cascade(a)
    assert c.emulation_verified and c.verify_emulation(a, n_words=8, length=64, seed=1)
    derived, composition = _series_lengths(a)
    assert derived <= c.n_levels <= composition
    assert all(s.factor.moduli is not None for s in c.series)  # every factor abelian
    comp = group_cascade(a, series="composition")
    assert comp.emulation_verified and comp.n_levels == composition
    assert all(s.factor.order in (2, 3, 5, 7, 11) for s in comp.series)


def test_s4_uses_the_derived_series():
    c = group_cascade(resolve_spec("S4"))
    assert str(c) == "1: (2,C2) / 2: (3,C3) / 3: (4,C2 x C2)" and c.series_name == "derived"
    assert group_cascade(resolve_spec("S4"), series="composition").n_levels == 4


def _agrees(m, a: Automaton, length: int = 10_000, scan: str = "parallel") -> None:
    """Float64 predictions at every position of random words agree with Automaton.run."""
    ids = np.random.default_rng(0).integers(0, a.n_symbols, size=(2, length))
    want = a.run(ids, start=np.full(2, m.initial))
    net = load_model(m)
    assert net.dtype == torch.float64
    got = net.predict_states(torch.from_numpy(ids), scan=scan).numpy()
    assert np.array_equal(got, want)


COMPILED = ["S4", "A4", "Q8", "C2wrC2", "D5", "D12", "D12@json", "Q8@json", "T3", "T4"]


@pytest.mark.parametrize("spec", COMPILED)
def test_series_compiles_to_diagonal_layers_exactly_checked(spec, tmp_path):
    a = _automaton(spec, tmp_path)
    q0 = a.initial if a.initial is not None else 0
    m = compile_diagonal(a, initial=q0)
    assert m.construction == "series" and m.summary["verified"]
    assert exact_check(m, a)["ok"]
    for e in m.header["layers"]:  # |λ| = 1 on permutation rows, 0 on resets
        lam = np.abs(m.tensors[f"{e['name']}.lam_re"] + 1j * m.tensors[f"{e['name']}.lam_im"])
        reset = m.tensors[f"{e['name']}.reset"].astype(bool)
        assert np.allclose(lam[~reset], 1) and np.all(lam[reset] == 0)
    assert m.summary["width"] == diagonal_widths(group_cascade(a)) or m.summary["layers"] == 1
    _agrees(m, a)
    if spec == "S4":
        _agrees(m, a, length=1000, scan="sequential")


@pytest.mark.parametrize("spec", ["D4", "Q8", "C2wrC2"])
def test_two_groups_compile_to_real_plus_minus_one_layers(spec, tmp_path):
    m = compile_diagonal(_automaton(spec, tmp_path))
    assert m.summary["real"] and not any(e["complex"] for e in m.header["layers"])
    for e in m.header["layers"]:
        assert np.all(m.tensors[f"{e['name']}.lam_im"] == 0)
        assert set(np.unique(m.tensors[f"{e['name']}.lam_re"])) <= {-1.0, 1.0}


def test_holonomy_groups_of_t4_are_expanded():
    c = group_cascade(resolve_spec("T4"))
    assert c.source is not None and str(c.source) == "1: (4,S4) / 2: (3,S3) / 3: (2,C2)"
    assert [s.source for s in c.series] == [0, 0, 0, 1, 1, 2]


@pytest.mark.parametrize("spec,factor", [("S5", "A5"), ("A5", "A5"), ("M11", "M11"), ("PSL(2,7)", r"PSL\(2,7\)")])
def test_non_solvable_groups_refused_naming_the_simple_factor(spec, factor):
    for construction in ("series", "auto"):
        with pytest.raises(ConstructionError, match=f"non-abelian simple composition factor {factor}"):
            compile_diagonal(resolve_spec(spec), construction=construction)


def test_non_solvable_factor_stays_one_level():
    c = group_cascade(resolve_spec("S5"))
    assert str(c) == "1: (2,C2) / 2: (60,A5)" and c.emulation_verified


@pytest.mark.parametrize("spec", ["S4", "T4", "Q8"])
def test_analyze_reports_the_layers_compile_builds(spec):
    a = resolve_spec(spec)
    row = realizability(a)["diagonal_complex"]["exact"]
    m = compile_diagonal(a, initial=0)
    assert row["realizes"] is True
    assert row["layers"] == m.summary["layers"] and row["width"] == m.summary["width"]


def test_analyze_cli_s4():
    res = CliRunner().invoke(main, ["analyze", "S4", "--json"])
    assert res.exit_code == 0, res.output
    row = json.loads(res.output)["realizability"]["diagonal_complex"]["exact"]
    assert row["realizes"] is True and row["layers"] == 3


def test_cli_compile_series_and_decompose_group_series(tmp_path):
    out = tmp_path / "s4.safetensors"
    res = CliRunner().invoke(
        main, ["compile", "S4", "--target", "diagonal", "--construction", "series", "-o", str(out), "--json"]
    )
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["layers"] == 3 and out.exists()
    res = CliRunner().invoke(main, ["decompose", "S4", "--group-series", "--json"])
    assert res.exit_code == 0, res.output
    s = json.loads(res.output)
    assert s["n_levels"] == 3 and s["emulation_verified"] and s["series"] == "derived"
    bad = tmp_path / "a5.safetensors"
    res = CliRunner().invoke(main, ["compile", "A5", "--target", "diagonal", "-o", str(bad)])
    assert res.exit_code == 2 and "A5" in res.output and not bad.exists()


def _built(a: Automaton) -> dict:
    """What the analysis reported before it read the sizes off the levels' groups: the cascade itself, built."""
    c = group_cascade(a, verify=False)
    moduli = [m for lv in c.series for m in (lv.factor.moduli or ())]
    return {"layers": c.n_levels, "width": diagonal_widths(c), "real": all(m <= 2 for m in moduli),
            "series": c.series_name, "display": str(c)}  # fmt: skip


@pytest.mark.parametrize("seed", range(24))
def test_series_sizes_equal_the_built_cascade(seed):
    """series_sizes (levels' groups, their series, no cascade) against the series cascade built and measured, on
    seeded random automata (half with permutation symbols: nontrivial holonomy groups) and group automata."""
    rng = np.random.default_rng(seed)
    n, k = int(rng.integers(2, 7)), int(rng.integers(1, 4))
    gens = rng.integers(0, n, (k, n))
    for i in range(k):
        if seed % 2 and rng.random() < 0.6:
            gens[i] = rng.permutation(n)
    if seed % 6 == 5:  # a group automaton
        gens = np.array([rng.permutation(n) for _ in range(k)])
    a = Automaton(gens, symbols=[f"x{i}" for i in range(k)])
    assert series_sizes(a) == _built(a)


@pytest.mark.parametrize("spec", ["S4", "T4", "Q8", "C2wrC2", "Z6:gen", "flipflop"])
def test_series_sizes_equal_the_built_cascade_on_named_automata(spec, tmp_path):
    a = _automaton(spec, tmp_path)
    assert series_sizes(a) == _built(a)
