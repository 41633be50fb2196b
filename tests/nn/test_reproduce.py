"""`fsa2rnn reproduce` (nn/train/reproduce): the registry, a tiny brandoit-table1 end to end, resumption, bad input."""

import json

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.nn.train.reproduce import REPRODUCTIONS, get_reproduction
from fsa2rnn.nn.train.reproduce.brandoit_table1 import PAPER, TASKS


def test_registry_and_the_papers_values():
    assert "brandoit-table1" in REPRODUCTIONS
    rep = get_reproduction("brandoit-table1")
    assert rep.tasks == TASKS and {m for _, m in PAPER} | {"nfsm-regular"} == set(rep.models)
    assert PAPER[("Z2", "mamba")]["value"] == 4352 and PAPER[("M11", "nfsm")]["value"] == 2**15
    assert PAPER[("A5", "mamba")]["value"] is None and len(PAPER[("S4", "mamba")]["seeds"]) == 5
    # baselines have only the free arm; Table 1's NFSM heads
    jobs = rep.jobs("small", ["A5"], ["nfsm", "mamba"], ["anchored", "free"], [42])
    assert [(j.model, j.arm) for j in jobs] == [("nfsm", "anchored"), ("nfsm", "free"), ("mamba", "free")]
    assert jobs[0].config["head_family"] == "factored:5,12" and jobs[2].config["threshold"] == 0.9
    regular = rep.jobs("small", ["A5", "Z2"], ["nfsm-regular"], ["anchored"], [42])
    assert [(j.task, j.config["head_family"]) for j in regular] == [("A5", "regular")]


def test_tiny_table_end_to_end_and_resumed(tmp_path, monkeypatch):
    out = tmp_path / "rep"
    args = ["reproduce", "brandoit-table1", "--scale", "tiny", "--tasks", "Z2,TSO3", "--models", "nfsm"]
    args += ["--arm", "anchored", "--seeds", "42", "--out", str(out), "--json"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    table = json.loads(res.stdout)
    assert (out / "table.md").is_file() and (out / "plot.png").stat().st_size > 0
    assert json.loads((out / "table.json").read_text()) == table
    z2, tso = table["cells"]
    assert (z2["task"], z2["model"], z2["arm"]) == ("Z2", "nfsm", "anchored")
    seed = z2["seeds"][0]
    assert seed["status"] == "done" and seed["job"]["seed"] == 42 and seed["seconds"] > 0
    assert (out / seed["run"] / "eval.json").is_file() and z2["paper"]["aggregate"] == ">=1M"
    # TSO3: the authors' two-layer NFSM at length 256, its top layer anchored on the registers, L_max from 256
    run = json.loads((out / tso["seeds"][0]["run"] / "config.json").read_text())
    run = run.get("train", run)
    assert (run["task"], run["layers"], run["head_family"], run["train_length"]) == (
        "brandoit:TSO3", 2, "registers", "256..256")  # fmt: skip
    assert tso["seeds"][0]["status"] == "done" and "accuracy_at_start" in tso["seeds"][0]
    # a finished run is read back, never trained again
    import fsa2rnn.nn.train.trainer as trainer

    monkeypatch.setattr(trainer, "train", lambda *a, **k: pytest.fail("a finished run was re-run"))
    again = CliRunner().invoke(main, args)
    assert again.exit_code == 0 and json.loads(again.stdout)["cells"] == table["cells"]
    # progress over the runs on stderr like the other commands (a line per interval off a terminal; 0 s here),
    # none under --quiet; stdout is the same table either way
    from fsa2rnn.fsa import progress

    monkeypatch.setattr(progress, "LOG_INTERVAL", 0.0)
    loud, quiet = CliRunner().invoke(main, args), CliRunner().invoke(main, [*args, "--quiet"])
    progress.set_quiet(False)
    assert loud.exit_code == quiet.exit_code == 0, loud.output
    assert any(line.startswith("brandoit-table1:") and "2/2" in line for line in loud.stderr.splitlines()), loud.stderr
    assert quiet.stderr == "" and json.loads(loud.stdout) == json.loads(quiet.stdout) == json.loads(again.stdout)


def test_a_run_this_build_cannot_do_is_not_run(tmp_path, monkeypatch):
    from fsa2rnn.nn.train.reproduce.brandoit_table1 import BrandoitTable1

    monkeypatch.setattr(BrandoitTable1, "unavailable", lambda self, job: "the layer is not in this build")
    args = ["reproduce", "brandoit-table1", "--scale", "tiny", "--tasks", "Z2", "--models", "nfsm", "--arm", "anchored"]
    res = CliRunner().invoke(main, [*args, "--seeds", "42", "--out", str(tmp_path / "o"), "--json"])
    assert res.exit_code == 0, res.output
    (cell,) = json.loads(res.stdout)["cells"]
    assert cell["aggregate"] == "not run" and cell["seeds"][0]["reason"] == "the layer is not in this build"


@pytest.mark.parametrize(
    "extra,message",
    [
        (["nope"], "unknown reproduction 'nope'"),
        (["brandoit-table1", "--scale", "huge"], "--scale must be one of"),
        (["brandoit-table1", "--tasks", "Z3"], "--tasks: unknown task of brandoit-table1 'Z3' (choose from Z2,"),
        (["brandoit-table1", "--models", "mamba", "--arm", "anchored"], "the selection has no runs"),
        (["brandoit-table1", "--seeds", "4x"], "--seeds must be distinct integers"),
    ],
)
def test_bad_input_is_one_line_exit_2(tmp_path, extra, message):
    res = CliRunner().invoke(main, ["reproduce", *extra, "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and message in res.output
    assert not (tmp_path / "o").exists()
