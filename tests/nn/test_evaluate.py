"""nn/lmax.py: failing_length against a brute-force scan of every length on the very words it drew."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.automaton import Automaton
from fsa2rnn.nn.lmax import automaton_words, failing_length, stateless


def faulty_predictor(automaton: Automaton, wrong_symbol: int, wrong_state: int):
    """A predictor that runs ``automaton`` with one transition changed (the model of a slightly wrong network)."""
    table = automaton.transitions.copy()
    table[wrong_symbol, wrong_state] = (table[wrong_symbol, wrong_state] + 1) % automaton.n_states
    bad = Automaton(table, initial=automaton.initial)

    def predict(inputs, state):
        start = np.full(len(inputs), bad.initial) if state is None else state
        out = bad.run(inputs, start=start)
        return out, out[:, -1]

    return predict


def recording(source):
    """Wrap a word source so that the test sees every word and target it handed out."""
    seen = []

    def sample(rng, n, length, carry):
        ids, targets, carry = source(rng, n, length, carry)
        seen.append(targets)
        return ids, targets, carry

    return sample, seen


def brute_force_failing_length(predict, seen_targets, ids_chunks, threshold, cap):
    """Scan every length 1..cap on the recorded words: the smallest L whose sequence accuracy is below threshold."""
    targets = np.concatenate(seen_targets, axis=1)
    preds, state, outs = None, None, []
    for ids in ids_chunks:
        preds, state = predict(ids, state)
        outs.append(preds)
    preds = np.concatenate(outs, axis=1)
    for length in range(1, min(cap, targets.shape[1]) + 1):
        right = (preds[:, :length] == targets[:, :length]).all(axis=1)
        if right.mean() < threshold:
            return length
    return None


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    start=st.integers(1, 9),
    cap=st.integers(10, 120),
    chunk=st.integers(1, 13),
    threshold=st.sampled_from([1.0, 0.9, 0.5]),
    wrong=st.tuples(st.integers(0, 1), st.integers(0, 4)),
)
def test_failing_length_equals_brute_force_scan(seed, start, cap, chunk, threshold, wrong):
    # cycle_nav:5 with forward/backward rare (0.05 each) and one of their transitions wrong: first errors are
    # spread over many lengths, so the doubling, the chunk boundaries and the threshold all matter
    a = resolve_spec("cycle_nav:5")
    probs = np.array([0.05, 0.05, 0.9])
    predict = faulty_predictor(a, wrong_symbol=wrong[0], wrong_state=wrong[1])
    source, seen = recording(automaton_words(a, probs=probs))
    ids_chunks = []

    def sample(rng, n, length, carry):
        ids, targets, carry = source(rng, n, length, carry)
        ids_chunks.append(ids)
        return ids, targets, carry

    got, capped = failing_length(
        predict, sample, start=start, cap=cap, n_words=24, threshold=threshold, seed=seed, chunk=chunk
    )
    want = brute_force_failing_length(predict, seen, ids_chunks, threshold, cap)
    assert got == want
    assert capped == (want is None)


def test_exact_predictor_is_capped_and_seed_deterministic():
    a = resolve_spec("S3:gens")
    exact = faulty_predictor(a, 0, 0)
    runs = [failing_length(exact, automaton_words(a), start=8, cap=300, n_words=16, seed=s) for s in (1, 1, 2)]
    assert runs[0] == runs[1]
    assert all(lmax is not None and not capped for lmax, capped in runs)

    def right(inputs, state):
        start = np.full(len(inputs), a.initial) if state is None else state
        out = a.run(inputs, start=start)
        return out, out[:, -1]

    assert failing_length(right, automaton_words(a), start=8, cap=300, n_words=16, seed=3) == (None, True)


def test_same_seed_same_lmax_and_stateless_wrapper_agrees():
    a = resolve_spec("cycle_nav:5")
    probs = np.array([0.02, 0.02, 0.96])
    predict = faulty_predictor(a, 0, 3)

    def whole_words(ids):
        return predict(ids, None)[0]

    kw = dict(start=4, cap=512, n_words=32, seed=7, chunk=5)
    one = failing_length(predict, automaton_words(a, probs=probs), **kw)
    two = failing_length(predict, automaton_words(a, probs=probs), **kw)
    three = failing_length(stateless(whole_words), automaton_words(a, probs=probs), **kw)
    assert one == two == three
    assert one[0] is not None and one[1] is False


@pytest.mark.parametrize(
    "kwargs, match",
    [
        (dict(start=0, cap=10), "start"),
        (dict(start=20, cap=10), "need 1 ≤ start ≤ cap"),
        (dict(start=2, cap=10, threshold=0.0), "threshold"),
        (dict(start=2, cap=10, n_words=0), "n_words"),
    ],
)
def test_bad_arguments(kwargs, match):
    a = resolve_spec("parity")
    with pytest.raises(ValueError, match=match):
        failing_length(faulty_predictor(a, 0, 0), automaton_words(a), **kwargs)
