"""compile_diagonal: abelian groups as roots of unity, abelian cascades with resets, refusal of everything else."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from fsa2rnn.compiler import compile_diagonal
from fsa2rnn.compiler.targets.lrnn.exact import exact_check
from fsa2rnn.fsa import Automaton, ConstructionError, resolve_spec
from fsa2rnn.nn import load_model


def _runs(m, a, length=1000):
    ids = np.random.default_rng(0).integers(0, a.n_symbols, size=(3, length))
    want = a.run(ids, start=np.full(3, m.initial))
    for scan in ("sequential", "parallel"):
        assert np.array_equal(load_model(m).predict_states(torch.from_numpy(ids), scan=scan).numpy(), want)


@pytest.mark.parametrize(
    "spec,width,moduli",
    [("parity", 1, [2]), ("Z3", 1, [3]), ("Z60", 1, [60]), ("Z6:gen", 1, [6]), ("cycle_nav", 1, [5])],
)
def test_cyclic_groups_one_complex_coordinate(spec, width, moduli):
    a = resolve_spec(spec)
    m = compile_diagonal(a)
    assert m.summary["verified"] and m.summary["width"] == width and m.summary["moduli"] == moduli
    assert m.summary["real"] == (moduli == [2])
    lam = m.tensors["L0.lam_re"] + 1j * m.tensors["L0.lam_im"]
    assert np.allclose(np.abs(lam), 1)
    assert np.allclose(lam ** moduli[0], 1)  # eigenvalues are m-th roots of unity
    _runs(m, a)


def test_klein_four_is_real_plus_minus_one():
    a = Automaton([[1, 0, 3, 2], [2, 3, 0, 1]], initial=0)
    m = compile_diagonal(a)
    assert m.summary["real"] and m.summary["width"] == 2
    assert np.all(m.tensors["L0.lam_im"] == 0) and set(np.unique(m.tensors["L0.lam_re"])) <= {-1.0, 1.0}
    _runs(m, a)


@pytest.mark.parametrize("spec", ["flipflop", "flipflop:3", "even_pairs", "gridworld:3", "regex:(ab)*", "modarith:3"])
def test_abelian_cascades_with_resets(spec):
    a = resolve_spec(spec)
    m = compile_diagonal(a, initial=a.initial if a.initial is not None else 0)
    assert m.construction == "cascade" and m.summary["verified"]
    resets = np.concatenate([m.tensors[f"{e['name']}.reset"] for e in m.header["layers"]])
    assert resets.any()  # B ≠ 0 does the resets
    for e in m.header["layers"]:  # Proposition 1: |λ| = 1 on permutation rows, λ = 0 on reset rows
        lam = np.abs(m.tensors[f"{e['name']}.lam_re"] + 1j * m.tensors[f"{e['name']}.lam_im"])
        reset = m.tensors[f"{e['name']}.reset"].astype(bool)
        assert np.allclose(lam[~reset], 1) and np.all(lam[reset] == 0)
    _runs(m, a)


@pytest.mark.parametrize(
    "spec,construction,pattern",
    [("S3", "group", "do not commute"), ("Q8", "group", "do not commute"), ("T3", "cascade", r"\(3,S3\)")],
)
def test_non_abelian_refused_with_reason(spec, construction, pattern):
    """The abelian constructions refuse non-abelian groups (construction 'series' handles them: test_group_series)."""
    with pytest.raises(ConstructionError, match=pattern) as exc:
        compile_diagonal(resolve_spec(spec), construction=construction)
    assert "diagonal transition matrices commute" in str(exc.value)


def test_exact_check_catches_a_wrong_eigenvalue():
    a = resolve_spec("Z3")
    m = compile_diagonal(a)
    t = {k: v.copy() for k, v in m.tensors.items()}
    t["L0.exponents"] = (t["L0.exponents"] + 1) % 3
    from fsa2rnn.compiler.model import CompiledModel

    assert not exact_check(CompiledModel(m.header, t), a)["ok"]
