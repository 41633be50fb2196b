"""Small comforts of the API and CLI: a one-line repr of a compiled model, full task names wherever --tasks is taken,
"did you mean" for unknown names, extraction budgets named in their errors, the header bound checked before
compiling, compare's reach of its relation, NFSM heads counted before they are built."""

from __future__ import annotations

import numpy as np
import pytest

from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.errors import FsaError, LimitExceededError, SpecError


def test_a_compiled_model_has_a_short_repr():
    from fsa2rnn.compiler import compile_householder

    m = compile_householder(resolve_spec("S5"))
    text = repr(m)
    assert "\n" not in text and len(text) < 200, text
    assert text.startswith("<CompiledModel householder/permutation 'S5': 120 states, 120 symbols, 1 layer, ")
    assert ".summary" in text and isinstance(m.summary, dict)


@pytest.mark.parametrize(
    "table,full,short",
    [("grazzi-table3", "grazzi:parity", "parity"), ("brandoit-table1", "brandoit:Z2", "Z2"),
     ("grazzi-s5", "grazzi:S5:swaps", "swaps")],
)  # fmt: skip
def test_tasks_take_the_full_name_fsa2rnn_tasks_prints(table, full, short):
    from fsa2rnn.nn.tasks import builtin_task_names
    from fsa2rnn.nn.train.reproduce import get_reproduction

    assert full in builtin_task_names()
    rep = get_reproduction(table)
    assert rep.select("tiny", full, None, None, "42")[0] == [short]
    assert rep.select("tiny", f"{short},{full}", None, None, "42")[0] == [short]  # one task, named twice
    with pytest.raises(SpecError, match="did you mean"):
        rep.select("tiny", full[:-1], None, None, "42")


@pytest.mark.parametrize(
    "call,phrase",
    [
        (lambda: resolve_spec("S7:swap"), "did you mean 'S7:swaps'"),
        (lambda: resolve_spec("flipflp"), "did you mean 'flipflop'"),
        (lambda: __import__("fsa2rnn.nn.tasks").nn.tasks.check_task_name("gazzi:parity"),
         "did you mean 'grazzi:parity'"),
        (lambda: __import__("fsa2rnn.nn.train.reproduce").nn.train.reproduce.get_reproduction("dlr-atomc"),
         "did you mean 'dlr-atomic'"),
    ],
)  # fmt: skip
def test_unknown_names_get_a_suggestion(call, phrase):
    with pytest.raises(FsaError, match=phrase):
        call()


def test_an_exhausted_extraction_budget_names_its_option():
    """KV and L* on a toy model (parity of the ones) under a budget of one word: one line naming --max-queries."""
    pytest.importorskip("aalpy")
    from fsa2rnn.realize.lstar import Limits, lstar_extract

    class Parity:  # the states a model of parity predicts: the parity of the ones so far
        def predict_states(self, ids):
            return ids.cumsum(1) % 2

    def predict(words):
        return [np.cumsum(w) % 2 for w in words]

    for algorithm in ("kv", "lstar"):
        with pytest.raises(LimitExceededError, match=r"reached --max-queries 1 \(words run through the model"):
            lstar_extract(Parity(), symbols=("0", "1"), classes=("even", "odd"), length=8, predict=predict,
                          algorithm=algorithm, limits=Limits(max_queries=1), words=8)  # fmt: skip
    ok = lstar_extract(Parity(), symbols=("0", "1"), classes=("even", "odd"), length=8, predict=predict, words=8)
    assert ok.minimal.n_states == 2


def test_the_header_bound_is_below_the_header_and_refuses_before_compiling():
    import json

    from fsa2rnn.compiler import compile_pdssm
    from fsa2rnn.compiler import model as M
    from fsa2rnn.fsa import Automaton

    for spec in ("S4", "regex:(a|b)*a(a|b){3}", "modarith", "parity"):
        a = resolve_spec(spec)
        m = compile_pdssm(a)
        header = {k: v for k, v in m.header.items()}
        actual = len(json.dumps({"fsa2rnn": json.dumps(header)}))
        old = M.MAX_HEADER_BYTES
        try:
            M.MAX_HEADER_BYTES = actual  # the bound is at most the real size: never a refusal of a model that fits
            M.check_header_size(a)
        finally:
            M.MAX_HEADER_BYTES = old
    names = ["q" * 60_000 + str(i) for i in range(1000)]
    big = Automaton(np.zeros((1, 1000), dtype=np.int64), states=names, symbols=["a"])
    with pytest.raises(LimitExceededError, match="over the 100,000,000 that safetensors stores"):
        M.check_header_size(big)


def test_compare_says_how_far_its_relation_was_checked():
    from fsa2rnn.realize.compare import long_agreement

    good = long_agreement({"lengths": [16, 160], "sequence": [1.0, 1.0], "token": [1, 1]}, 16)
    assert good == {"length": 160, "times_training_length": 10, "sequence_agreement": 1.0}
    poor = long_agreement({"lengths": [16, 160], "sequence": [1.0, 0.0], "token": [1, 0.7]}, 16)
    assert "0.0% of held-out words" in poor["warning"] and "length ≤ 16" in poor["warning"]


def test_nfsm_heads_are_counted_before_they_are_built():
    from fsa2rnn.nn.limits import parse_nfsm_head_sizes

    assert parse_nfsm_head_sizes("4x11") == [11] * 4 and parse_nfsm_head_sizes("8,8,6") == [8, 8, 6]
    with pytest.raises(LimitExceededError, match="the number of heads 99999999 is outside its limit"):
        parse_nfsm_head_sizes("99999999x99999999")
    with pytest.raises(LimitExceededError, match="the number of heads 2000"):
        parse_nfsm_head_sizes(",".join(["2"] * 2000))
    for bad in ("x", "0x3", "3x0", "4,,5", "-1"):
        with pytest.raises(SpecError, match="must be auto"):
            parse_nfsm_head_sizes(bad)
