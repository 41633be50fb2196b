"""The exact interpreters' own checks and edges (compiler/targets/*/exact.py): what they refuse, what they answer
for words and codes outside the reachable set, and the exploration's limit at its boundary — each against a
hand-built machine whose answer is known."""

from __future__ import annotations

import numpy as np
import pytest

from fsa2rnn.compiler import compile_affine, compile_pdssm
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.registry import program_of
from fsa2rnn.compiler.targets.affine.exact import ExactAffine
from fsa2rnn.compiler.targets.nfsm import exact as nx
from fsa2rnn.compiler.targets.nfsm.exact import LayerTables, NFSMMachine
from fsa2rnn.compiler.targets.pdssm import automaton_to_pdssm as pdssm_build
from fsa2rnn.compiler.targets.pdssm.exact import ExactPDSSM
from fsa2rnn.fsa import Automaton, resolve_spec
from fsa2rnn.fsa.errors import ConstructionError, LimitExceededError, ModelFileError


# ------------------------------------------------------------------------------------------------------- PD-SSM
def _pdssm_with_h0(h0: list[float]) -> CompiledModel:
    m = compile_pdssm(resolve_spec("S3"))
    tensors = dict(m.tensors)
    tensors["pd.h0"] = np.asarray(h0, dtype=tensors["pd.h0"].dtype)
    return CompiledModel(dict(m.header), tensors).seal()


def test_pdssm_exact_takes_only_a_one_hot_start():
    m = compile_pdssm(resolve_spec("S3"))
    n = len(m.tensors["pd.h0"])
    assert ExactPDSSM(program_of(m)).start == int(np.flatnonzero(m.tensors["pd.h0"] == 1)[0])
    two = [1.0, 1.0] + [0.0] * (n - 2)  # entries in {0, 1}, but two ones: no single code point
    half = [0.5] + [0.0] * (n - 1)  # one nonzero entry, not 1
    for h0 in (two, half):
        with pytest.raises(ModelFileError, match="one-hot"):
            ExactPDSSM(program_of(_pdssm_with_h0(h0), integrity=False))


# ------------------------------------------------------------------------------------------------------- affine
def test_affine_exact_answers_an_empty_word_with_an_empty_row():
    a = resolve_spec("regex:(a|b)*ab")  # definite: the state is read off the last two symbols
    ex = ExactAffine(program_of(compile_affine(a)))
    out = ex.predict_states(np.zeros((3, 0), dtype=np.int64))
    assert out.shape == (3, 0) and out.dtype.kind == "i"
    ids = np.random.default_rng(0).integers(0, a.n_symbols, (4, 12))
    assert np.array_equal(ex.predict_states(ids), a.run(ids))


# --------------------------------------------------------------------------------------------------------- NFSM
def _cycle_machine(n: int) -> tuple[NFSMMachine, object]:
    """One head of n indices stepping as the cyclic group Z_n does (symbol x adds x), with Z_n's automaton."""
    a = resolve_spec(f"Z{n}")
    tab = np.empty((a.n_symbols, 1, n), dtype=np.int64)
    for x in range(a.n_symbols):
        tab[x, 0] = a.transitions[x]
    return NFSMMachine([LayerTables([n], [], tab, a.n_symbols)], [a.initial]), a


def test_readout_lookup_of_an_unvisited_code_is_minus_one():
    machine, a = _cycle_machine(5)
    readout = machine.explore(a, [([a.initial], a.initial)]).readout()
    assert np.array_equal(readout.lookup(readout.codes), readout.states)
    assert readout.lookup(np.array([999, 5, -3])).tolist() == [-1, -1, -1]  # codes no pair was visited at


def test_a_configuration_reached_with_two_states_is_named_with_both():
    """Pairs (index, state) (0, 0), (1, 1), (3, 1), (3, 3): index 3 alone is reached with two states, and it is not
    the first index in code order; the error names it and both of its states."""
    machine, _ = _cycle_machine(5)
    n = 5
    parent = dict.fromkeys([0 * n + 0, 1 * n + 1, 3 * n + 1, 3 * n + 3])
    with pytest.raises(ConstructionError, match=r"head indices \[3\] are reached with two automaton states \(1 and 3"):
        nx.Exploration(parent, n, machine).readout()
    fine = dict.fromkeys([0 * n + 0, 1 * n + 1, 3 * n + 3])
    assert nx.Exploration(fine, n, machine).readout().lookup(np.array([0, 1, 3, 2])).tolist() == [0, 1, 3, -1]


def test_the_failing_word_is_a_shortest_one_from_its_start():
    """A readout wrong at one index only: the exploration's word leads there from the start, and no shorter word
    does (brute force over all shorter words)."""
    machine, a = _cycle_machine(5)
    readout = machine.explore(a, [([0], 0)]).readout()
    readout.states[readout.codes == 3] = 1  # index 3 read wrongly
    res = machine.explore(a, [([0], 0)], readout=readout)
    assert res.failing == 3 * a.n_states + 3 and res.word is not None
    assert a.run(np.array([res.word]))[0, -1] == 3
    for length in range(1, len(res.word)):
        words = np.array(list(np.ndindex(*(a.n_symbols,) * length)))
        assert not (a.run(words)[:, -1] == 3).any()
    clean = machine.explore(a, [([0], 0)], readout=machine.explore(a, [([0], 0)]).readout())
    assert clean.failing is None and clean.word is None


def test_a_layer_may_read_only_the_heads_of_the_layers_above():
    tab0 = np.zeros((2, 1, 2), dtype=np.int64)
    tab1 = np.zeros((2 * 2, 1, 2), dtype=np.int64)  # keyed by (symbol, head 0)
    NFSMMachine([LayerTables([2], [], tab0, 2), LayerTables([2], [0], tab1, 2)], [0, 0])  # head 0 is above
    with pytest.raises(ConstructionError, match="only heads of the layers above"):
        NFSMMachine([LayerTables([2], [], tab0, 2), LayerTables([2], [1], tab1, 2)], [0, 0])  # its own first head


def test_the_exploration_limit_counts_pairs_inclusively(monkeypatch):
    """Z_6 from one start visits exactly 6 pairs: a limit of 6 allows it, 5 refuses it (the limit is the largest
    number of pairs visited, docstring of MAX_PAIRS)."""
    machine, a = _cycle_machine(6)
    monkeypatch.setattr(nx, "MAX_PAIRS", 6)
    assert len(machine.explore(a, [([0], 0)]).parent) == 6
    monkeypatch.setattr(nx, "MAX_PAIRS", 5)
    with pytest.raises(LimitExceededError, match="over 5 "):
        machine.explore(a, [([0], 0)])


# ------------------------------------------------------------------------------------- PD-SSM construction
def _with(m: CompiledModel, **tensors: np.ndarray) -> CompiledModel:
    t = dict(m.tensors)
    t.update(tensors)
    return CompiledModel(dict(m.header), t).seal()


def test_pdssm_realized_automaton_is_the_compiled_one_and_keeps_unreached_states_fixed():
    """States 0-1 reachable, state 2 not (its row leads to 0): the realized automaton has the compiled transitions
    on 0-1, a self-loop on 2 (never explored), the initial state and the accepting set."""
    a = Automaton(np.array([[1, 0, 0], [0, 1, 0]]), states=["p", "q", "r"], symbols=["a", "b"], initial=0,
                  accepting=[1], name="two-and-one")  # fmt: skip
    r = pdssm_build.realized_automaton(compile_pdssm(a))
    assert np.array_equal(r.transitions, np.array([[1, 0, 2], [0, 1, 2]]))
    assert r.initial == 0 and list(r.accepting_states) == [1]
    b = resolve_spec("regex:(a|b)*ab")  # every state reachable
    rb = pdssm_build.realized_automaton(compile_pdssm(b))
    assert np.array_equal(rb.transitions, b.transitions)
    assert list(rb.accepting_states) == list(b.accepting_states)


def test_pdssm_realized_automaton_refuses_what_no_automaton_does():
    a = resolve_spec("S3")
    m = compile_pdssm(a)
    n = len(m.tensors["pd.h0"])
    with pytest.raises(ModelFileError, match="one-hot"):
        pdssm_build.realized_automaton(_with(m, **{"pd.h0": np.array([1.0, 1.0] + [0.0] * (n - 2))}))
    d = m.tensors["pd.D"].copy()
    d[0, a.initial] = 0.5
    with pytest.raises(ModelFileError, match="leave the one-hot code points"):
        pdssm_build.realized_automaton(_with(m, **{"pd.D": d}))
    # coordinates 0 and 1 both read as state 0 but lead, under symbol 0, to coordinates of different states
    readout = m.tensors["readout.states"].copy()
    p = m.tensors["pd.P"].copy()
    q0 = int(np.flatnonzero(m.tensors["pd.h0"] == 1)[0])
    other = (q0 + 1) % n
    readout[other] = readout[q0]
    p[:, q0] = other  # every symbol leads from the start to `other` (reads as the start's state)
    p[1:, other] = q0
    p[0, other] = (q0 + 2) % n  # ... and from `other`, symbol 0 leads to a third state: (start, 0) has two
    with pytest.raises(ModelFileError, match="two successors"):
        pdssm_build.realized_automaton(_with(m, **{"readout.states": readout, "pd.P": p}))


def test_check_pdssm_refuses_other_targets_and_other_automata():
    a = resolve_spec("S3")
    ok = pdssm_build.check_pdssm(compile_pdssm(a), a)
    assert ok["ok"] and ok["checked"] == a.n_states * a.n_symbols
    other = pdssm_build.check_pdssm(compile_affine(resolve_spec("regex:(a|b)*ab")), a)
    assert not other["ok"] and "not a pdssm model" in other["failure"]
    more_states = Automaton(np.zeros((a.n_symbols, a.n_states + 1), dtype=np.int64), symbols=list(a.symbols))
    res = pdssm_build.check_pdssm(compile_pdssm(a), more_states)  # same alphabet, one state more
    assert not res["ok"] and "alphabet or states differ" in res["failure"]


def test_compile_pdssm_limit_summary_and_verification(monkeypatch):
    a = resolve_spec("S3")
    m = compile_pdssm(a)
    s = m.header["summary"]
    assert s["verified"] is True and "verification_failure" not in s
    assert s["layers"] == len(m.header["layers"]) == 1 and s["width"] == a.n_states
    assert compile_pdssm(a, verify=False).header["summary"]["verified"] is False
    entries = a.n_states * a.n_symbols
    monkeypatch.setattr(pdssm_build, "MAX_ENTRIES", entries)
    compile_pdssm(a)  # exactly at the limit
    monkeypatch.setattr(pdssm_build, "MAX_ENTRIES", entries - 1)
    with pytest.raises(LimitExceededError, match=f"needs {entries} index entries"):
        compile_pdssm(a)
