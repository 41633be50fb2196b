"""``robust_report`` (what ``fsa2rnn verify --eta`` adds) and ``check_conditions``' defaults (realize/conditions.py).

Oracles: the verdict's own witness (Theorem 4.1 (i): prefix p and cycle w, symbol names) and the calls the report
makes to the L_max search, recorded by a stand-in that returns at once."""

from __future__ import annotations

import pytest

from fsa2rnn.compiler import compile_householder, compile_nfsm
from fsa2rnn.fsa import resolve_spec
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
