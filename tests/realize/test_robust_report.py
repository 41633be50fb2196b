"""``robust_report`` (what ``fsa2rnn verify --eta`` adds) and ``check_conditions``' defaults (realize/conditions.py).

Oracles: the verdict's own witness (Theorem 4.1 (i): prefix p and cycle w, symbol names) and the calls the report
makes to the L_max search, recorded by a stand-in that returns at once."""

from __future__ import annotations

import pytest

from fsa2rnn.compiler import compile_householder, compile_nfsm
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.realize import conditions
from fsa2rnn.realize.conditions import LMAX_WORDS, check_conditions, robust_report

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_robust_report_runs_no_l_max_search_unless_asked(monkeypatch):
    monkeypatch.setattr(conditions, "l_max", lambda *a, **k: pytest.fail("an L_max search without lmax=True"))
    out = robust_report(compile_nfsm(resolve_spec("flipflop")), None, eta=0.1)
    assert out["verdict"] == "robust" and out["l_max"] is None and out["l_max_capped"] is None
    assert "cap" not in out and "l_max_witness" not in out


@pytest.mark.parametrize(("kind", "n_witness"), [("adversarial", 1), ("random", LMAX_WORDS)])
def test_robust_report_searches_the_witness_word_p_w_w_with_its_prefix(monkeypatch, kind, n_witness):
    """Theorem 4.1 (i)'s witness with a nonempty prefix (the cascade of regex ab(aa)*: p = b, w = aa): the second
    L_max search runs p·w·w·… — the prefix included — on one word when the perturbation is adversarial (it is then
    deterministic), on LMAX_WORDS words when it is random."""
    calls = []

    def fake(model, **kw):
        calls.append(kw)
        return {"l_max": 40 if "witness" in kw else None, "l_max_capped": "witness" not in kw}

    monkeypatch.setattr(conditions, "l_max", fake)
    model = compile_householder(resolve_spec("regex:ab(aa)*"))
    res = check_conditions(model, 0.01, simulate=False)
    assert res["theorem"] == "Theorem 4.1 (i)" and res["witness_prefix"] == ["b"] and res["witness"] == ["a", "a"]
    symbols = list(model.symbols)
    out = robust_report(model, None, eta=0.01, perturbation_kind=kind, lmax=True, cap=64)
    assert len(calls) == 2 and "witness" not in calls[0] and calls[0]["n_words"] == LMAX_WORDS
    assert calls[1]["witness"] == ([symbols.index("b")], [symbols.index("a")] * 2)
    assert calls[1]["n_words"] == n_witness and calls[0]["cap"] == calls[1]["cap"] == 64
    assert (out["l_max"], out["l_max_witness"], out["l_max_witness_capped"], out["cap"]) == (None, 40, False, 64)


def test_check_conditions_simulates_by_default():
    """``simulate=True`` is the default: a robust NFSM verdict at η > 0 carries its adversarial simulation."""
    res = check_conditions(compile_nfsm(resolve_spec("flipflop")), 0.1, cap=64)
    assert res["verdict"] == "robust" and res["simulation"] is not None and res["simulation"]["cap"] == 64
    assert check_conditions(compile_nfsm(resolve_spec("flipflop")), 0.1, simulate=False)["simulation"] is None


def test_the_default_seed_is_0(monkeypatch):
    """Every random choice of a default run is seed 0's (check_conditions' failing-word search, robust_report's L_max
    searches): the default run is reproducible and equal to ``seed=0``'s."""
    seeds = []
    real = conditions.trajectory_failing_word

    def spy(*a, **k):
        seeds.append(k["seed"])
        return real(*a, **k)

    monkeypatch.setattr(conditions, "trajectory_failing_word", spy)
    ff = compile_nfsm(resolve_spec("flipflop"))
    star = check_conditions(ff, 0.0)["radius"]
    assert check_conditions(ff, star)["verdict"] == "not_robust" and seeds == [0]
    calls = []
    monkeypatch.setattr(conditions, "l_max", lambda model, **kw: calls.append(kw) or {"l_max": None,
                                                                                       "l_max_capped": True})
    robust_report(ff, None, eta=0.1, lmax=True, cap=64)
    assert [c["seed"] for c in calls] == [0]


def test_failing_word_searches_64_steps_by_default():
    """trajectory_failing_word looks ``length`` = 64 steps deep by default: Z5's rotation fails first at its horizon
    ⌈r/η⌉ (the error grows by η per step, Theorem 4.1 (i)); at a horizon of 65 the default search finds nothing, a
    search of 65 steps finds a word of length 65, the same as seed 0's."""
    from fsa2rnn.realize.conditions import trajectory_failing_word
    from fsa2rnn.realize.steppers import stepper_for

    z5 = compile_householder(resolve_spec("Z5"))
    st, a = stepper_for(z5), resolve_spec("Z5")
    eta = st.radius / 64.5
    assert check_conditions(z5, eta, simulate=False)["horizon"] == 65
    assert trajectory_failing_word(st, a, eta=eta) is None
    word = trajectory_failing_word(st, a, eta=eta, length=65)
    assert len(word) == 65 and word == trajectory_failing_word(st, a, eta=eta, length=65, n_words=64, seed=0)


def test_a_shift_register_is_nilpotent_rho_0():
    """compile_affine's shift register: A is nilpotent, so the verdict reports ρ = 0 and the certified radius."""
    from fsa2rnn.compiler import compile_affine

    res = check_conditions(compile_affine(resolve_spec("regex:(a|b)*ab")), 0.01, simulate=False)
    assert res["verdict"] == "robust" and res["spectral_radius"] == 0.0 and res["radius"] > 0.01


def test_check_conditions_simulates_a_horizon_up_to_1024_by_default():
    """check_conditions' documented default cap (SIMULATION_CAP = 1024): Z5's witness at a horizon ⌈r/η⌉ of 1024 is
    simulated and fails there (Theorem 4.1 (i)); at a horizon of 1025 it is beyond the default cap and not simulated."""
    from fsa2rnn.realize.steppers import stepper_for

    z5 = compile_householder(resolve_spec("Z5"))
    r = stepper_for(z5).radius
    at = check_conditions(z5, r / 1023.5)
    assert at["horizon"] == 1024 and at["simulation"]["l_max"] == 1024 and at["simulation"]["cap"] == 1024
    beyond = check_conditions(z5, r / 1024.5)
    assert beyond["horizon"] == 1025 and beyond["simulation"] is None


def test_the_searches_start_at_length_16_and_accept_the_caps_verify_accepts():
    """The L_max searches (check_conditions' simulation, robust_report's L_max) start at length 16: Z5 at a horizon
    ⌈r/η⌉ of 16 fails exactly there (every η-trajectory is right for t < r/η, Theorem 4.1 (i), and the adversary
    reaches the boundary), which a search starting above 16 cannot report; robust_report accepts the smallest cap
    ``verify --cap`` accepts (cli/verify.py's LMAX_START)."""
    from fsa2rnn.cli.verify import LMAX_START as VERIFY_START
    from fsa2rnn.realize.steppers import stepper_for

    z5 = compile_householder(resolve_spec("Z5"))
    eta = stepper_for(z5).radius / 15.5
    sim = check_conditions(z5, eta, cap=64)
    assert sim["horizon"] == 16 and sim["simulation"]["l_max"] == 16
    out = robust_report(z5, None, eta=eta, lmax=True, cap=64)
    assert (out["l_max"], out["l_max_witness"]) == (16, 16)
    assert robust_report(z5, None, eta=eta, lmax=True, cap=VERIFY_START)["l_max"] == 16
    with pytest.raises(SpecError, match="below the start length"):
        robust_report(z5, None, eta=eta, lmax=True, cap=VERIFY_START - 1)


def test_robust_report_searches_32_random_words():
    """``verify --lmax`` (its --help): the L_max search runs on 32 random words. Under random perturbations of a shift
    register above its certified radius the failing length depends on how many words are tried (seed 0: 32 words
    fail first at another length than 33), and robust_report's is the 32 words'."""
    from fsa2rnn.compiler import compile_affine
    from fsa2rnn.realize.robust import l_max
    from fsa2rnn.realize.steppers import stepper_for

    a = resolve_spec("regex:(a|b)*ab")
    model = compile_affine(a)
    eta = 1.5 * check_conditions(model, 0.0, simulate=False)["radius"]
    st = stepper_for(model)
    kw = dict(stepper=st, automaton=a, eta=eta, perturbation_kind="random", start=16, cap=64, seed=0)
    l32, l33 = (l_max(None, n_words=n, **kw)["l_max"] for n in (32, 33))
    assert l32 != l33
    assert robust_report(model, None, eta=eta, perturbation_kind="random", lmax=True, cap=64)["l_max"] == l32


def test_the_drift_plot_draws_8_random_words_over_the_alphabet_up_to_length_4096(monkeypatch, tmp_path):
    """``verify --plot`` (its --help): the drift of 8 random words and the witness word, up to length
    min(--cap, 4096); the random words draw every symbol of the alphabet."""
    import numpy as np

    words = {}
    monkeypatch.setattr(conditions, "drift", lambda stepper, ids, **kw: words.setdefault(len(words), ids))
    monkeypatch.setattr(conditions, "plot_drift", lambda curves, path, title="": path)
    z5 = compile_householder(resolve_spec("Z5"))
    conditions.robust_report(z5, None, eta=0.01, cap=5000, plot=str(tmp_path / "d.png"))
    random_words, witness = words[0], words[1]
    assert random_words.shape == (8, 4096) and witness.shape == (1, 4096)
    assert set(np.unique(random_words).tolist()) == set(range(len(z5.symbols)))
    conditions.robust_report(z5, None, eta=0.01, cap=300, plot=str(tmp_path / "d.png"))
    assert words[2].shape == (8, 300)


def test_robust_report_searches_up_to_2_to_the_14_by_default():
    """robust_report's documented default cap 2^14: reported with the L_max, and long enough for Z5's failure at a
    horizon of 100 (found at exactly 100 on the random words and on the witness word)."""
    from fsa2rnn.realize.steppers import stepper_for

    z5 = compile_householder(resolve_spec("Z5"))
    out = robust_report(z5, None, eta=stepper_for(z5).radius / 99.5, lmax=True)
    assert out["horizon"] == 100 and (out["l_max"], out["l_max_witness"]) == (100, 100)
    assert out["cap"] == 2**14 and not out["l_max_capped"]


def test_failing_word_searches_64_words_by_default():
    """trajectory_failing_word tries ``n_words`` = 64 seeded random words by default. The flip-flop's diagonal model
    forgets its error on set and reset and keeps it on read (ρ = 1 along read, Theorem 4.1 (i)), so an adversarial
    trajectory errs only after a long enough run of reads: at a horizon of 7 and seed 39, none of the first 64 words
    has one within 64 steps and the 65th has."""
    from fsa2rnn.compiler import compile_diagonal
    from fsa2rnn.realize.conditions import trajectory_failing_word
    from fsa2rnn.realize.steppers import stepper_for

    a = resolve_spec("flipflop")
    st = stepper_for(compile_diagonal(a))
    eta = st.radius / 6.5
    assert trajectory_failing_word(st, a, eta=eta, seed=39) is None
    word = trajectory_failing_word(st, a, eta=eta, seed=39, n_words=65)
    assert word is not None and a.symbols[word[-1]] == "read"


def test_the_simulation_of_a_robust_verdict_is_the_l_max_search_from_16(monkeypatch):
    """check_conditions' simulation is robust_report's L_max search (from LMAX_START = 16, here on 16 random words):
    with a certified radius patched to 3η* (a lie, as in tests/realize/test_theorems.py), the shift register of
    (a|b|c)*abc at 1.1η* is called robust, and its simulation fails at the length that search finds (seed 0: 3; a
    search from 17 draws other words and fails first at 9), which turns the verdict into a contradiction."""
    from fsa2rnn.compiler import compile_affine
    from fsa2rnn.realize.conditions import LMAX_START
    from fsa2rnn.realize.robust import l_max
    from fsa2rnn.realize.steppers import stepper_for

    a = resolve_spec("regex:(a|b|c)*abc")
    model = compile_affine(a)
    eta = 1.1 * check_conditions(model, 0.0, simulate=False)["radius"]
    original = conditions._certified
    monkeypatch.setattr(conditions, "_certified", lambda st, a, eta, star, *rest: original(st, a, eta, 3 * star, *rest))
    res = check_conditions(model, eta, cap=64)
    want = l_max(None, stepper=stepper_for(model), automaton=a, eta=eta, n_words=16, start=LMAX_START, cap=64, seed=0)
    assert res["contradiction"] and res["simulation"]["l_max"] == want["l_max"]
