"""Brandoit et al.'s NFSM arms (nn/train/objectives.py, the trainer's anchored arm, the layer's exploration excess)."""

import json
import math

import numpy as np
import pytest
import torch

from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.nn.layers.nfsm import NFSM
from fsa2rnn.nn.tasks import get_task
from fsa2rnn.nn.train.config import TrainConfig, model_config
from fsa2rnn.nn.train.objectives import class_balance, explore_scale, first_error, word_mean


def test_first_error_weights_and_frontier():
    correct = torch.tensor([[True, True, False, True, False], [True] * 5])
    mask = torch.ones_like(correct)
    w, frontier = first_error(correct, mask)
    want = [1, 1, 1, math.exp(-3), math.exp(-6)]
    assert torch.allclose(w[0], torch.tensor(want, dtype=torch.float32)) and (w[1] == 1).all()
    assert frontier[0].tolist() == [0, 0, 1, 0, 0] and frontier[1].sum() == 0


def test_class_balance_is_count_to_the_minus_half_with_mean_one():
    targets = torch.tensor([[0, 0, 0, 1]])
    w = class_balance(targets, torch.ones_like(targets, dtype=torch.bool), 3)
    raw = np.array([3**-0.5] * 3 + [1.0])
    assert np.allclose(w.numpy()[0], raw * 4 / raw.sum()) and abs(float(w.mean()) - 1) < 1e-6


def test_word_mean_and_explore_schedule():
    v = torch.tensor([[1.0, 3.0], [2.0, 2.0]])
    assert float(word_mean(v, torch.tensor([[1.0, 1.0], [0.0, 0.0]]))) == 2.0
    assert explore_scale(0, 100) == 1.0 and abs(explore_scale(100, 100) - 0.1) < 1e-12
    assert abs(explore_scale(50, 100) - 0.55) < 1e-12


def test_exploration_excess_matches_a_loop_over_rows():
    torch.manual_seed(0)
    layer = NFSM(8, [3, 2], tau=0.5, gumbel=0.5, fixed_start=True)
    with torch.no_grad():
        layer.logits.weight.mul_(20)  # sharp rows: a positive excess
    layer.track = True
    layer.train()
    x = torch.randn(2, 6, 8)
    layer(x)
    idx, exc = layer.aux["indices"], layer.aux["excess"].detach()
    theta = layer.head_logits(x).detach()
    for b in range(2):
        for t in range(6):
            total = 0.0
            for h, d in enumerate([3, 2]):
                prev = 0 if t == 0 else int(idx[b, t - 1, h])
                row = theta[b, t, h, prev, :d].double() / 0.5
                ratio = float(row.std(unbiased=False)) / (math.pi / math.sqrt(6))
                total += max(ratio - 1, 0.0) ** 2
            assert abs(total / 2 - float(exc[b, t])) < 1e-4
    assert float(exc.max()) > 0


def test_nu_sets_noise_and_temperature_and_head_family_fixes_the_start():
    task = get_task("brandoit:S4")
    args = model_config(TrainConfig(task="brandoit:S4", model="nfsm", nu=0.25, head_family="factored"), task).layer_args
    assert args["gumbel"] == 0.25 and args["tau"] == 0.25 and args["heads"] == [4, 3, 2] and args["fixed_start"]
    anchored = model_config(TrainConfig(task="brandoit:S4", model="nfsm", arm="anchored"), task).layer_args
    assert anchored["heads"] == [24]
    quiet = model_config(TrainConfig(task="brandoit:S4", model="nfsm", nu=0.5, gumbel=0.0), task).layer_args
    assert (quiet["gumbel"], quiet["tau"]) == (0.0, 0.5)  # --gumbel overrides the noise scale, ν stays the temperature


@pytest.mark.parametrize(
    "fields,message",
    [
        (dict(arm="pinned"), "--arm must be one of free, anchored"),
        (dict(model="mamba", arm="anchored"), "--arm applies to nfsm"),
        (dict(nu=-1.0), "--nu -1.0 is outside its limit"),
        (dict(head_family="factored:1"), "--head-family must be"),
        (dict(head_family="regular", nfsm_heads="4x3"), "give no --nfsm-heads"),
        (dict(model="mamba", explore=0.1), "--explore applies to nfsm"),
        (dict(arm="anchored", nproc=2, batch=64), "runs in one process"),
        (dict(protocol="fresh"), "--protocol must be one of prefix, brandoit"),
    ],
)
def test_bad_arm_options(fields, message):
    with pytest.raises(SpecError, match=message.replace("(", r"\(")):
        TrainConfig(task="brandoit:S3", **{"model": "nfsm", **fields})


def test_anchored_arm_learns_z2_and_releases(tmp_path):
    from fsa2rnn.nn.train.trainer import train

    cfg = TrainConfig(
        task="brandoit:Z2", model="nfsm", arm="anchored", nu=0.5, loss="balanced", explore=0.03, anchor_explore=0.01,
        d_model=16, batch=16, steps=40, lr=1e-2, warmup=0.0, val_every=2, val_samples=32, log_every=2,
        nfsm_readout_std=1.0, keep_best=True, eval_lengths=[64], samples=16, cap=256, train_length="64..64",
        progress=False,
    )  # fmt: skip
    res = train(cfg, tmp_path / "run")
    recs = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    released = [r["step"] for r in recs if "anchor_released" in r]
    assert released, "the anchored arm never released"
    exact_run = [r.get("anchor_sequence_accuracy") for r in recs if r["step"] <= released[0] and r["step"] % 2 == 0]
    assert exact_run[-10:] == [1.0] * 10  # released after 10 exact validations of the heads
    assert all("anchor_sequence_accuracy" not in r for r in recs if r["step"] > released[0])
    assert res["eval"]["sequence_accuracy"] == [1.0] and res["exact"]["exact"]
    # --keep-best: the saved model is the evaluated one (the best validation's weights), and says so
    from fsa2rnn.nn.train.checkpoint import load_checkpoint

    header, _ = load_checkpoint(tmp_path / "run" / "model.safetensors")
    assert header["finished"] and 0 < header["best_step"] <= header["step"]


def test_keep_best_saves_the_best_validations_weights_not_the_last(tmp_path, monkeypatch):
    """Validation scores forced to fall after the first check: the run must end on, evaluate and save the weights of
    that first validation (step 2), not those of the last step (6), which later steps changed."""
    import torch

    import fsa2rnn.nn.train.trainer as trainer
    from fsa2rnn.nn.train.checkpoint import load_checkpoint

    calls = []
    validate = trainer._Trainer._validate

    def falling(self):
        rec = validate(self)
        calls.append(1)
        first = len(calls) == 1
        return {**rec, "val_sequence_accuracy": 1.0 if first else 0.0, "val_token_accuracy": 1.0 if first else 0.0}

    evaluated = {}
    finish = trainer.finish

    def spy(prep, result):
        evaluated.update({k: v.detach().clone() for k, v in result["model"].state_dict().items()})
        return finish(prep, result)

    monkeypatch.setattr(trainer._Trainer, "_validate", falling)
    monkeypatch.setattr(trainer, "finish", spy)
    cfg = TrainConfig(
        task="brandoit:Z2", model="nfsm", d_model=16, batch=8, steps=6, lr=1e-2, warmup=0.0, val_every=2,
        val_samples=8, log_every=2, keep_best=True, early_stop=0, eval_lengths=[16], samples=4, cap=16,
        train_length="16..16", progress=False,
    )  # fmt: skip
    trainer.train(cfg, tmp_path / "run")
    header, saved = load_checkpoint(tmp_path / "run" / "model.safetensors")
    assert (header["best_step"], header["step"]) == (2, 6)
    shared = [k for k in evaluated if k in saved]
    assert shared and all(torch.equal(saved[k], evaluated[k]) for k in shared)
