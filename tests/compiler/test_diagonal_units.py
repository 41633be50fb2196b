"""compile_diagonal's pieces (compiler/targets/lrnn/diagonal.py) against independent oracles: the documented code-point
limit probed at its boundary (orbits × group order counted by hand), the trivial group and the level-less cascade of
a one-state automaton, the refusal messages, ``_abelian_levels``'s verdicts."""

from __future__ import annotations

import re
from math import prod
from pathlib import Path

import numpy as np
import pytest
import torch

from fsa2rnn.compiler import compile_diagonal
from fsa2rnn.compiler.targets.lrnn import diagonal as D
from fsa2rnn.compiler.targets.lrnn.cascade_to_householder import decompose
from fsa2rnn.fsa import Automaton, ConstructionError, resolve_spec
from fsa2rnn.fsa.errors import LimitExceededError
from fsa2rnn.nn import load_model

pytestmark = pytest.mark.usefixtures("one_torch_thread")

DOC = (Path(__file__).resolve().parents[2] / "docs" / "guide" / "compile-diagonal.md").read_text()
#: the documented limit of code points per layer (docs/guide/compile-diagonal.md)
MAX_CODES = 10 ** int(re.search(r"at most 10\^(\d+) code points per layer", DOC).group(1))


def _cycles_and_reset(lengths: list[int]) -> Automaton:
    """One symbol permuting disjoint cycles of the given lengths, one resetting to state 0. Its holonomy cascade is
    one level on all states: the cyclic group of order lcm(lengths) with one orbit per cycle."""
    n = sum(lengths)
    perm, offset = np.empty(n, dtype=np.int64), 0
    for length in lengths:
        perm[offset : offset + length] = offset + (np.arange(length) + 1) % length
        offset += length
    return Automaton(np.array([perm, np.zeros(n, dtype=np.int64)]), initial=0)


def _runs(model, a, length=300):
    ids = np.random.default_rng(0).integers(0, a.n_symbols, size=(3, length))
    want = a.run(ids, start=np.full(3, model.initial))
    assert np.array_equal(load_model(model).predict_states(torch.from_numpy(ids)).numpy(), want)


def test_code_points_over_the_documented_limit_are_refused():
    """Cycles 2, 3, 5, 7, 11, 13 (coprime): a cyclic group of order 30030 with 6 orbits, 180180 code points."""
    lengths = [2, 3, 5, 7, 11, 13]
    codes = len(lengths) * prod(lengths)
    assert MAX_CODES < codes < 2 * MAX_CODES
    with pytest.raises(LimitExceededError) as err:
        compile_diagonal(_cycles_and_reset(lengths))
    assert str(err.value) == f"level 1: {codes} code points exceed the limit {MAX_CODES}"


def test_code_point_limit_at_its_boundary(monkeypatch):
    """Cycles 2, 3, 5, 7: order 210, 4 orbits, 840 code points — compiled under the limit (and tracked); with the
    limit set to exactly 840 it still compiles, at 839 it is refused naming both numbers."""
    lengths = [2, 3, 5, 7]
    codes = len(lengths) * prod(lengths)
    a = _cycles_and_reset(lengths)
    model = compile_diagonal(a)
    assert model.construction == "cascade" and model.summary["verified"]
    assert model.summary["width"] == 2  # the orbit coordinate and one cyclic factor (C210)
    _runs(model, a)
    monkeypatch.setattr(D, "MAX_CODES", codes)
    assert compile_diagonal(a).summary["verified"]
    monkeypatch.setattr(D, "MAX_CODES", codes - 1)
    with pytest.raises(LimitExceededError) as err:
        compile_diagonal(a)
    assert str(err.value) == f"level 1: {codes} code points exceed the limit {codes - 1}"


@pytest.mark.parametrize("n", [1, 3])
def test_trivial_group_is_one_coordinate(n):
    """Every symbol the identity: the trivial group, one coordinate fixed at 1 (modulus 1, eigenvalue 1)."""
    a = Automaton(np.tile(np.arange(n), (2, 1)), initial=0)
    model = compile_diagonal(a)
    assert model.construction == "group" and model.summary["verified"]
    assert model.summary["width"] == 1 and model.summary["moduli"] == [1]
    assert np.allclose(model.tensors["L0.lam_re"], 1) and np.allclose(model.tensors["L0.lam_im"], 0)
    _runs(model, a)


@pytest.mark.parametrize("construction", ["cascade", "series"])
def test_one_state_cascade_has_no_levels_and_one_constant_coordinate(construction):
    """A one-state automaton's cascade has no levels: one layer of one constant coordinate, one code, one point."""
    a = Automaton([[0], [0]], initial=0)
    model = compile_diagonal(a, construction=construction)
    assert model.construction == construction and model.summary["verified"]
    assert model.summary["width"] == 1 and len(model.header["layers"]) == 1
    _runs(model, a)
    layers, keys, states, _ = D._cascade_layers(a, 0, decompose(a))
    assert len(layers) == 1 and keys.shape == (1, len(layers)) and states.tolist() == [0]
    (layer,) = layers
    assert layer.n_states == a.n_states
    assert len(layer.code_states) == len(layer.code_exponents) == 1
    assert len(layer.moduli) == layer.exponents.shape[1] == layer.code_exponents.shape[1] == 1


def test_series_refusal_names_group_or_holonomy_groups():
    """The refusal says which groups hold the non-abelian simple factor: the transition group of A5 (a group), the
    holonomy groups of T5 (not a group; its top level is S5)."""
    with pytest.raises(ConstructionError) as err:
        compile_diagonal(resolve_spec("A5"), construction="series")
    assert "its transition group has the non-abelian simple composition factor A5," in str(err.value)
    with pytest.raises(ConstructionError) as err:
        compile_diagonal(resolve_spec("T5"), construction="series")
    assert "its holonomy groups have the non-abelian simple composition factor A5," in str(err.value)


@pytest.mark.parametrize("spec,abelian", [("flipflop", True), ("regex:(ab)*", True), ("T3", False), ("T4", False)])
def test_abelian_levels_is_a_bool(spec, abelian):
    """T3 and T4 have S3 / S4 holonomy groups (SgpDec); the flip-flop and (ab)* only trivial or C2 levels."""
    assert D._abelian_levels(decompose(resolve_spec(spec))) is abelian
