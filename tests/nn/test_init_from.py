"""`fsa2rnn train --init-from MODEL`: the compiled weights start the run in the trainer's architecture and realize
the automaton at step 0 (checked against the automaton on random words); a few AdamW steps at a small learning rate
keep sequence accuracy 1.0; conflicting flags and another automaton are refused with one line."""

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.compiler import compile_householder, compile_nfsm
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.nn.model import SequenceModel
from fsa2rnn.nn.tasks import get_task
from fsa2rnn.nn.train.config import TrainConfig
from fsa2rnn.nn.train.init_from import init_architecture, init_model_config, load_init

pytestmark = pytest.mark.usefixtures("one_torch_thread")


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("compiled")
    out = {}
    for name, compiled in (("parity", compile_householder(resolve_spec("parity"))),
                           ("S5", compile_householder(resolve_spec("S5"))),
                           ("flipflop", compile_nfsm(resolve_spec("flipflop"), heads="single"))):  # fmt: skip
        compiled.save(d / f"{name}.safetensors")
        out[name] = str(d / f"{name}.safetensors")
    return out


def _start(task_name: str, path: str, **kw) -> tuple[SequenceModel, object]:
    task = get_task(task_name)
    cfg = init_architecture(TrainConfig(task=task_name, init_from=path, **kw), task)
    net = SequenceModel.from_config(init_model_config(cfg, task))
    load_init(net, cfg, task)
    return net.eval(), task


@pytest.mark.parametrize("task_name,key", [("grazzi:parity", "parity"), ("grazzi:S5", "S5"),
                                           ("flipflop", "flipflop")])  # fmt: skip
def test_step_zero_realizes_the_automaton(models, task_name, key):
    net, task = _start(task_name, models[key])
    a = task.automaton
    ids = np.random.default_rng(0).integers(0, a.n_symbols, (16, 64))
    assert np.array_equal(net.predict_states(torch.from_numpy(ids)).numpy(), task.state_class.numpy()[a.run(ids)])
    batch = task.sample(8, (5, 30), torch.Generator().manual_seed(1))  # padded words: the padding token reads in
    pred = net.predict_states(batch.inputs)
    assert bool(((pred == batch.targets) | ~batch.mask).all())


def test_noise_perturbs_the_start_reproducibly(models):
    a, _ = _start("grazzi:parity", models["parity"], init_noise=0.1, seed=3)
    b, _ = _start("grazzi:parity", models["parity"], init_noise=0.1, seed=3)
    c, _ = _start("grazzi:parity", models["parity"])
    wa, wb, wc = (torch.cat([p.detach().reshape(-1) for p in m.parameters()]) for m in (a, b, c))
    assert torch.equal(wa, wb) and not torch.equal(wa, wc)
    assert float((wa - wc).std()) == pytest.approx(0.1, rel=0.2)  # σ·N(0, 1) on every weight


def test_training_from_the_compiled_parity_keeps_accuracy(models, tmp_path):
    args = ["--steps", "20", "--lr", "1e-3", "--train-length", "8..16", "--no-lmax", "--eval-lengths", "16,256",
            "--samples", "64", "--val-every", "5", "--json", "--out", str(tmp_path / "r")]  # fmt: skip
    res = CliRunner().invoke(main, ["train", "grazzi:parity", "--init-from", models["parity"], *args])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["eval"]["sequence_accuracy"] == [1.0, 1.0]
    vals = [json.loads(line).get("val_sequence_accuracy") for line in (tmp_path / "r" / "metrics.jsonl").open()]
    assert [v for v in vals if v is not None] == [1.0] * 4
    stored = json.loads((tmp_path / "r" / "config.json").read_text())
    assert stored["train"]["model"] == "deltaproduct" and stored["model"]["vocab"] == 3  # "0", "1" and padding


@pytest.mark.parametrize("args,phrase", [
    (["--d-model", "32"], "conflicts with --init-from"),
    (["--model", "nfsm"], "conflicts with --init-from"),
    (["--wrapper", "fla"], "--wrapper fla conflicts with --init-from"),
    (["--init-noise", "-1"], "'--init-noise': -1.0 is outside its limit [0, 1,000]"),
])  # fmt: skip
def test_bad_init_from_is_one_line(models, tmp_path, args, phrase):
    res = CliRunner().invoke(main, ["train", "grazzi:parity", "--init-from", models["parity"], *args, "--out",
                                    str(tmp_path / "r")])  # fmt: skip
    assert res.exit_code == 2, res.output
    assert len(res.stderr.strip().splitlines()) == 1 and phrase in res.stderr
    assert not (tmp_path / "r").exists()


def test_init_from_another_automaton_or_a_cascade_is_refused(models, tmp_path):
    for task, path in (("grazzi:parity", models["S5"]), ("brandoit:Z2", models["parity"])):
        res = CliRunner().invoke(main, ["train", task, "--init-from", path, "--out", str(tmp_path / "r")])
        assert res.exit_code == 2 and "name their symbols or states differently" in res.stderr, res.output
    cascade = tmp_path / "t3.safetensors"
    compile_householder(resolve_spec("T3")).save(cascade)
    res = CliRunner().invoke(main, ["train", "T3", "--init-from", str(cascade), "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and "cascade wiring" in res.stderr, res.output
    res = CliRunner().invoke(main, ["train", "grazzi:parity", "--init-noise", "0.1", "--out", str(tmp_path / "r")])
    assert res.exit_code == 2 and "needs --init-from" in res.stderr


def test_nfsm_init_flags_are_refused_with_compiled_weights(tmp_path):
    path = tmp_path / "z5.safetensors"
    compile_nfsm(resolve_spec("Z5")).save(path)
    for flag in ("--nfsm-identity", "--nfsm-readout-std"):
        res = CliRunner().invoke(main, ["train", "Z5", "--model", "nfsm", "--init-from", str(path), flag, "1",
                                        "--out", str(tmp_path / "r")])  # fmt: skip
        assert res.exit_code == 2 and f"{flag} sets an initialization" in res.stderr, res.output
        assert not (tmp_path / "r").exists()
