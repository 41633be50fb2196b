"""Length generalization: the failing length L_max of a sequence predictor (the length-independent paper's faillen).

L_max is the smallest length L at which sequence accuracy on N seeded words drops below a threshold. fsa2rnn judges
length L on the length-L *prefixes* of the same N words, so sequence accuracy is monotone in L and the smallest
failing length is well defined. The search doubles from ``start`` up to ``cap``; at each doubling the words are
*extended* by the next chunk of symbols while the predictor carries its recurrent state, so a length of 2^20 never
holds more than ``n_words × chunk`` symbols in memory. Each word's first wrong position is recorded on the way, and
the smallest failing length is read off them exactly — the answer that bisecting between the last good and the first
bad doubling would give, without rerunning any prefix.

Two protocols: ``prefix`` (:func:`failing_length`, the default everywhere) and ``brandoit``
(:func:`failing_length_fresh`, the authors' ``faillen``: fresh words seeded by (seed, length) at every length judged,
doubling then bisection, and the cap clipped by :func:`clip_cap`).

Callables (plain, so that compiled models, trained models and automata all fit):

- ``predict(inputs, state) -> (predictions, state)``: inputs (N, l) integer array of the next l symbols of every word,
  ``state`` None at the start of the words, else whatever the previous call returned. Predictions (N, l) are
  compared with the targets. :func:`stateless` wraps a predictor that can only read whole words.
- ``sample_words(rng, n_words, length, carry) -> (inputs, targets, carry)``: the next ``length`` symbols of the same
  ``n_words`` words and their targets (a target < 0 is not judged), drawn from the numpy Generator ``rng``;
  ``carry`` is None at the start, else what the previous call returned. :func:`automaton_words` is the word problem
  of an automaton.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ..fsa.automaton import Automaton
from .limits import MAX_LENGTH

Predict = Callable[[np.ndarray, Any], tuple[np.ndarray, Any]]
SampleWords = Callable[[np.random.Generator, int, int, Any], tuple[np.ndarray, np.ndarray, Any]]
WholeWords = Callable[[np.random.Generator, int, int], tuple[np.ndarray, np.ndarray]]

#: the one default cap of every L_max search (train, eval, compare, verify --eta --lmax); the protocols of the papers
#: that state their own set it explicitly and say so (Brandoit et al.: :data:`~fsa2rnn.nn.limits.MAX_LENGTH`, 2^20,
#: the default of :func:`failing_length_fresh`)
DEFAULT_CAP = 4096
#: symbols per word read in one call of ``predict`` during the search
DEFAULT_CHUNK = 2**14


def _check_search(name: str, start: int, cap: int, n_words: int, threshold: float, chunk: int) -> None:
    """The arguments both searches share, checked before any word is drawn."""
    if start < 1 or cap < start:
        raise ValueError(f"{name}: need 1 ≤ start ≤ cap, got start {start}, cap {cap}")
    if n_words < 1 or chunk < 1:
        raise ValueError(f"{name}: n_words and chunk must be ≥ 1, got {n_words} and {chunk}")
    if not 0.0 < threshold <= 1.0:
        raise ValueError(f"{name}: threshold must lie in (0, 1], got {threshold}")


def failing_length(
    predict: Predict,
    sample_words: SampleWords,
    *,
    start: int,
    cap: int = DEFAULT_CAP,
    n_words: int = 512,
    threshold: float = 1.0,
    seed: int = 0,
    chunk: int = DEFAULT_CHUNK,
) -> tuple[int | None, bool]:
    """(L_max, capped): the smallest length whose sequence accuracy is below ``threshold``, or (None, True).

    Length L is judged on the length-L prefixes of the same ``n_words`` words drawn with ``seed``; lengths are
    searched by doubling from ``start`` to ``cap`` (the last step is ``cap`` itself). ``capped`` is True when no
    length up to ``cap`` fails; L_max is then None. A failure below ``start`` is reported exactly too.
    """
    _check_search("failing_length", start, cap, n_words, threshold, chunk)
    rng = np.random.default_rng(seed)
    # a word is right at length L iff first_error > L; at most `allowed` words may be wrong at a passing length
    allowed = int(np.floor(n_words * (1.0 - threshold) + 1e-9))
    first_error = np.full(n_words, np.iinfo(np.int64).max, dtype=np.int64)
    done, state, carry = 0, None, None
    target = start
    while True:
        while done < target:
            step = min(chunk, target - done)
            inputs, targets, carry = sample_words(rng, n_words, step, carry)
            preds, state = predict(inputs, state)
            wrong = (np.asarray(preds) != targets) & (targets >= 0)
            any_wrong = wrong.any(axis=1)
            first = done + 1 + np.argmax(wrong, axis=1)
            first_error = np.where(any_wrong & (first_error > first), first, first_error)
            done += step
        if np.count_nonzero(first_error <= done) > allowed:
            # the (allowed+1)-th smallest first error is the smallest L with more than `allowed` wrong words
            return int(np.partition(first_error, allowed)[allowed]), False
        if done >= cap:
            return None, True
        target = min(2 * target, cap)


#: one sequence's float32 logits must fit in this many bytes: the cap of :func:`clip_cap` (Brandoit et al.'s 1 GiB)
LOGIT_BYTES = 1 << 30
PROTOCOLS = ("prefix", "brandoit")


def clip_cap(cap: int, n_classes: int, start: int) -> int:
    """The largest power of two ≤ ``cap`` at which one sequence's logits (length × n_classes float32) fit in
    :data:`LOGIT_BYTES` (never below ``start``): Brandoit et al.'s clipping (2^15 for M11's 7920 classes)."""
    fits = LOGIT_BYTES // (4 * max(1, n_classes))
    return min(cap, 1 << int(np.log2(max(fits, start))))


def failing_length_fresh(
    predict: Predict,
    sample_words: SampleWords | None,
    *,
    start: int,
    cap: int = MAX_LENGTH,
    n_words: int = 512,
    threshold: float = 1.0,
    seed: int = 0,
    chunk: int = DEFAULT_CHUNK,
    whole_words: WholeWords | None = None,
) -> tuple[int | None, bool, dict[int, float]]:
    """Brandoit et al.'s failing length (their ``faillen``): (L_max, capped, {length: sequence accuracy}).

    Length L is judged on ``n_words`` fresh words drawn with the seed (``seed``, L), read ``chunk`` symbols at a
    time; the search doubles from ``start`` while the accuracy reaches ``threshold``, up to ``cap``, then bisects
    between the last passing and the first failing length. L_max is the smallest failing length found (``start``
    itself when it fails); (None, True) when ``cap`` passes. Accuracy over fresh words need not be monotone in L:
    the bisection assumes it, as the authors do. ``whole_words(rng, n, L) -> (inputs, targets)``, when given,
    replaces ``sample_words`` for words that depend on their length (TSO_N's question comes last): they are drawn
    whole, at most ``n_words × chunk`` symbols at a time (as many words as fit), and read ``chunk`` symbols at a time.
    """
    _check_search("failing_length_fresh", start, cap, n_words, threshold, chunk)
    trace: dict[int, float] = {}

    def accuracy(length: int) -> float:
        if length not in trace:
            rng = np.random.default_rng([abs(int(seed)), length])
            if whole_words is not None:
                trace[length] = _whole_word_accuracy(predict, whole_words, rng, n_words, length, chunk)
                return trace[length]
            right = np.ones(n_words, dtype=bool)
            done, state, carry = 0, None, None
            while done < length:
                step = min(chunk, length - done)
                inputs, targets, carry = sample_words(rng, n_words, step, carry)
                preds, state = predict(inputs, state)
                right &= ~((np.asarray(preds) != targets) & (targets >= 0)).any(axis=1)
                done += step
            trace[length] = float(right.mean())
        return trace[length]

    low, length = None, start
    while accuracy(length) >= threshold:
        if length >= cap:
            return None, True, trace
        low, length = length, min(2 * length, cap)
    high = length
    if low is None:
        return high, False, trace
    while high - low > 1:
        mid = (low + high) // 2
        if accuracy(mid) >= threshold:
            low = mid
        else:
            high = mid
    return high, False, trace


def _whole_word_accuracy(
    predict: Predict, whole_words: WholeWords, rng: np.random.Generator, n_words: int, length: int, chunk: int
) -> float:
    """Fraction of ``n_words`` words of ``length`` drawn whole that are right at every judged position."""
    per_group = max(1, min(n_words, n_words * chunk // length))
    right, done = 0, 0
    while done < n_words:
        rows = min(per_group, n_words - done)
        inputs, targets = whole_words(rng, rows, length)
        ok, state = np.ones(rows, dtype=bool), None
        for lo in range(0, length, chunk):
            preds, state = predict(inputs[:, lo : lo + chunk], state)
            t = targets[:, lo : lo + chunk]
            ok &= ~((np.asarray(preds) != t) & (t >= 0)).any(axis=1)
        right, done = right + int(ok.sum()), done + rows
    return right / n_words


def sequence_accuracy(first_error: np.ndarray, length: int) -> float:
    """Fraction of words right at every position up to ``length`` (first_error: 1-based, a large value if none)."""
    return float(np.mean(np.asarray(first_error) > length))


def automaton_words(automaton: Automaton, *, probs: np.ndarray | None = None) -> SampleWords:
    """The word problem of ``automaton`` as a word source: symbols i.i.d. (uniform, or ``probs``), targets the states.

    The carry is the automaton's current state of every word, so successive chunks continue the same words.
    """
    if automaton.initial is None:
        raise ValueError("automaton_words: the automaton has no initial state")
    k = automaton.n_symbols
    p = None if probs is None else np.asarray(probs, dtype=np.float64)
    if p is not None and (p.shape != (k,) or np.any(p < 0) or not np.isclose(p.sum(), 1.0)):
        raise ValueError(f"automaton_words: probs must be {k} non-negative numbers summing to 1")

    def sample(rng: np.random.Generator, n_words: int, length: int, carry: Any) -> tuple[np.ndarray, np.ndarray, Any]:
        start = np.full(n_words, automaton.initial) if carry is None else carry
        ids = rng.choice(k, size=(n_words, length), p=p) if p is not None else rng.integers(0, k, (n_words, length))
        states = automaton.run(ids, start=start)
        return ids, states, states[:, -1]

    return sample


def stateless(predict_words: Callable[[np.ndarray], np.ndarray]) -> Predict:
    """Adapt a predictor of whole words (inputs (N, L) → predictions (N, L)) to the chunked protocol.

    The state is the prefix read so far; each call reruns the whole prefix (quadratic in length — for models, such as
    a Transformer, that carry no recurrent state).
    """

    def predict(inputs: np.ndarray, state: Any) -> tuple[np.ndarray, Any]:
        prefix = inputs if state is None else np.concatenate([state, inputs], axis=1)
        preds = np.asarray(predict_words(prefix))
        return preds[:, -inputs.shape[1] :], prefix

    return predict


__all__ = [
    "DEFAULT_CAP",
    "PROTOCOLS",
    "automaton_words",
    "clip_cap",
    "failing_length",
    "failing_length_fresh",
    "sequence_accuracy",
    "stateless",
]
