"""compile_affine (compiler/definite_to_affine.py): definite automata as nilpotent shift registers (Theorem 4.1's
positive side), checked against Automaton.run, a brute-force definiteness oracle, and by perturbed simulation at the
certified radius."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch
from cases import window_automaton

from fsa2rnn.compiler.targets.affine.definite_to_affine import check_affine, compile_affine, non_definite_witness
from fsa2rnn.fsa import Automaton, resolve_spec
from fsa2rnn.fsa.errors import ConstructionError
from fsa2rnn.nn import load_model
from fsa2rnn.realize.conditions import check_conditions


def brute_definite_degree(a: Automaton, k_max: int = 6) -> int | None:
    """The least k ≤ k_max with δ_w constant on the reachable states for every word of length k (brute force)."""
    reach = a.reachable()
    for k in range(k_max + 1):
        ok = True
        for w in itertools.product(range(reach.n_symbols), repeat=k):
            ends = {int(reach.run(np.array(w, dtype=np.int64), start=q)[-1]) if w else q for q in range(reach.n_states)}
            if len(ends) > 1:
                ok = False
                break
        if ok:
            return k
    return None


def suffix_automaton(rng, alphabet="ab"):
    """The minimal DFA of Σ*·F for a random finite set F of words of length ≤ 4 (definite of degree ≤ 4)."""
    words = {"".join(rng.choice(list(alphabet), size=rng.integers(1, 5))) for _ in range(rng.integers(1, 4))}
    return resolve_spec(f"regex:({'|'.join(alphabet)})*({'|'.join(sorted(words))})")


def _agrees(a: Automaton, model, length=400, words=16, seed=0):
    ids = np.random.default_rng(seed).integers(0, a.n_symbols, (words, length))
    net = load_model(model)
    pred = net.predict_states(torch.from_numpy(ids)).numpy()
    rec = net.predict_states(torch.from_numpy(ids[:, :60]), mode="recurrent").numpy()
    want = a.run(ids, start=np.full(words, model.initial))
    return np.array_equal(pred, want) and np.array_equal(rec, want[:, :60])


def test_fifty_random_definite_automata_compile_verify_and_run():
    rng = np.random.default_rng(0)
    for i in range(50):
        a = suffix_automaton(rng, "ab" if i % 2 else "abc")
        m = compile_affine(a)
        k = m.summary["definite_degree"]
        assert m.summary["verified"] and check_affine(m, a)["ok"]
        assert k == max(1, brute_definite_degree(a, 5))
        assert m.summary["spectral_radius"] == 0.0 and m.summary["robust_radius"] == pytest.approx(1 / (2 * k))
        assert _agrees(a, m, seed=i)


@pytest.mark.parametrize("k", [1, 2, 3, 4])
def test_last_k_symbols_family(k):
    a = window_automaton(k)
    m = compile_affine(a)
    assert m.summary["definite_degree"] == k and m.summary["verified"]
    assert _agrees(a, m, seed=k)
    res = check_conditions(m, 0.9 / (2 * k), simulate=False)  # certified robust below 1/(2k)
    assert res["verdict"] == "robust" and res["radius"] == pytest.approx(1 / (2 * k))


@pytest.mark.parametrize("spec", ["flipflop", "parity", "Z5", "T3", "regex:(a|b)*a(a|b)*"])
def test_non_definite_is_refused_with_a_witness(spec):
    a = resolve_spec(spec)
    with pytest.raises(ConstructionError, match="Theorem 4.1.*witness"):
        compile_affine(a)
    w = non_definite_witness(a.reachable())
    reach = a.reachable()
    # the witness's |Q|-th power is not a constant map (checked by running it from every state)
    word = np.array(w * reach.n_states, dtype=np.int64)
    ends = {int(reach.run(word, start=q)[-1]) for q in range(reach.n_states)}
    assert len(ends) > 1


def test_random_automata_are_refused_exactly_when_not_definite():
    rng = np.random.default_rng(1)
    seen = set()
    for _ in range(40):
        n, s = int(rng.integers(2, 5)), int(rng.integers(1, 3))
        # bias towards resets so that some are definite
        table = rng.integers(0, n, (s, n)) if rng.random() < 0.5 else np.repeat(rng.integers(0, n, (s, 1)), n, 1)
        a = Automaton(table, initial=0)
        definite = brute_definite_degree(a, 6) is not None
        seen.add(definite)
        if definite:
            assert compile_affine(a).summary["verified"]
        else:
            with pytest.raises(ConstructionError):
                compile_affine(a)
    assert seen == {True, False}


def test_certified_radius_is_tight_under_aligned_adversarial_errors():
    """Errors of norm η that all arrive in the oldest block add up to kη: below 1/(2k) the readout holds, above it
    a window decodes wrongly (the perturbation is added to h_t after each step, as in an η-trajectory)."""
    a = window_automaton(3)
    m = compile_affine(a)
    net = load_model(m)
    k, s = 3, 2
    A, B = net.A.numpy(), net.B.numpy()
    eta_star = m.summary["robust_radius"]
    ids = np.random.default_rng(2).integers(0, s, 300)
    want = a.run(ids)

    def simulate(eta):
        h = np.zeros(k * s)
        out = []
        for t, x in enumerate(ids):
            h = A @ h + B[x]
            # push, in the block that will be the oldest at the next multiple of k, toward 0 (away from its code)
            e = np.zeros(k * s)
            j = t % k
            blk = h[j * s : (j + 1) * s]
            e[j * s : (j + 1) * s] = -eta * blk / max(np.linalg.norm(blk), 1e-12)
            h = h + e
            out.append(int(net.decode(torch.from_numpy(h)[None])[0]))
        return np.array(out)

    assert np.array_equal(simulate(0.9 * eta_star), want)
    assert not np.array_equal(simulate(1.1 * eta_star), want)
