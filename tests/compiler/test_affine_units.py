"""The shift register's pieces (compiler/targets/affine/definite_to_affine.py) against brute force: the window code
and readout table, the summary's sizes, the window limit at its boundary, the non-definiteness witness, and
check_affine's refusal of each smallest tampering of a model."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from cases import window_automaton

from fsa2rnn.compiler import compile_nfsm
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.targets.affine import definite_to_affine as da
from fsa2rnn.fsa import Automaton, resolve_spec
from fsa2rnn.fsa.errors import LimitExceededError


def _tampered(model: CompiledModel, name: str, fn) -> CompiledModel:
    t = {k: v.copy() for k, v in model.tensors.items()}
    t[name] = fn(t[name])
    return CompiledModel(dict(model.header), t)


def _set(index, value):
    def fn(x):
        x[index] = value
        return x

    return fn


def test_window_code_of_one_window_and_of_many():
    """Digit j (the symbol read j steps ago, + 1; 0 = empty) weighs radix^j."""
    assert da.window_code(np.array([2, 1, 0]), 3) == 2 + 1 * 3
    many = np.array([[1, 2, 1], [0, 0, 0], [2, 2, 2]])
    assert da.window_code(many, 3).tolist() == [1 + 2 * 3 + 9, 0, 2 + 6 + 18]


@pytest.mark.parametrize(("automaton", "k"), [(window_automaton(2), 2), (window_automaton(1, 3), 2),
                                              (resolve_spec("regex:(a|b)*ab"), 3)])  # fmt: skip
def test_window_table_against_brute_force(automaton, k):
    """table[code(w)] = δ_w(q0) for every word w of length ≤ k, and −1 for every code that is no window."""
    s = automaton.n_symbols
    table = da.window_table(automaton, k)
    want = np.full((s + 1) ** k, -1)
    for length in range(k + 1):
        for word in itertools.product(range(s), repeat=length):  # oldest first
            q = automaton.initial
            for x in word:
                q = int(automaton.transitions[x][q])
            code = sum((x + 1) * (s + 1) ** j for j, x in enumerate(reversed(word)))  # newest symbol least significant
            want[code] = q
    assert np.array_equal(table, want)


def test_summary_and_header_sizes():
    """Degree k over s symbols: width k·s, one layer, a window table in radix s + 1 with (s+1)^k entries."""
    a = window_automaton(2, 3)
    model = da.compile_affine(a)
    s = model.summary
    assert (s["width"], s["definite_degree"], s["layers"], s["verified"]) == (6, 2, 1, True)
    assert model.header["readout"]["radix"] == 4 and model.header["readout"]["window"] == 2
    assert model.tensors["readout.table"].shape == (16,)
    assert s["robust_radius"] == pytest.approx(1 / 4)


def test_a_zero_definite_automaton_gets_a_window_of_one():
    """Every word ends in the one reachable state (degree 0): the register still reads one symbol (k = 1)."""
    a = Automaton([[0, 0], [0, 0]], initial=0)
    s = da.compile_affine(a).summary
    assert (s["definite_degree"], s["width"], s["verified"]) == (1, 2, True)


def test_window_limit_at_its_boundary(monkeypatch):
    a = window_automaton(2, 3)  # 1 + 3 + 9 = 13 windows
    monkeypatch.setattr(da, "MAX_WINDOWS", 13)
    assert da.compile_affine(a).summary["verified"]
    monkeypatch.setattr(da, "MAX_WINDOWS", 12)
    with pytest.raises(LimitExceededError, match=r"last 2 of 3 symbols has 13 windows, over the limit of 12"):
        da.compile_affine(a)


def test_unverified_and_failed_verification_are_said(monkeypatch):
    a = window_automaton(2)
    assert da.compile_affine(a, verify=False).summary["verified"] is False
    monkeypatch.setattr(da, "check_affine", lambda model, automaton: {"ok": False, "failure": "planted"})
    s = da.compile_affine(a).summary
    assert s["verified"] is False and s["verification_failure"] == "planted"


def _non_constant_power(a: Automaton, word: list[int]) -> bool:
    q = np.arange(a.n_states)
    for _ in range(a.n_states):
        for x in word:
            q = a.transitions[x][q]
    return len(set(q.tolist())) > 1


@pytest.mark.parametrize("spec", ["parity", "flipflop", "regex:(ab)*", "Z3", "T3"])
def test_non_definite_witness_is_a_shortest_word_with_a_non_constant_power(spec):
    a = resolve_spec(spec).reachable()
    w = da.non_definite_witness(a)
    assert w is not None and len(w) >= 1 and _non_constant_power(a, w)
    shorter = (list(v) for n in range(1, len(w)) for v in itertools.product(range(a.n_symbols), repeat=n))
    assert not any(_non_constant_power(a, v) for v in shorter)


@pytest.mark.parametrize("a", [window_automaton(2), window_automaton(3, 2), Automaton([[0, 0]], initial=0)])
def test_a_definite_automaton_has_no_witness(a):
    assert da.non_definite_witness(a) is None


def test_check_affine_report_counts_windows():
    a = window_automaton(2, 3)
    report = da.check_affine(da.compile_affine(a), a)
    assert report == {"ok": True, "failure": None, "windows": 1 + 3 + 9, "nilpotent_index": 2}
    _, ok = da.verify_check(da.compile_affine(a), a)
    assert ok is True


def test_check_affine_refuses_each_smallest_tampering():
    a = window_automaton(2)  # k = 2, s = 2, d = 4
    model = da.compile_affine(a)
    cases = {
        ("A", _set((0, 0), 2.0)): "A and B must be 0/1 matrices and h0 zero",
        ("B", _set((0, 0), 0.5)): "A and B must be 0/1 matrices and h0 zero",
        ("h0", _set(0, 1.0)): "A and B must be 0/1 matrices and h0 zero",
        ("A", _set((0, 0), 1.0)): "A is not the block shift or B not the one-hot codes of block 0",
        ("B", _set((0, 1), 1.0)): "A is not the block shift or B not the one-hot codes of block 0",
        ("readout.table", _set(1, 3)): "the readout table differs from δ_window(q0) on some window",
    }
    for (name, fn), failure in cases.items():
        report = da.check_affine(_tampered(model, name, fn), a)
        assert (report["ok"], report["failure"]) == (False, failure), (name, failure)


def test_check_affine_refuses_an_automaton_that_the_window_does_not_determine():
    """The same table from q0 (every word of length ≤ 1 reaches the same state), but from a reachable state the last
    symbol does not determine the next: not 1-definite."""
    last = Automaton([[1, 1, 1], [2, 2, 2]], initial=0)  # state = the last symbol (0: none yet)
    model = da.compile_affine(last)
    assert model.summary["definite_degree"] == 1
    other = Automaton([[1, 3, 1, 1], [2, 2, 2, 2]], initial=0)  # 'a' after 'a' goes to a fourth state
    report = da.check_affine(model, other)
    assert report["ok"] is False
    assert report["failure"] == "a window of length 1 does not determine the state (the automaton is not 1-definite)"


def test_check_affine_refuses_an_automaton_over_another_alphabet():
    model = da.compile_affine(window_automaton(2))
    report = da.check_affine(model, window_automaton(1, 3))
    assert (report["ok"], report["failure"]) == (False, "the model reads 2 symbols, the automaton 3")


def test_check_affine_of_another_target():
    report = da.check_affine(compile_nfsm(resolve_spec("parity")), resolve_spec("parity"))
    assert report == {"ok": False, "failure": "target 'nfsm' is not a shift register", "windows": 0}
