"""Black-box extraction with AALpy's L* and KV (realize/lstar.py, `compare --method lstar`), on models whose answer
is known: compiled models of random automata (the learned machine must be the automaton's minimal Moore machine),
the trained parity DeltaNet [−1, 1] from scratch and a parity model started from a compiled one (2 states,
isomorphic to parity), the trained flip-flop NFSM (agrees with the white-box extraction), an LSTM (agreement at the
training length and 10×, the default limits held), every other layer family, the limits and bad inputs."""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pytest
from cases import random_automaton
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.compiler import compile_householder, compile_nfsm
from fsa2rnn.fsa import LimitExceededError, SpecError, resolve_spec
from fsa2rnn.nn import load_model
from fsa2rnn.realize.lstar import (
    MAX_QUERIES,
    MAX_SECONDS,
    START,
    Limits,
    compare_lstar,
    lstar_extract,
    machine_from_aalpy,
    machine_to_aalpy,
)
from fsa2rnn.realize.moore import MooreMachine, relate

pytest.importorskip("aalpy")
pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _learn_compiled(a, compiler, algorithm="lstar", **kw):
    module = load_model(compiler(a))
    h = module.compiled.header
    return lstar_extract(module, symbols=h["symbols"], classes=h["states"], length=12, algorithm=algorithm, **kw)


@pytest.mark.parametrize("algorithm", ["lstar", "kv"])
def test_compiled_random_automata_are_learned_exactly(algorithm):
    """A compiled NFSM outputs its state: L*/KV must return the automaton's reachable part (minimal: the outputs
    are the states), isomorphic with its labels, and agree with the model on every held-out word."""
    for seed in range(6):
        a = random_automaton(3 + seed % 3, 2, seed)
        ex = _learn_compiled(a, lambda x: compile_nfsm(x, heads="single"), algorithm)
        target = MooreMachine(a, np.arange(a.n_states), a.states)
        assert relate(ex.machine, target)["relation"] == "isomorphic", seed
        assert ex.minimal.n_states == a.reachable().n_states
        assert ex.agreement["sequence"] == [1.0, 1.0]
        assert ex.details["stopped_by"] is None and ex.details["model_words"] <= MAX_QUERIES


def test_compiled_householder_parity_is_two_states():
    ex = _learn_compiled(resolve_spec("parity"), compile_householder)
    assert ex.minimal.n_states == 2 and ex.details["membership_queries"] > 0 and ex.details["equivalence_queries"] >= 1


def test_learned_machine_converts_to_aalpy_and_back():
    a = random_automaton(4, 2, 3)
    ex = _learn_compiled(a, lambda x: compile_nfsm(x, heads="single"))
    m = machine_to_aalpy(ex.machine)
    assert m.initial_state.output == START
    back = machine_from_aalpy(m, ex.machine.classes, ex.machine.automaton.symbols)
    assert back.automaton == ex.machine.automaton and np.array_equal(back.labels, ex.machine.labels)


def test_the_query_limit_stops_learning_with_the_last_hypothesis():
    """Z5 needs a 5-state machine; with 8 model words L* stops (its first hypothesis, or a one-line error)."""
    a = resolve_spec("Z5")
    try:
        ex = _learn_compiled(a, lambda x: compile_nfsm(x, heads="single"), limits=Limits(max_queries=8))
    except LimitExceededError as exc:  # no usable hypothesis yet: the budget is named
        assert "L* reached --max-queries 8 (words run through the model" in str(exc)
    else:
        assert ex.details["stopped_by"] == "queries" and ex.details["model_words"] <= 8
        assert ex.minimal.n_states < 5


@pytest.mark.parametrize("max_queries", [1, 50, 700])
def test_the_query_limit_is_never_passed(max_queries):
    ex = None
    with contextlib.suppress(LimitExceededError):
        ex = _learn_compiled(random_automaton(6, 3, 1), lambda x: compile_nfsm(x, heads="single"),
                             limits=Limits(max_queries=max_queries))  # fmt: skip
    if ex is not None:
        assert ex.details["model_words"] <= max_queries


@pytest.mark.parametrize(
    "limits,phrase",
    [(Limits(max_queries=0), "max_queries"), (Limits(max_seconds=0), "max_seconds"), (Limits(depth=9), "depth"),
     (Limits(random_words=-1), "random_words")],
)  # fmt: skip
def test_bad_limits_are_refused_before_work(limits, phrase):
    with pytest.raises(SpecError, match=phrase):
        lstar_extract(None, symbols=["a"], classes=["x"], length=4, limits=limits)
    with pytest.raises(SpecError, match="unknown learning algorithm"):
        lstar_extract(None, symbols=["a"], classes=["x"], length=4, algorithm="lsharp")


# ---------------------------------------------------------------------------------------------------- trained models
@pytest.fixture(scope="module")
def parity_deltanet():
    from .test_extract_models import train_tiny

    # beta in (0, 2): the eigenvalues 1 − beta span [−1, 1] (Grazzi et al.)
    return train_tiny("grazzi:parity", "deltanet", {"heads": 1, "head_dim": 4, "beta_range": (0, 2), "form": "plain",
                                                      "conv_bias": True},
                      steps=200, lengths=(2, 16), seed=0, d_model=8, lr=1e-2)  # fmt: skip


@pytest.fixture(scope="module")
def flipflop_nfsm():
    from .test_extract_models import train_tiny

    return train_tiny("flipflop", "nfsm", {"heads": [2]}, steps=200, lengths=(3, 20), seed=2, d_model=16,
                      lr=1e-2, mlp_ratio=4.0)  # fmt: skip


@pytest.mark.parametrize("algorithm", ["lstar", "kv"])
def test_parity_deltanet_from_scratch_gives_parity(parity_deltanet, algorithm):
    model, task, seq = parity_deltanet
    assert seq == 1.0
    r = compare_lstar(model, task, length=16, algorithm=algorithm)
    assert r["learned"]["n_states"] == 2 and r["learned"]["relation"] == "isomorphic"
    assert r["learned"]["agreement"]["sequence"][0] == 1.0


def test_flipflop_nfsm_agrees_with_the_white_box_extraction(flipflop_nfsm):
    model, task, seq = flipflop_nfsm
    assert seq == 1.0
    r = compare_lstar(model, task, length=20)
    assert r["learned"]["relation_to_white_box"] == "isomorphic"
    assert r["learned"]["relation"] == r["white_box"]["relation"] == "isomorphic"


def test_lstm_small_task_reports_agreement_queries_and_limits():
    from .test_extract_models import train_tiny

    model, task, _ = train_tiny("grazzi:parity", "lstm", {}, steps=150, lengths=(2, 8), seed=0, d_model=16, lr=1e-2)
    r = compare_lstar(model, task, length=8)
    le = r["learned"]
    assert le["agreement"]["lengths"] == [8, 80] and all(0 <= v <= 1 for v in le["agreement"]["token"])
    assert le["agreement"]["sequence"][0] >= 0.9  # the learned machine reproduces the model at the training length
    assert le["membership_queries"] > 0 and 0 < le["model_words"] <= MAX_QUERIES and le["seconds"] <= MAX_SECONDS + 5
    assert le["limits"] == {"max_queries": MAX_QUERIES, "max_seconds": MAX_SECONDS, "depth": 2, "random_words": 500}


@pytest.mark.parametrize("layer,args", [("deltaproduct", {"heads": 1, "head_dim": 4, "n_h": 2}),
                                        ("mamba", {}), ("transformer", {"heads": 2}), ("dlr", {})])  # fmt: skip
def test_every_layer_family_is_learned_within_the_limits(layer, args):
    """Untrained tiny models: whatever they compute, L* returns a machine that reproduces the model on the words
    it tested, within the limits (a small query limit keeps this fast)."""
    import torch

    from fsa2rnn.nn.model import SequenceModel
    from fsa2rnn.nn.tasks import get_task

    task = get_task("grazzi:parity")
    torch.manual_seed(0)
    model = SequenceModel(task.vocab_size, task.n_classes, layer, 1, 8, layer_args=args).eval()
    ex = lstar_extract(model, symbols=task.automaton.symbols, classes=task.classes, length=6, words=32,
                       limits=Limits(max_queries=3000, max_seconds=30))  # fmt: skip
    assert ex.minimal.n_states >= 1 and ex.details["model_words"] <= 3000
    assert ex.details["stopped_by"] in (None, "queries", "time")
    if ex.details["stopped_by"] is None:
        assert ex.agreement["token"][0] > 0.5


# ---------------------------------------------------------------------------------------------------- the CLI
@pytest.fixture(scope="module")
def init_from_run(tmp_path_factory):
    """`train grazzi:parity --init-from MODEL` (compiled Householder parity), a few steps."""
    d = tmp_path_factory.mktemp("lstar")
    compile_householder(resolve_spec("parity")).save(d / "parity.safetensors")
    args = ["train", "grazzi:parity", "--init-from", str(d / "parity.safetensors"), "--steps", "10", "--lr", "1e-3",
            "--train-length", "8..16", "--no-lmax", "--eval-lengths", "16", "--samples", "32",
            "--out", str(d / "r")]  # fmt: skip
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    return d / "r"


def test_cli_lstar_on_a_parity_model_started_from_a_compiled_one(init_from_run):
    res = CliRunner().invoke(main, ["compare", str(init_from_run), "--method", "lstar", "--json"])
    assert res.exit_code == 0, res.output
    le = json.loads(res.stdout)["learned"]
    assert le["n_states"] == 2 and le["relation"] == "isomorphic" and le["relation_to_white_box"] == "isomorphic"
    text = CliRunner().invoke(main, ["compare", str(init_from_run), "--method", "kv"]).output
    assert "learned: 2 states (kv, black-box)" in text
    assert "relation to the target (parity, 2 states): isomorphic" in text


@pytest.mark.parametrize(
    "args,phrase",
    [(["--method", "lstar", "--max-queries", "0"], "--max-queries"), (["--method", "lstar", "--depth", "7"], "--depth"),
     (["--method", "lstar", "--max-seconds", "0"], "--max-seconds"), (["--method", "lsharp"], "--method"),
     (["--method", "lstar", "--plot", "x.png"], "belong to --method whitebox")],
)  # fmt: skip
def test_cli_bad_lstar_options_are_one_line(init_from_run, tmp_path, args, phrase):
    res = CliRunner().invoke(main, ["compare", str(init_from_run), *args])
    assert res.exit_code == 2 and phrase in res.stderr and "Traceback" not in res.output


def test_cli_without_aalpy_is_one_line(init_from_run, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "aalpy", None)
    res = CliRunner().invoke(main, ["compare", str(init_from_run), "--method", "lstar"])
    assert res.exit_code == 2 and "AALpy is not installed: pip install 'fsa2rnn[lstar]'" in res.stderr

