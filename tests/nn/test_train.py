"""`fsa2rnn train`: the run's files and JSON, determinism, resume after SIGKILL (same records as a run never
stopped), the schedule, presets, seeds' summary, regression tasks, and bad input (exit 2, one line, nothing
overwritten). Tiny models and a few steps."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.nn.train.checkpoint import load_checkpoint
from fsa2rnn.nn.train.config import TrainConfig
from fsa2rnn.nn.train.run import summarize
from fsa2rnn.nn.train.trainer import lr_at

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY = ["--d-model", "16", "--mlp-ratio", "0", "--batch", "8", "--samples", "16", "--cap", "64", "--log-every", "2"]
RUN_FILES = {"config.json", "model.safetensors", "metrics.jsonl", "eval.json", "curves.png"}


def _train(args: list[str]):
    return CliRunner().invoke(main, ["train", *args])


def _records(run: Path, keys=("step", "loss", "accuracy")) -> list[tuple]:
    return [tuple(r[k] for k in keys) for r in map(json.loads, (run / "metrics.jsonl").read_text().splitlines())]


def test_a_run_writes_its_files_and_the_json_contract(tmp_path):
    out = tmp_path / "run"
    res = _train(
        [
            "grazzi:parity",
            "--model",
            "deltanet",
            "--eig",
            "-1,1",
            "--steps",
            "6",
            *TINY,
            "--eval-lengths",
            "8,16",
            "--out",
            str(out),
            "--json",
        ]
    )
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert {"run", "steps", "final_loss", "train_accuracy", "eval", "l_max", "l_max_capped"} <= set(got)
    assert {"lengths", "token_accuracy", "sequence_accuracy"} <= set(got["eval"])
    assert got["steps"] == 6 and got["eval"]["lengths"] == [8, 16]
    assert set(os.listdir(out)) == RUN_FILES
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    ev = json.loads((out / "eval.json").read_text())
    assert ev["token_accuracy"] == got["eval"]["token_accuracy"]
    recs = _records(out)
    assert [r[0] for r in recs] == [2, 4, 6] and recs[-1][1] == got["final_loss"]
    header, tensors = load_checkpoint(out / "model.safetensors")
    assert header["step"] == 6 and header["finished"] and any(k.startswith("optim/") for k in tensors)
    config = json.loads((out / "config.json").read_text())
    assert config["model"]["layer_args"]["beta_range"] == [0, 2]  # --eig -1,1 is β ∈ [0, 2] for DeltaNet


def test_same_command_same_seed_same_records_other_seed_differs(tmp_path):
    args = [
        "brandoit:FF",
        "--model",
        "nfsm",
        "--steps",
        "8",
        *TINY,
        "--no-lmax",
        "--eval-lengths",
        "8",
        "--dropout",
        "0.1",
    ]
    for name, seed in (("a", "3"), ("b", "3"), ("c", "4")):
        assert _train([*args, "--seed", seed, "--out", str(tmp_path / name)]).exit_code == 0
    a, b, c = (_records(tmp_path / n) for n in "abc")
    assert a == b and len(a) == 4
    assert a != c


def test_resume_after_sigkill_gives_the_records_of_an_uninterrupted_run(tmp_path):
    args = [
        "grazzi:parity",
        "--model",
        "mamba",
        "--eig",
        "-1,1",
        "--steps",
        "40",
        *TINY,
        "--checkpoint-every",
        "3",
        "--no-lmax",
        "--eval-lengths",
        "8",
        "--log-every",
        "1",
    ]
    assert _train([*args, "--out", str(tmp_path / "whole")]).exit_code == 0
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "fsa2rnn.cli", "train", *args, "--out", str(out)]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        ckpt = out / "model.safetensors"
        if ckpt.exists() and load_checkpoint(ckpt)[0]["step"] >= 6:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the training finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    header, _ = load_checkpoint(out / "model.safetensors")  # the last checkpoint is readable
    assert 6 <= header["step"] < 40 and not header["finished"]
    again = _train([*args, "--out", str(out)])
    assert again.exit_code == 2 and "--resume" in again.stderr  # a run is there: refused without --resume
    res = _train([*args, "--out", str(out), "--resume", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["steps"] == 40
    assert _records(out) == _records(tmp_path / "whole")


def test_a_killed_checkpoint_writes_leftover_is_the_runs_and_resume_removes_it(tmp_path):
    """SIGKILL between a checkpoint's write and its rename leaves `.model.safetensors.XXXXXXXX.tmp` beside the run:
    the run is still a run (refused without --resume, not 'holds other files'), and --resume removes the leftover."""
    args = ["Z3", "--model", "lstm", "--steps", "4", *TINY, "--no-lmax", "--eval-lengths", "8", "--out", str(tmp_path)]
    assert _train(args).exit_code == 0
    leftover = tmp_path / ".model.safetensors.q0r_7zzx.tmp"
    leftover.write_bytes(b"half a checkpoint")
    (tmp_path / ".notes.md.abcdefgh.tmp").write_text("")  # not a run file's: someone else's
    res = _train(args)
    assert res.exit_code == 2 and ".notes.md.abcdefgh.tmp" in res.stderr and ".model" not in res.stderr
    (tmp_path / ".notes.md.abcdefgh.tmp").unlink()
    res = _train(args)
    assert res.exit_code == 2 and "--resume" in res.stderr
    assert _train([*args, "--resume"]).exit_code == 0
    assert not leftover.exists() and (tmp_path / "model.safetensors").is_file()


def test_resume_of_a_finished_run_only_reevaluates(tmp_path):
    args = ["Z3", "--model", "lstm", "--steps", "4", *TINY, "--no-lmax", "--eval-lengths", "8", "--out", str(tmp_path)]
    assert _train(args).exit_code == 0
    before = (tmp_path / "metrics.jsonl").read_text()
    res = _train([*args, "--resume", "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["steps"] == 4
    assert (tmp_path / "metrics.jsonl").read_text() == before


def test_learning_rate_schedule():
    cfg = TrainConfig(task="parity", steps=100, lr=1e-2, min_lr=1e-4, warmup=0.1)
    assert lr_at(cfg, 0) == pytest.approx(1e-3) and lr_at(cfg, 9) == pytest.approx(1e-2)
    for s in (10, 40, 77, 99):
        want = 1e-4 + (1e-2 - 1e-4) * 0.5 * (1 + math.cos(math.pi * (s - 10) / 90))
        assert lr_at(cfg, s) == pytest.approx(want)


def test_seeds_summary_median_over_the_seeds_that_learned():
    cfg = TrainConfig(task="parity", cap=1024)

    def run(seed, l_max, capped):
        return {
            "seed": seed,
            "run": f"r{seed}",
            "l_max": l_max,
            "l_max_capped": capped,
            "steps": 1,
            "final_loss": 0,
            "train_lengths": [3, 40],
            "eval": {"lengths": [40], "sequence_accuracy": [1.0]},
        }

    results = [run(1, 17, False), run(2, 300, False), run(3, None, True), run(4, 90, False), run(5, None, True)]
    s = summarize(results, cfg)
    assert [r["learned"] for r in s["runs"]] == [False, True, True, True, True]  # seed 1 fails below 40
    # learned: 300, ≥1024, 90, ≥1024 → sorted 90, 300, 1024, 1024; the lower median is 300
    assert s["learned"] == 4 and s["median_l_max"] == 300 and s["median_l_max_capped"] is False


def test_seeds_write_one_run_per_seed_and_a_summary(tmp_path):
    res = _train(
        [
            "parity",
            "--model",
            "nfsm",
            "--steps",
            "4",
            *TINY,
            "--eval-lengths",
            "8",
            "--seeds",
            "1,2",
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary == json.loads(res.stdout) and summary["seeds"] == [1, 2]
    assert {p.name for p in tmp_path.iterdir()} == {"seed-1", "seed-2", "summary.json"}


def test_preset_fills_in_only_the_flags_not_given(tmp_path):
    res = _train(
        [
            "--preset",
            "grazzi-parity",
            "--scale",
            "small",
            "--steps",
            "2",
            "--samples",
            "8",
            "--eval-lengths",
            "8",
            "--no-lmax",
            "--out",
            str(tmp_path),
        ]
    )
    assert res.exit_code == 0, res.output
    cfg = json.loads((tmp_path / "config.json").read_text())["train"]
    assert cfg["task"] == "grazzi:parity" and cfg["steps"] == 2 and cfg["d_model"] == 128 and cfg["eig"] == "-1,1"
    assert cfg["short_conv"] is True and cfg["layers"] == 2  # the authors' model, convolutions on


def test_regression_task_reports_r2(tmp_path):
    res = _train(
        [
            "dlr:cumsum",
            "--model",
            "dlr",
            "--steps",
            "4",
            "--d-model",
            "8",
            "--state-size",
            "4",
            "--batch",
            "4",
            "--samples",
            "8",
            "--train-length",
            "16..16",
            "--out",
            str(tmp_path),
            "--json",
        ]
    )
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert got["l_max"] is None and got["l_max_capped"] is False
    assert got["eval_regression"][0]["length"] == 16 and math.isfinite(got["eval_regression"][0]["r2"])
    assert math.isfinite(got["train_accuracy"])  # R² of the training batch


BAD = [
    (["no-such-task"], "unknown task"),
    (["parity", "--model", "gru"], "unknown model"),
    (["parity", "--model", "lstm", "--eig", "-1,1"], "--eig"),
    (["parity", "--model", "transformer", "--eig", "0,1"], "--eig"),
    (["parity", "--model", "nfsm", "--eig", "-1,1"], "--eig"),
    (["parity", "--model", "dlr", "--eig", "-1,1"], "--eig"),
    (["parity", "--eig", "1,2"], "--eig"),
    (["parity", "--train-length", "9..3"], "--train-length 9..3: empty range"),
    (["parity", "--seed", "1", "--seeds", "1,2"], "--seeds"),
    (["parity", "--preset", "nope"], "unknown preset"),
    (["parity", "--batch", "5", "--nproc", "2"], "divisible"),
    (["parity", "--heads", "2", "--model", "mamba"], "--heads"),
    (["--steps", "3"], "TASK"),
]


@pytest.mark.parametrize("args,message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_exits_2_with_one_line_and_writes_nothing(tmp_path, args, message):
    out = tmp_path / "run"
    res = _train([*args, "--out", str(out)])
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and message in lines[0], res.stderr
    assert not out.exists()


def test_corrupted_checkpoint_is_refused_and_left_alone(tmp_path):
    args = [
        "parity",
        "--model",
        "lstm",
        "--steps",
        "4",
        *TINY,
        "--no-lmax",
        "--eval-lengths",
        "8",
        "--out",
        str(tmp_path),
    ]
    assert _train(args).exit_code == 0
    ckpt = tmp_path / "model.safetensors"
    data = bytearray(ckpt.read_bytes())
    data[-3] ^= 0xFF  # a flipped byte in the last tensor
    ckpt.write_bytes(bytes(data))
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    for cmd in (["train", *args, "--resume"], ["eval", str(tmp_path)]):
        res = CliRunner().invoke(main, cmd)
        assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "corrupted" in res.stderr, res.output
    ckpt.write_bytes(b"not a safetensors file")
    res = _train([*args, "--resume"])
    assert res.exit_code == 2 and res.stderr.startswith("error: checkpoint")
    assert "is not a safetensors file" in res.stderr
    before["model.safetensors"] = b"not a safetensors file"
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_resume_with_other_settings_is_refused(tmp_path):
    args = [
        "parity",
        "--model",
        "lstm",
        "--steps",
        "2",
        *TINY,
        "--no-lmax",
        "--eval-lengths",
        "8",
        "--out",
        str(tmp_path),
    ]
    assert _train(args).exit_code == 0
    res = _train([*args, "--resume", "--lr", "0.5"])
    assert res.exit_code == 2 and "lr" in res.stderr


def test_first_error_weights_follow_the_definition():
    import torch

    from fsa2rnn.nn.tasks import Batch
    from fsa2rnn.nn.train.trainer import first_error_weights

    targets = torch.tensor([[0, 1, 1, 0], [1, 1, 0, 0], [0, 0, 0, 0]])
    preds = torch.tensor([[0, 1, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1]])  # first errors at t = 2, 0, none (pad at 3)
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 1, 1], [1, 1, 1, 0]], dtype=torch.bool)
    logits = torch.nn.functional.one_hot(preds, 2).float()
    w = first_error_weights(logits, Batch(preds, targets, mask, mask.sum(1)))
    e = math.exp
    want = [[1, 1, 1, e(-3)], [1, e(-3), e(-6), e(-9)], [1, 1, 1, 1]]
    assert torch.allclose(w, torch.tensor(want))


def test_nfsm_heads_auto_tracks_a_base_of_the_group_action():
    from fsa2rnn.nn.tasks import get_task
    from fsa2rnn.nn.train.config import model_config

    for task, heads in (("brandoit:S3", [3, 3]), ("brandoit:S4", [4, 4, 4]), ("brandoit:FF", [3])):
        cfg = TrainConfig(task=task, model="nfsm")
        assert model_config(cfg, get_task(task)).layer_args["heads"] == heads
    cfg = TrainConfig(task="brandoit:S3", model="nfsm", nfsm_heads="single")
    assert model_config(cfg, get_task("brandoit:S3")).layer_args["heads"] == [6]
    cfg = TrainConfig(task="brandoit:S3", model="nfsm", nfsm_heads="4x11")
    assert model_config(cfg, get_task("brandoit:S3")).layer_args["heads"] == [11] * 4
    # overcomplete: auto:K multiplies every head's indices; the noise scale reaches the layer
    cfg = TrainConfig(task="brandoit:S3", model="nfsm", nfsm_heads="auto:4", gumbel=0.0)
    args = model_config(cfg, get_task("brandoit:S3")).layer_args
    assert args["heads"] == [12, 12] and args["gumbel"] == 0.0
    with pytest.raises(SpecError, match="--gumbel applies to nfsm"):
        TrainConfig(task="grazzi:parity", model="mamba", gumbel=0.0)


def test_nfsm_init_options_reach_the_layer_and_draw_last():
    """--nfsm-identity adds b to the bias of every θ[k, k] and nothing else; --nfsm-readout-std redraws only
    out_proj, after the default initialization (the other weights are those of the default layer)."""
    import torch

    from fsa2rnn.nn.layers.nfsm import NFSM
    from fsa2rnn.nn.tasks import get_task
    from fsa2rnn.nn.train.config import model_config

    cfg = TrainConfig(task="brandoit:Z16", model="nfsm", nfsm_heads="auto:2", nfsm_identity=1.5, nfsm_readout_std=2.0)
    args = model_config(cfg, get_task("brandoit:Z16")).layer_args
    assert args["identity_bias"] == 1.5 and args["readout_std"] == 2.0 and args["heads"] == [32]
    torch.manual_seed(0)
    plain = NFSM(64, [3, 5])
    torch.manual_seed(0)
    layer = NFSM(64, [3, 5], identity_bias=1.5, readout_std=2.0)
    shift = (layer.logits.bias - plain.logits.bias).detach()
    for block, d in ((shift[:9], 3), (shift[9:], 5)):  # off the diagonal untouched, on it + 1.5 (float32 sums)
        torch.testing.assert_close(block.view(d, d), 1.5 * torch.eye(d), rtol=0, atol=1e-6)
        assert torch.equal(block.view(d, d) * (1 - torch.eye(d)), torch.zeros(d, d))
    assert torch.equal(layer.logits.weight, plain.logits.weight)
    assert torch.equal(layer.start_logits, plain.start_logits)
    assert 1.5 < float(layer.out_proj.weight.detach().std()) < 2.5 and float(plain.out_proj.weight.detach().std()) < 0.5
    with pytest.raises(SpecError, match="--nfsm-identity applies to nfsm"):
        TrainConfig(task="grazzi:parity", model="deltanet", nfsm_identity=1.0)


@pytest.mark.parametrize(
    "task,bad,match",
    [
        ("brandoit:S3", dict(nfsm_heads="auto:0"), "auto:K takes an integer K"),
        ("brandoit:S3", dict(nfsm_heads="auto:x"), "auto:K takes an integer K"),
        ("brandoit:S3", dict(gumbel=-1.0), r"--gumbel -1.0 is outside its limit \[0, 1,000\]"),
        ("brandoit:Z16", dict(nfsm_identity=float("inf")), "--nfsm-identity must be a finite number"),
        ("brandoit:Z16", dict(nfsm_readout_std=0.0), r"--nfsm-readout-std 0.0 is outside its limit \(0, 1,000\]"),
        ("brandoit:Z16", dict(nfsm_readout_std=-1.0), r"--nfsm-readout-std -1.0 is outside its limit \(0, 1,000\]"),
    ],
)
def test_bad_nfsm_settings_are_refused(task, bad, match):
    with pytest.raises(SpecError, match=match):
        TrainConfig(task=task, model="nfsm", **bad)


def test_brandoit_preset_sets_the_nfsm_recipe_and_not_the_baselines():
    from fsa2rnn.nn.train.run import preset_config

    nfsm = preset_config("brandoit", "small", task="brandoit:S3")
    assert (nfsm.loss, nfsm.arm, nfsm.nu, nfsm.explore, nfsm.anchor_explore) == (
        "balanced",
        "anchored",
        0.5,
        0.03,
        0.01,
    )
    assert (nfsm.protocol, nfsm.keep_best, nfsm.nfsm_readout_std, nfsm.gumbel) == ("brandoit", True, 1.0, None)
    base = preset_config("brandoit", "small", task="brandoit:FF", model="mamba")
    assert (base.arm, base.nu, base.explore, base.nfsm_readout_std, base.threshold) == ("free", None, 0.0, None, 0.9)


def test_preset_val_every_is_scaled_for_a_shortened_run_only(tmp_path):
    """A preset's val_every is kept at the preset's own steps (documented runs unchanged), and scaled down to give
    MIN_VALIDATIONS validations when a user-given --steps would leave fewer; --val-every always wins."""
    from fsa2rnn.nn.train.presets import MIN_VALIDATIONS, PRESETS
    from fsa2rnn.nn.train.run import preset_config

    for name, preset in PRESETS.items():
        for scale in preset.scales:
            own = preset.settings(scale, None)
            cfg = preset_config(name, scale)
            assert cfg.val_every == own.get("val_every", TrainConfig.val_every), (name, scale)
            if "steps" in own:
                assert preset_config(name, scale, steps=own["steps"]).val_every == cfg.val_every, (name, scale)
    assert preset_config("grazzi-parity", "small", steps=100).val_every == 100 // MIN_VALIDATIONS
    assert preset_config("grazzi-parity", "small", steps=100, val_every=250).val_every == 250
    assert preset_config("grazzi-parity", "small", steps=5000).val_every == 100  # enough validations: kept
    assert preset_config("grazzi-parity", "small", steps=3).val_every == 1
    # the shortened run's curves get the validations: steps 2, 4, 6, 8
    out = tmp_path / "run"
    res = _train(["--preset", "grazzi-parity", "--scale", "small", "--steps", "8", *TINY, "--eval-lengths", "8",
                  "--no-lmax", "--out", str(out), "--quiet"])  # fmt: skip
    assert res.exit_code == 0, res.output
    records = map(json.loads, (out / "metrics.jsonl").read_text().splitlines())
    assert [r["step"] for r in records if "val_sequence_accuracy" in r] == [2, 4, 6, 8]
