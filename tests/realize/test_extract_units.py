"""Fast unit checks of realize/extract.py (a few seconds in all): the argument checks of ``extract``, its defaults
(those of realize/sample_extract.py), the reachable-configuration search against brute force and at its limit, the
trained-NFSM machine against the model it was read from, and the three verdicts of ``extract_and_compare``."""

import importlib
import inspect
import itertools
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from cases import automaton_named

from fsa2rnn.compiler import compile_nfsm
from fsa2rnn.compiler.targets.nfsm.automaton_to_nfsm import nfsm_model
from fsa2rnn.compiler.targets.nfsm.exact import LayerTables, NFSMMachine
from fsa2rnn.fsa.automaton import Automaton
from fsa2rnn.fsa.errors import LimitExceededError, ModelFileError, SpecError
from fsa2rnn.nn import load_model
from fsa2rnn.nn.model import SequenceModel
from fsa2rnn.realize.moore import MooreMachine
from fsa2rnn.realize.probe import SequenceProbe
from fsa2rnn.realize.sample_extract import sample_extract

ex = importlib.import_module("fsa2rnn.realize.extract")  # the module (the package exports a function of its name)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _all_words(k: int, max_len: int) -> list[np.ndarray]:
    return [np.array(list(itertools.product(range(k), repeat=n))) for n in range(1, max_len + 1)]


def _nfsm(seed: int, vocab: int = 3, classes: int = 2, heads=(3,)) -> SequenceModel:
    torch.manual_seed(seed)
    return SequenceModel(vocab, classes, "nfsm", 1, 8, layer_args={"heads": list(heads)}).double().eval()


def _deltanet(seed: int, classes: int) -> SequenceModel:
    torch.manual_seed(seed)
    net = SequenceModel(3, classes, "deltanet", 1, 8, layer_args={"heads": 1, "head_dim": 4, "value_dim": 4})
    return net.eval()


# ------------------------------------------------------------------------------------------------ extract's checks
def test_extract_accepts_length_and_words_of_one_and_refuses_zero_of_either():
    model = _nfsm(0)
    e = ex.extract(model, symbols=("a", "b", "c"), classes=("x", "y"), length=1, words=1)
    assert e.agreement["lengths"] == [1, 10] and e.agreement["words"] == 1  # AGREEMENT_FACTORS (1, 10) × length
    for length, words in [(0, 5), (5, 0)]:
        with pytest.raises(SpecError, match="a length and a number of words"):
            ex.extract(model, symbols=("a", "b", "c"), classes=("x", "y"), length=length, words=words)


def test_extract_needs_both_names_and_no_more_symbols_than_the_vocabulary():
    model = _nfsm(0)
    with pytest.raises(SpecError, match="names of its symbols and classes"):
        ex.extract(model, classes=("x", "y"), length=3, words=4)
    with pytest.raises(SpecError, match="names of its symbols and classes"):
        ex.extract(model, symbols=("a", "b", "c"), length=3, words=4)
    with pytest.raises(SpecError, match="the model reads 3 tokens"):  # four symbols, the right two classes
        ex.extract(model, symbols=("a", "b", "c", "d"), classes=("x", "y"), length=3, words=4)
    with pytest.raises(SpecError, match="the model reads 3 tokens"):  # three symbols, three classes
        ex.extract(model, symbols=("a", "b", "c"), classes=("x", "y", "z"), length=3, words=4)


def test_extract_refuses_an_empty_alphabet():
    with pytest.raises(SpecError, match="at least one symbol"):
        ex.extract(_nfsm(0), symbols=(), classes=("x", "y"), length=3, words=4)


def test_extract_defaults_are_those_of_sample_extract_and_of_held_out_agreement():
    """The docstring: the sample's sizes and seed as in realize/sample_extract.py; the held-out agreement reported is
    held_out_agreement's with its own defaults (the same words and seed) at the extraction length 40."""
    net = _deltanet(2, 2)  # untrained: an imperfect extraction (the agreement depends on the held-out words drawn)
    symbols, classes = ("a", "b", "c"), ("x", "y")
    e = ex.extract(net, symbols=symbols, classes=classes)
    machine, details = sample_extract(SequenceProbe(net), symbols, classes, length=40)
    assert e.details == details
    assert np.array_equal(e.machine.automaton.transitions, machine.automaton.transitions)
    assert np.array_equal(e.machine.labels, machine.labels)
    assert e.agreement == ex.held_out_agreement(net, e.minimal, length=40)
    assert e.agreement["lengths"] == [40, 400] and e.agreement["words"] == 256
    assert e.agreement["token"][1] < 1.0


def test_extract_caps_k_means_at_sample_extracts_max_clusters():
    net = _deltanet(5, 4)  # untrained, four classes: hundreds of output signatures
    e = ex.extract(net, symbols=("a", "b", "c"), classes=("w", "x", "y", "z"), length=20, words=32)
    cap = inspect.signature(sample_extract).parameters["max_clusters"].default
    assert e.details["signatures"] > cap == e.details["kmeans_k"]


def test_compiled_modules_are_extracted_and_other_objects_refused():
    a = automaton_named("T4")
    module = load_model(compile_nfsm(a))
    e = ex.extract(module, length=6, words=8)
    ids = np.random.default_rng(0).integers(0, a.n_symbols, (16, 30))
    assert np.array_equal(e.minimal.outputs(ids), a.run(ids))
    assert e.minimal.n_states == a.n_states and e.agreement["token"] == [1.0, 1.0]
    only_states = SimpleNamespace(predict_states=module.predict_states)
    only_compiled = SimpleNamespace(compiled=module.compiled)
    for obj in (only_states, only_compiled, object()):
        with pytest.raises(ModelFileError, match="cannot extract"):
            ex.extract(obj, length=3, words=4)


# --------------------------------------------------------------------------------------------- held-out agreement
def test_held_out_words_use_every_symbol():
    """A machine wrong only on symbol a (it ignores a) agrees with the parity model only on the words without a."""
    a = Automaton(np.array([[1, 0], [0, 1]]), states=["even", "odd"], symbols=["a", "b"], initial=0)
    module = load_model(compile_nfsm(a))
    right = MooreMachine(a, np.array([0, 1]), ("even", "odd"))
    blind = MooreMachine(a.replace(transitions=np.array([[0, 1], [0, 1]])), np.array([0, 1]), ("even", "odd"))
    assert ex.held_out_agreement(module, right, length=8, words=64)["sequence"] == [1.0, 1.0]
    got = ex.held_out_agreement(module, blind, length=8, words=64)
    assert got["sequence"][0] < 0.5 and got["token"][1] < 0.8


# ------------------------------------------------------------------------------------- the reachable configurations
def _tree(n: int):
    """Node i of the complete 4-ary tree on n nodes (children 4i + 1 + x; past the last node: back to the root):
    exactly n nodes are reachable from 0, at depth ⌊log₄(3i + 1)⌋."""

    def step(c: np.ndarray, x: int) -> np.ndarray:
        nxt = 4 * c + 1 + x
        return np.where(nxt < n, nxt, 0)

    return step


def _bfs(start: tuple[int, ...], step, k: int) -> dict[tuple[int, ...], int]:
    dist, frontier = {start: 0}, [start]
    while frontier:
        nxt = []
        for s in frontier:
            for x in range(k):
                t = tuple(int(v) for v in step(np.array([s]), x)[0])
                if t not in dist:
                    dist[t] = dist[s] + 1
                    nxt.append(t)
        frontier = nxt
    return dist


def test_reachable_configurations_against_brute_force():
    """Two counters mod 5 and mod 3 (symbol 0: both +1, symbol 1: the first +2, symbol 2: reset the second)."""
    moves = [lambda c: np.stack([(c[:, 0] + 1) % 5, (c[:, 1] + 1) % 3], 1),
             lambda c: np.stack([(c[:, 0] + 2) % 5, c[:, 1]], 1),
             lambda c: np.stack([c[:, 0], np.zeros_like(c[:, 1])], 1)]  # fmt: skip

    def step(c, x):
        return moves[x](c)

    states, table, words, par = ex._reachable_configurations(np.array([2, 1]), step, 3, [5, 3])
    dist = _bfs((2, 1), step, 3)
    assert sorted(map(tuple, states.tolist())) == sorted(dist)
    assert states[0].tolist() == [2, 1] and words[0] == [] and par[0] == -1  # "−1 for the start"
    for i, s in enumerate(states.tolist()):
        assert len(words[i]) == dist[tuple(s)]  # shortest
        c = np.array([[2, 1]])
        for x in words[i]:
            c = step(c, x)
        assert c[0].tolist() == s
        if i:
            assert words[i] == words[par[i]] + [words[i][-1]]
            assert step(states[par[i]][None], words[i][-1])[0].tolist() == s
        for x in range(3):
            assert states[table[x, i]].tolist() == step(states[i][None], x)[0].tolist()
    assert all(dist[tuple(states[i])] <= dist[tuple(states[i + 1])] for i in range(len(states) - 1))  # BFS order


def test_reachable_configurations_limit_is_strict(monkeypatch):
    monkeypatch.setattr(ex, "MAX_TABLE_STATES", 50)
    states, _, words, _ = ex._reachable_configurations(np.array([0]), _tree(50), 4, [50])
    assert len(states) == 50 and max(map(len, words)) == 3
    with pytest.raises(LimitExceededError, match="over 50 machine states"):
        ex._reachable_configurations(np.array([0]), _tree(51), 4, [51])


def test_reachable_configurations_refuse_a_million_and_one():
    n = 1_000_001  # the documented limit (a million) plus one
    with pytest.raises(LimitExceededError, match="over 1000000 machine states"):
        ex._reachable_configurations(np.array([0]), _tree(n), 4, [n])


# --------------------------------------------------------------------------------------------- trained NFSM machines
class _FakeNFSM:
    """A one-layer NFSM-like model that is not table-readable (its layer is no NFSM module): hard tables (k, H, d),
    start (H,), and a classifier reading (configuration after the symbol, symbol) as (Σ indices + symbol) mod c."""

    def __init__(self, tables: np.ndarray, start: np.ndarray, n_classes: int = 2):
        self.tables, self.start, self.c = tables, start, n_classes
        self.config = SimpleNamespace(layer="fake", n_layers=1, input_dim=None)
        self.calls = 0

    def nfsm_tables(self, k: int):
        return self.tables[:k], self.start

    def predict_states(self, ids: torch.Tensor, lengths=None) -> torch.Tensor:
        self.calls += 1
        ids = ids.numpy()
        out = np.zeros(ids.shape, dtype=np.int64)
        heads = np.arange(self.tables.shape[1])
        cfg = np.tile(self.start, (len(ids), 1))
        for t in range(ids.shape[1]):
            cfg = self.tables[ids[:, t]][np.arange(len(ids))[:, None], heads[None, :], cfg]
            out[:, t] = (cfg.sum(1) + ids[:, t]) % self.c
        return torch.from_numpy(out)


def _agrees_on_all_short_words(machine: MooreMachine, model, k: int, max_len: int) -> bool:
    for w in _all_words(k, max_len):
        if not np.array_equal(machine.outputs(w), model.predict_states(torch.from_numpy(w)).numpy()):
            return False
    return True


def test_trained_machine_of_a_model_that_is_not_table_readable():
    rng = np.random.default_rng(3)
    fake = _FakeNFSM(rng.integers(0, 3, (2, 2, 3)), np.array([0, 2]), n_classes=3)
    m = ex._trained_nfsm_machine(fake, ("a", "b"), ("x", "y", "z"))
    assert fake.calls >= 1  # labelled by running the model on shortest words
    assert _agrees_on_all_short_words(m, fake, 2, 6)
    tables, start = fake.tables, fake.start
    pairs = _bfs((*start, 0), lambda n, x: np.r_[tables[x][[0, 1], n[0, :2]], x + 1][None], 2)
    assert m.n_states == len(pairs)


def test_trained_machine_with_one_pair_after_the_start():
    """One symbol whose table fixes the start: the start and one (configuration, a) pair, labelled by the model."""
    fake = _FakeNFSM(np.array([[[1, 1, 0]], [[0, 0, 0]]]), np.array([1]), n_classes=2)
    m = ex._trained_nfsm_machine(fake, ("a",), ("x", "y"))
    assert m.n_states == 2 and m.labels[1] == (1 + 0) % 2  # configuration (1), symbol a = 0
    assert _agrees_on_all_short_words(m, fake, 1, 4)


def test_trained_machine_at_the_key_space_limit():
    """60 heads of 2 indices and 3 symbols: (configuration, last symbol + 1) codes span 2^60 · 4 = 2^62, the limit."""
    tables = np.zeros((3, 60, 2), dtype=np.int64)
    tables[0] = [1, 0]  # symbol a swaps every head, b and c keep them
    tables[1] = tables[2] = [0, 1]
    fake = _FakeNFSM(tables, np.zeros(60, dtype=np.int64), n_classes=2)
    m = ex._trained_nfsm_machine(fake, ("a", "b", "c"), ("x", "y"))
    assert m.n_states == 1 + 2 * 3  # the start, then (all 0 or all 1) × last symbol
    assert _agrees_on_all_short_words(m, fake, 3, 4)


def _fixed_start_nfsm() -> SequenceModel:
    for seed in range(50):
        model = _nfsm(seed, vocab=2, heads=(2,))
        tables, start = model.nfsm_tables(1)
        if tables[0, 0, start[0]] == start[0]:
            return model
    raise AssertionError("no seed gives a fixed start")


def test_table_readable_models_are_labelled_from_their_tables(monkeypatch):
    """The docstring: a table-readable model is labelled through nn/table_predict.py, without running words."""

    def no_words(*args, **kwargs):
        raise AssertionError("ran the model on words")

    model = _nfsm(1, vocab=3, heads=(3, 2))
    truth = ex._trained_nfsm_machine(model, ("a", "b", "c"), ("x", "y"))
    assert _agrees_on_all_short_words(truth, model, 3, 4)
    monkeypatch.setattr(ex, "predict_words", no_words)
    m = ex._trained_nfsm_machine(model, ("a", "b", "c"), ("x", "y"))
    assert np.array_equal(m.labels, truth.labels)
    one = _fixed_start_nfsm()  # one symbol fixing the start: two pairs
    m = ex._trained_nfsm_machine(one, ("a",), ("x", "y"))
    assert m.n_states == 2 and _agrees_on_all_short_words(m, one, 1, 3)


# ------------------------------------------------------------------------------------------ extract_and_compare
def _two_copies(a: Automaton, wrong: bool):
    """A machine of two separate copies of a group automaton's states (indices q and n + q); the start is in the
    first, so the second is unreachable; the readout knows both and, when ``wrong``, maps one copy-2 index wrongly."""
    n, k = a.n_states, a.n_symbols
    tab = np.empty((k, 1, 2 * n), dtype=np.int64)
    for x in range(k):
        for i in range(2 * n):
            tab[x, 0, i] = a.transitions[x, i % n] + n * (i // n)
    machine = NFSMMachine([LayerTables([2 * n], [], tab, k)], [a.initial])
    readout = machine.explore(a, [([i], i % n) for i in range(2 * n)]).readout()
    if wrong:
        j = int(np.flatnonzero(readout.codes == n + 1)[0])
        readout.states[j] = (readout.states[j] + 1) % n
    return nfsm_model(a, machine, readout, construction="single", source="test: two copies")


def test_compare_right_everywhere_right_only_from_the_start_and_wrong_from_it():
    a = automaton_named("T4")  # δ_x bijective: a wrong readout anywhere shows one step later
    good = ex.extract_and_compare(_two_copies(a, False), a, dtype="float32")
    assert good["match"] and good["configurations"] == 2 * a.n_states and good["failing_word"] is None
    assert "realize the automaton" in good["statement"]
    hidden = ex.extract_and_compare(_two_copies(a, True), a, dtype="float32")
    assert not hidden["match"] and hidden["failing_word"] is None
    assert "right from the initial state but not from every configuration" in hidden["statement"]
    t = np.array(a.transitions, copy=True)
    t[:, a.initial] = (t[:, a.initial] + 1) % a.n_states  # every symbol errs from the start: a word of length 1
    bad = ex.extract_and_compare(compile_nfsm(a), a.replace(transitions=t), dtype="float32")
    assert not bad["match"] and len(bad["failing_word"]) == 1
    assert "err on a word of length 1 from the initial state" in bad["statement"]
