"""Table extraction: tables read back from the logits at a dtype, compared with the target up to relabelling
(a homomorphism from the realized machine onto the automaton), with a shortest failing word when they differ."""

import itertools

import numpy as np
import pytest
import torch
from cases import automaton_named, random_automaton

from fsa2rnn.compiler import compile_nfsm
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.targets.nfsm.automaton_to_nfsm import nfsm_model
from fsa2rnn.compiler.targets.nfsm.exact import LayerTables, NFSMMachine
from fsa2rnn.nn import load_model
from fsa2rnn.realize.extract import extract_and_compare, extracted_automaton, failing_word

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.mark.parametrize("name,kw", [("T4", {}), ("T4", {"layers": "stacked"}), ("S5", {}), ("gridworld:3", {})])
def test_extracted_automaton_equals_target(name, kw):
    a = automaton_named(name)
    model = compile_nfsm(a, **kw)
    e = extracted_automaton(model)
    assert np.array_equal(e.transitions, a.transitions)
    assert e.states == a.states and e.initial == a.initial


def _corrupt(model: CompiledModel, key: int, row: int, new: int) -> CompiledModel:
    """Move the margin of (key, row) of a single-head model onto column ``new`` (re-sealed: wrong but intact)."""
    tensors = {k: v.copy() for k, v in model.tensors.items()}
    d = model.header["layers"][0]["heads"][0]
    w = tensors["layers.0.weight"]
    w[row * d : (row + 1) * d, key] = 0.0
    w[row * d + new, key] = model.header["margin"]
    return CompiledModel(dict(model.header), tensors).seal()


def _brute_first_error(module, a, max_len):
    """Independent oracle: every word up to max_len, in order of length; the first on which the model errs."""
    for n in range(1, max_len + 1):
        words = np.array(list(itertools.product(range(a.n_symbols), repeat=n)))
        got = module.predict_states(torch.from_numpy(words)).numpy()
        bad = np.flatnonzero(np.any(got != a.run(words), axis=1))
        if len(bad):
            return n
    return None


def test_corrupted_table_is_found_with_a_shortest_failing_word():
    a = random_automaton(6, 2, 41)
    model = compile_nfsm(a, heads="single", layers="single")
    # corrupt δ_b on a state reachable from q0, far from it
    reach = a.run(np.array([[0, 0, 1, 0]]))[0]
    q = int(reach[-1])
    new = (int(a.transitions[1, q]) + 1) % 6
    bad = _corrupt(model, key=1, row=q, new=new)
    report = extract_and_compare(bad, a, dtype="float32")
    assert not report["match"] and report["failing_word"] is not None
    word = [a.symbol_index(x) for x in report["failing_word"]]
    module = load_model(bad)
    got = module.predict_states(torch.tensor([word])).numpy()[0]
    want = a.run(np.array(word))
    assert got[-1] != want[-1] and np.array_equal(got[:-1], want[:-1])
    assert _brute_first_error(module, a, len(word)) == len(word)  # shortest
    assert extracted_automaton(bad).transitions[1, q] == new


def test_homomorphism_up_to_relabelling_and_redundant_indices():
    """A machine with relabelled and duplicated indices (d = 2n) still realizes the automaton: the readout is a
    homomorphism onto it; mapping one duplicate wrongly breaks it."""
    a = random_automaton(5, 3, 7)
    n = a.n_states
    perm = np.random.default_rng(0).permutation(2 * n)  # index i ∈ [0, 2n) stands for state (perm⁻¹ i) mod n
    inv = np.argsort(perm)
    tab = np.empty((3, 1, 2 * n), dtype=np.int64)
    for x in range(3):
        for i in range(2 * n):
            k = inv[i]
            tgt = a.transitions[x, k % n] + n * ((k // n + x) % 2)  # hop between the two copies
            tab[x, 0, i] = perm[tgt]
    machine = NFSMMachine([LayerTables([2 * n], [], tab, 3)], [perm[a.initial]])
    lifts = [([int(perm[q])], q) for q in range(n)]
    readout = machine.explore(a, lifts).readout()
    assert len(readout.codes) == 2 * n
    model = nfsm_model(a, machine, readout, construction="single", source="test: relabelled copies")
    assert extract_and_compare(model, a, dtype="bfloat16")["match"]
    ids = np.random.default_rng(1).integers(0, 3, (2, 300))
    assert np.array_equal(load_model(model).predict_states(torch.from_numpy(ids)).numpy(), a.run(ids))
    broken = readout.states.copy()
    j = int(np.flatnonzero(readout.codes == perm[n + 1])[0])  # a copy of state 1
    broken[j] = (broken[j] + 1) % n
    tensors = dict(model.tensors)
    tensors["readout.states"] = broken
    report = extract_and_compare(CompiledModel(dict(model.header), tensors).seal(), a, dtype="bfloat16")
    assert not report["match"]


def test_failing_word_none_when_correct():
    a = automaton_named("flipflop")
    assert failing_word(compile_nfsm(a), a, "float16") is None


def test_compare_defaults_to_the_stored_automaton_and_otherwise_uses_the_one_given():
    """Without an automaton the tables are compared with the model's stored target; with one, with that one: the
    same model against its automaton with one transition redirected (δ_0(q0) + 1) does not match, from a word that
    starts with symbol 0."""
    a = automaton_named("T4")
    model = compile_nfsm(a)
    assert extract_and_compare(model)["match"]
    t = np.array(a.transitions, copy=True)
    t[0, a.initial] = (t[0, a.initial] + 1) % a.n_states
    report = extract_and_compare(model, a.replace(transitions=t))
    assert not report["match"] and report["failing_word"][0] == a.symbols[0]
