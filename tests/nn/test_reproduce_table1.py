"""brandoit-table1's judgement of a run (learned on the training draw, L_max on the evaluation draw) and
``fsa2rnn reproduce --table-only``."""

import pytest
import torch

from fsa2rnn.compiler import compile_nfsm
from fsa2rnn.nn import metrics as E
from fsa2rnn.nn.model import SequenceModel
from fsa2rnn.nn.tasks import get_task
from fsa2rnn.nn.train.reproduce import get_reproduction

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_the_training_draw_is_scored_when_asked():
    """brandoit:FF writes with probability 0.1 in training and 0.01 in evaluation. A compiled flip-flop whose readout
    swaps the two written classes is right exactly on the words without a write: 0.99^64 ≈ 0.53 of the evaluation
    draw, 0.9^64 ≈ 0.001 of the training draw."""
    task = get_task("brandoit:FF")
    net = SequenceModel.from_compiled(compile_nfsm(task.automaton, heads="single")).float().eval()
    with torch.no_grad():
        net.classifier.weight[[1, 2]] = net.classifier.weight[[2, 1]].clone()
        net.classifier.bias[[1, 2]] = net.classifier.bias[[2, 1]].clone()
    ev = E.accuracy_at_lengths(net, task, [64], samples=128, seed=3)["sequence_accuracy"][0]
    tr = E.accuracy_at_lengths(net, task, [64], samples=128, seed=3, train=True)["sequence_accuracy"][0]
    assert 0.35 < ev < 0.7 and tr < 0.05


def test_learned_is_judged_on_the_training_draw():
    rep = get_reproduction("brandoit-table1")
    (job,) = rep.jobs("small", ["FF"], ["mamba"], ["free"], [42])
    evaluation = {"l_max": 64, "l_max_capped": False, "l_max_cap": 2**15, "l_max_trace": {"64": 0.5}}
    # fails at 64 on the evaluation draw but reaches the bar on the training draw: learned, L_max 64
    got = rep.result(job, {}, {**evaluation, "train_draw": {"length": 64, "sequence_accuracy": 0.95}})
    assert got["learned"] and got["l_max_text"] == "64" and got["learned_on"] == "training draw"
    got = rep.result(job, {}, {**evaluation, "train_draw": {"length": 64, "sequence_accuracy": 0.85}})
    assert not got["learned"] and got["l_max_text"] == "x"
    # a run evaluated without the training draw: judged on the evaluation draw
    got = rep.result(job, {}, evaluation)
    assert not got["learned"] and got["learned_on"] == "evaluation draw"


def test_table_only_reads_the_finished_runs_and_trains_nothing(tmp_path, monkeypatch):
    import json

    from click.testing import CliRunner

    import fsa2rnn.nn.train.trainer as trainer
    from fsa2rnn.cli.main import main

    monkeypatch.setattr(trainer, "train", lambda *a, **k: pytest.fail("--table-only trained a run"))
    out = tmp_path / "t1"
    args = ["reproduce", "brandoit-table1", "--tasks", "FF,Z2", "--models", "mamba", "--seeds", "42,43"]
    args += ["--out", str(out), "--table-only", "--json"]
    missing = CliRunner().invoke(main, args)
    assert missing.exit_code == 2 and "--table-only" in missing.output and not out.exists()
    # one finished run (its record as run_job writes it), one interrupted (a run directory without a record)
    rep = get_reproduction("brandoit-table1")
    (job, unfinished) = rep.jobs("small", ["FF"], ["mamba"], ["free"], [42, 43])
    evaluation = {"l_max": 170, "l_max_capped": False, "l_max_cap": 2**15, "l_max_trace": {"64": 1.0}}
    record = {"job": {"task": "FF", "model": "mamba", "arm": "free", "seed": 42}, "status": "done", "seconds": 20.0}
    record.update(rep.result(job, {"steps": 300}, {**evaluation, "train_draw": {"sequence_accuracy": 1.0}}))
    (out / "runs" / job.name).mkdir(parents=True)
    (out / "runs" / job.name / "reproduce.json").write_text(json.dumps(record))
    (out / "runs" / unfinished.name).mkdir()
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    ff, z2 = json.loads(res.stdout)["cells"]
    assert (ff["task"], ff["aggregate"], ff["learned"], ff["seconds"]) == ("FF", "170", "1/1", 20.0)
    assert [s["status"] for s in ff["seeds"]] == ["done", "not run"] and "--table-only" in ff["seeds"][1]["reason"]
    assert z2["aggregate"] == "not run" and (out / "table.md").is_file() and (out / "plot.png").is_file()
    assert sorted(p.name for p in (out / "runs").iterdir()) == sorted([job.name, unfinished.name])
