"""TSO_N as Brandoit et al. supervise it (issue 32): the answer readout (the last N logits read at '?', the states
elsewhere), the states as targets at every position and the answer's own full-weight term from step 0 in both arms
(``--answer-term``), the 2-tap convolution before each NFSM layer (``--nfsm-conv``; at the identity tap a compiled
NFSM computes what it computes without it), and the exploration penalty averaged over the NFSM layers."""

import json

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from fsa2rnn.compiler import compile_nfsm
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.nn.layers.nfsm import NFSM, TapConv
from fsa2rnn.nn.model import READOUT_MARGIN, ModelConfig, SequenceModel, answer_readout
from fsa2rnn.nn.tasks import get_task
from fsa2rnn.nn.train.config import TrainConfig, model_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _tso_cfg(**kw) -> TrainConfig:
    base = dict(
        task="brandoit:TSO3", model="nfsm", arm="anchored", layers=2, nu=0.5, loss="balanced", anchor_explore=0.01,
        explore=0.03, d_model=16, batch=4, steps=2, lr=1e-2, warmup=0.0, val_every=2, val_samples=4, log_every=1,
        samples=4, eval_lengths=[30], train_length="30..30", lmax=False, progress=False, nfsm_conv=2,
    )  # fmt: skip
    return TrainConfig(**{**base, **kw})


def test_split_answer_keeps_the_state_at_the_question():
    task = get_task("brandoit:TSO3")
    b = task.sample(6, (25, 40), torch.Generator().manual_seed(0))
    states, answers = task.split_answer(b.targets, b.lengths)
    rows, last = torch.arange(6), b.lengths - 1
    assert torch.equal(states[rows, last], b.targets[rows, last - 1])  # '?' leaves the state alone
    assert bool((states[b.mask] < task.n_states).all())
    assert torch.equal(answers + task.n_states, b.targets[rows, last]) and bool(((answers >= 0) & (answers < 3)).all())
    off = torch.ones_like(b.mask)
    off[rows, last] = False
    assert torch.equal(states[off], b.targets[off])


def test_answer_readout_reads_the_answer_at_the_question_only():
    task = get_task("brandoit:TSO3")
    r = task.answer_readout
    b = task.sample(4, 30, torch.Generator().manual_seed(1))
    raw = torch.randn(4, 30, task.n_classes, generator=torch.Generator().manual_seed(2)) * 5
    raw[..., -3:] -= 50.0  # answers far below the states everywhere: still the answer at '?'
    out = answer_readout(raw, b.inputs, r["token"], r["classes"])
    at = b.inputs == r["token"]
    pred = out.argmax(-1)
    assert bool((pred[at] >= task.n_states).all()) and bool((pred[~at] < task.n_states).all())
    assert torch.equal(pred[at], task.n_states + raw[..., -3:].argmax(-1)[at])
    assert torch.equal(pred[~at], raw[..., :-3].argmax(-1)[~at])
    # each slice's softmax is unchanged; the set-aside logits are READOUT_MARGIN below the read ones
    for sl in (slice(None, -3), slice(-3, None)):
        assert torch.allclose(F.log_softmax(out[..., sl], -1), F.log_softmax(raw[..., sl], -1), atol=1e-4)
    assert bool((out[at][:, :-3].amax(-1) <= out[at][:, -3:].amin(-1) - READOUT_MARGIN + 1e-3).all())


def test_a_tso_model_has_the_readout_and_the_convolution():
    cfg = _tso_cfg()
    mcfg = model_config(cfg, get_task("brandoit:TSO3"))
    assert mcfg.answer_readout == {"token": get_task("brandoit:TSO3").ids["?"], "classes": 3}
    assert mcfg.layer_args["conv"] == 2
    again = ModelConfig.from_json(mcfg.to_json())
    assert again == mcfg
    net = SequenceModel.from_config(again)
    assert all(isinstance(m.conv, TapConv) and m.conv.taps == 2 for m in net.modules() if isinstance(m, NFSM))
    with pytest.raises(Exception, match="answer_readout"):
        ModelConfig(vocab=5, n_classes=4, answer_readout={"token": 7, "classes": 1})


def test_the_convolution_reads_in_chunks_as_whole_words():
    torch.manual_seed(0)
    layer = NFSM(8, [3, 4], conv=2).eval()
    x = torch.randn(2, 11, 8)
    whole = layer(x)
    first, st = layer(x[:, :5], None, True)
    second, _ = layer(x[:, 5:], st, True)
    assert torch.allclose(torch.cat([first, second], 1), whole, atol=1e-6)
    assert torch.equal(layer.indices(x)[:, -1], layer(x, None, True)[1]["indices"])


def test_compiled_nfsm_with_the_identity_tap_computes_the_same():
    a = resolve_spec("M11")
    compiled = compile_nfsm(a)
    plain = SequenceModel.from_compiled(compiled)
    conv = SequenceModel.from_compiled(compiled, nfsm_conv=2)
    layer = conv.blocks[0].layer
    assert isinstance(layer.conv, TapConv) and layer.conv.identity
    assert conv.config.layer_args["conv"] == 2 and conv.config.layer_args["conv_identity"] is True
    ids = torch.from_numpy(np.random.default_rng(5).integers(0, a.n_symbols, (6, 300)))
    assert torch.equal(conv(ids), plain(ids))  # identical logits, not only the same argmax
    assert torch.equal(conv.predict_states(ids, chunk=37), plain.predict_states(ids))
    assert torch.equal(conv.symbol_transitions(), plain.symbol_transitions())


def test_init_from_with_the_convolution_starts_at_the_compiled_function(tmp_path):
    from fsa2rnn.nn.train.init_from import init_architecture, init_model_config, load_init

    compile_nfsm(resolve_spec("flipflop"), heads="single").save(tmp_path / "ff.safetensors")
    task = get_task("flipflop")
    nets = []
    for conv in (None, 2):
        cfg = init_architecture(TrainConfig(task="flipflop", model="nfsm", nfsm_conv=conv,
                                            init_from=str(tmp_path / "ff.safetensors")), task)  # fmt: skip
        net = SequenceModel.from_config(init_model_config(cfg, task))
        load_init(net, cfg, task)
        nets.append(net.eval())
    assert nets[1].blocks[0].layer.conv is not None and nets[0].blocks[0].layer.conv is None
    b = task.sample(8, (5, 60), torch.Generator().manual_seed(3))
    assert torch.equal(nets[0](b.inputs), nets[1](b.inputs))


def _losses(tmp_path, name, **kw) -> list[dict]:
    from fsa2rnn.nn.train.trainer import train

    train(_tso_cfg(**kw), tmp_path / name)
    return [json.loads(line) for line in (tmp_path / name / "metrics.jsonl").open()]


@pytest.mark.parametrize("arm", ["anchored", "free"])
def test_the_answer_term_trains_the_answer_logits_from_step_zero(arm, monkeypatch, tmp_path):
    """The answer's cross-entropy at the last position, full weight, in both arms: with it the answer rows of the
    classifier get a gradient at the first step; the state targets at '?' are the states."""
    from fsa2rnn.nn.train import trainer as tr

    seen = {}
    original = tr._Trainer._arm_loss

    def spy(self, out, batch, loss_sum):
        seen["classes"], seen["targets"] = out.shape[-1], batch.targets.clone()
        seen["split"] = self.answer_split is not None
        return original(self, out, batch, loss_sum)

    grads = []
    original_step = torch.optim.AdamW.step

    def step(self, *a, **k):
        for g in self.param_groups:
            for p in g["params"]:
                if p.shape[:1] == (47,) and p.ndim == 2:  # the classifier (TSO3: 44 states + 3 answers)
                    grads.append(p.grad[-3:].abs().sum().item() if p.grad is not None else 0.0)
        return original_step(self, *a, **k)

    monkeypatch.setattr(tr._Trainer, "_arm_loss", spy)
    monkeypatch.setattr(torch.optim.AdamW, "step", step)
    kw = dict(arm=arm, anchor_explore=0.01 if arm == "anchored" else 0.0)
    _losses(tmp_path, "on", steps=1, **kw)
    assert seen["split"] and seen["classes"] == 44 and int(seen["targets"].max()) < 44
    on = grads[0]
    grads.clear()
    _losses(tmp_path, "off", steps=1, answer_term=False, **kw)
    assert not seen["split"] and seen["classes"] == 47 and int(seen["targets"].max()) >= 44
    # anchored without the term: the answer enters only the decoder's 0.1-weighted first-error loss; with it, the
    # full-weight term: a larger gradient on the answer rows at step 0
    assert on > 0 and on > grads[0]


def test_validation_reports_the_answer_and_the_states_apart(tmp_path):
    rec = [r for r in _losses(tmp_path, "v") if "val_answer_accuracy" in r]
    assert rec and all(0 <= r["val_answer_accuracy"] <= 1 and 0 <= r["val_state_sequence_accuracy"] <= 1 for r in rec)


def test_the_exploration_penalty_is_the_mean_over_the_nfsm_layers(monkeypatch, tmp_path):
    from fsa2rnn.nn.train import trainer as tr

    got = []
    original = tr.frontier_excess

    def spy(excess, frontier):
        got.append(excess.detach().clone())
        return original(excess, frontier)

    monkeypatch.setattr(tr, "frontier_excess", spy)
    layers = []
    original_loss = tr._Trainer._arm_loss

    def keep(self, out, batch, loss_sum):
        r = original_loss(self, out, batch, loss_sum)
        layers.append([m.aux["excess"].detach().clone() for m in self.nfsm_layers])
        return r

    monkeypatch.setattr(tr._Trainer, "_arm_loss", keep)
    _losses(tmp_path, "x", steps=1)
    assert len(layers[0]) == 2
    assert torch.allclose(got[0], (layers[0][0] + layers[0][1]) / 2)
    assert not torch.allclose(got[0], layers[0][1])
