"""Evaluation of trained models (nn/metrics.py, nn/train/run_eval.py) and `fsa2rnn eval`, against independent
references: compiled NFSMs (exact by construction) and one with a broken table entry, chunked streaming against
whole-word prediction, the R² formula, the Transformer's memory limit; and ModelConfig's ``input_dim`` (real-valued
inputs)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.compiler import compile_nfsm
from fsa2rnn.nn import metrics as E
from fsa2rnn.nn.layers import ConfigError
from fsa2rnn.nn.model import ModelConfig, SequenceModel
from fsa2rnn.nn.tasks import get_task
from fsa2rnn.nn.train import load_run, nfsm_tables_exact

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _compiled(task_name: str):
    task = get_task(task_name)
    return SequenceModel.from_compiled(compile_nfsm(task.automaton, heads="single")).float().eval(), task


@pytest.mark.parametrize("name", ["brandoit:FF", "brandoit:S3", "brandoit:DFF5"])
def test_an_exact_nfsm_is_exact_everywhere(name):
    net, task = _compiled(name)
    got = E.accuracy_at_lengths(net, task, [8, 300], samples=20)
    assert got["token_accuracy"] == [1.0, 1.0] and got["sequence_accuracy"] == [1.0, 1.0]
    assert got["scaled_accuracy"] == [1.0, 1.0]
    ex = nfsm_tables_exact(net, task)
    assert ex["exact"] is True and ex["witness"] is None and ex["margin"] > 0
    lm = E.failing_length_of(net, task, start=8, cap=2048, n_words=32)
    assert (lm["l_max"], lm["l_max_capped"]) == (None, True)


def test_a_broken_table_entry_is_found_with_a_witness_the_automaton_disagrees_with():
    net, task = _compiled("brandoit:S3")
    a = task.automaton
    layer = net.blocks[0].layer
    before = net.symbol_transitions()[:, 0].clone()  # (vocab, d) head 0's tables
    d = layer.heads[0]
    x, k = 1, int(before[1, 0])  # symbol 1 read in index k… move row k of symbol 1 to another index
    j_new = (int(before[x, k]) + 1) % d
    with torch.no_grad():
        direction = layer.logits.weight.new_zeros(layer.logits.weight.shape[1])
        normed = net.blocks[0].norm1(net.embedding.weight[x])
        direction += normed / normed.norm() ** 2
        layer.logits.weight[k * d + j_new] += 100.0 * direction
    after = net.symbol_transitions()[:, 0]
    changed = torch.nonzero(after != before).tolist()
    assert [x, k] in changed
    ex = nfsm_tables_exact(net, task)
    assert ex["exact"] is False and ex["witness"]
    ids = torch.tensor([[a.symbols.index(s) for s in ex["witness"]]])
    assert int(net.predict_states(ids)[0, -1]) != int(a.run(ids.numpy())[0, -1])
    assert E.accuracy_at_lengths(net, task, [64], samples=64)["sequence_accuracy"][0] < 1.0


def test_the_check_does_not_apply_to_other_models():
    task = get_task("parity")
    torch.manual_seed(0)
    net = SequenceModel(task.vocab_size, task.n_classes, "deltanet", 1, 16)
    assert nfsm_tables_exact(net, task)["exact"] is None


def test_streaming_in_chunks_equals_whole_words(monkeypatch):
    """Long lengths are read in chunks carrying the state: the same accuracies as predicting whole words."""
    task = get_task("parity")
    torch.manual_seed(1)
    net = SequenceModel(task.vocab_size, task.n_classes, "deltanet", 1, 16, mlp_ratio=0).eval()
    n, length = 8, 200
    monkeypatch.setattr(E, "CHUNK_TOKENS", n * 37)  # chunks of 37 symbols
    got = E.accuracy_at_lengths(net, task, [length], samples=n, seed=5)
    # the same words, generated the same way, predicted in one piece
    gen = torch.Generator().manual_seed(E._seed(5, length))
    carry, tokens, targets = None, [], []
    for start in range(0, length, 37):
        t, y, carry = task.continue_words(n, min(37, length - start), gen, carry, train=False)
        tokens.append(t)
        targets.append(y)
    ids, ys = torch.cat(tokens, 1), torch.cat(targets, 1)
    assert np.array_equal(ys.numpy(), task.automaton.run(ids.numpy()))  # targets are the automaton's states
    good = net.predict_states(ids) == ys
    assert got["token_accuracy"][0] == float(good.double().mean())
    assert got["sequence_accuracy"][0] == float(good.all(1).double().mean())


def test_range_accuracy_judges_each_answer():
    net, task = _compiled("brandoit:FF")
    r = E.range_accuracy(net, task, 40, 256, samples=64, batch=16)
    assert r == {"lengths": "40..256", "samples": 64, "accuracy": 1.0, "scaled_accuracy": 1.0}


def test_transformer_lengths_beyond_its_memory_are_skipped_and_said(monkeypatch):
    task = get_task("parity")
    torch.manual_seed(0)
    net = SequenceModel(task.vocab_size, task.n_classes, "transformer", 1, 8, layer_args={"heads": 2})
    monkeypatch.setattr(E, "ATTENTION_BYTES", 16 * 2 * 4 * 64**2)  # 16 words of length 64 fit, not 128
    got = E.accuracy_at_lengths(net, task, [32, 64, 128], samples=16)
    assert got["lengths"] == [32, 64] and [s["length"] for s in got["skipped"]] == [128]
    assert "attention" in got["skipped"][0]["reason"]
    lm = E.failing_length_of(net, task, start=4, cap=1024, n_words=16)
    assert "searched only up to 64" in lm["l_max_note"]


def test_regression_scores_are_the_r2_of_the_predictions():
    task = get_task("dlr:cummax")
    torch.manual_seed(0)
    net = SequenceModel(task.vocab_size, 1, "dlr", 1, 8, layer_args={"state_size": 4}, input_dim=task.vocab_size).eval()
    got = E.regression_scores(net, task, 16, samples=6, batch=6, seed=2)
    gen = torch.Generator().manual_seed(E._seed(2, 16, 11))
    b = task.sample(6, 16, gen, train=False)
    with torch.no_grad():
        p = net(b.inputs)[b.mask].double().numpy()
    y = b.targets[b.mask].double().numpy()
    mse = float(np.mean((p - y) ** 2))
    assert got["mse"] == pytest.approx(mse, rel=1e-9)
    assert got["r2"] == pytest.approx(1 - mse / float(np.mean((y - y.mean()) ** 2)), rel=1e-9)


def test_input_dim_model_reads_real_inputs():
    cfg = ModelConfig(vocab=3, n_classes=2, layer="mamba", d_model=8, input_dim=3)
    assert ModelConfig.from_json(cfg.to_json()) == cfg
    torch.manual_seed(0)
    net = SequenceModel.from_config(cfg)
    assert isinstance(net.embedding, torch.nn.Linear)
    x = torch.randn(2, 5, 3)
    y = net(x)
    assert y.shape == (2, 5, 2)
    manual = net.classifier(net.norm(net.blocks[0](net.embedding(x))[0]))
    assert torch.allclose(y, manual)
    with pytest.raises(ConfigError, match="float tensor"):
        net(torch.zeros(2, 5, dtype=torch.long))
    with pytest.raises(ConfigError, match="per-symbol"):
        net.symbol_transitions()
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ConfigError, match="input_dim"):
            ModelConfig(vocab=3, n_classes=2, input_dim=bad)


def test_eval_command(tmp_path):
    run = tmp_path / "run"
    args = [
        "train",
        "brandoit:FF",
        "--model",
        "nfsm",
        "--d-model",
        "16",
        "--mlp-ratio",
        "0",
        "--steps",
        "60",
        "--batch",
        "16",
        "--lr",
        "0.01",
        "--samples",
        "16",
        "--cap",
        "128",
        "--out",
        str(run),
    ]
    assert CliRunner().invoke(main, args).exit_code == 0
    res = CliRunner().invoke(
        main, ["eval", str(run), "--lengths", "64,200", "--lmax", "--cap", "512", "--samples", "32", "--json"]
    )
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert {"lengths", "token_accuracy", "sequence_accuracy", "l_max", "l_max_capped"} <= set(got)
    assert got["lengths"] == [64, 200]
    # the run's model, evaluated directly, gives the same figures
    model, task, _ = load_run(run)
    assert E.accuracy_at_lengths(model, task, [64, 200], samples=32)["token_accuracy"] == got["token_accuracy"]
    text = CliRunner().invoke(main, ["eval", str(run), "--lengths", "64"])
    assert text.exit_code == 0 and "token_acc" in text.stdout
    for bad in (["eval", str(tmp_path / "nothing")], ["eval", str(run), "--lengths", "x"]):
        res = CliRunner().invoke(main, bad)
        assert res.exit_code == 2 and res.stderr.startswith("error:") and res.stderr.count("\n") == 1
