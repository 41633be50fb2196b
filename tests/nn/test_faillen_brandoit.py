"""Brandoit et al.'s L_max protocol (nn/lmax.py: failing_length_fresh, clip_cap) against known failing lengths."""

import numpy as np
import pytest

from fsa2rnn.fsa import resolve_spec
from fsa2rnn.nn.lmax import automaton_words, clip_cap, failing_length_fresh


def _predictor(a, wrong_from: int | None, fraction: float = 1.0):
    """The automaton itself, wrong from position ``wrong_from`` (1-based) on the first ``fraction`` of the words."""

    def predict(inputs, state):
        done, q = (0, np.full(inputs.shape[0], a.initial)) if state is None else state
        states = a.run(inputs, start=q)
        out = states.copy()
        if wrong_from is not None:
            pos = done + 1 + np.arange(inputs.shape[1])
            rows = np.arange(inputs.shape[0]) < int(fraction * inputs.shape[0])
            out[np.ix_(rows, pos >= wrong_from)] = (out[np.ix_(rows, pos >= wrong_from)] + 1) % a.n_states
        return out, (done + inputs.shape[1], states[:, -1])

    return predict


@pytest.mark.parametrize("wrong_from,chunk", [(101, 7), (64, 64), (65, 1000), (3000, 256)])
def test_doubling_then_bisection_finds_the_exact_failing_length(wrong_from, chunk):
    a = resolve_spec("S3")
    l_max, capped, trace = failing_length_fresh(
        _predictor(a, wrong_from), automaton_words(a), start=64, cap=4096, n_words=16, seed=3, chunk=chunk
    )
    assert (l_max, capped) == (wrong_from, False)
    assert all(acc == (1.0 if n < wrong_from else 0.0) for n, acc in trace.items())


def test_cap_passes_and_threshold_of_baselines():
    a = resolve_spec("Z5")
    assert failing_length_fresh(_predictor(a, None), automaton_words(a), start=64, cap=1000, n_words=8)[:2] == (
        None,
        True,
    )
    # a quarter of the words wrong from 200 on: accuracy 0.75 fails the bar 1.0 at 200 and passes a bar of 0.7
    half = _predictor(a, 200, fraction=0.25)
    assert failing_length_fresh(half, automaton_words(a), start=64, cap=1024, n_words=8, threshold=1.0)[0] == 200
    assert failing_length_fresh(half, automaton_words(a), start=64, cap=1024, n_words=8, threshold=0.7)[:2] == (
        None,
        True,
    )


def test_fresh_words_are_seeded_by_seed_and_length():
    a = resolve_spec("S3")
    seen = []

    def record(inputs, state):
        seen.append(inputs.copy())
        return _predictor(a, None)(inputs, state)

    failing_length_fresh(record, automaton_words(a), start=64, cap=128, n_words=4, seed=5, chunk=1000)
    first = list(seen)
    seen.clear()
    failing_length_fresh(record, automaton_words(a), start=64, cap=128, n_words=4, seed=5, chunk=1000)
    assert all(np.array_equal(x, y) for x, y in zip(first, seen))
    assert not np.array_equal(first[0], first[1][:, :64])  # length 128 draws fresh words, not a continuation


def test_clip_cap_keeps_one_words_logits_in_a_gibibyte():
    assert clip_cap(2**20, 7920, 64) == 2**15  # M11: the authors' ≥ 32k
    assert clip_cap(2**20, 60, 64) == 2**20
    assert clip_cap(2**20, 10**9, 64) == 64
