"""One definition of a table cell (issue 32, item 5): every cell of every table, at every scale, is exactly the run
of ``fsa2rnn train TASK --preset P --scale S`` with the cell's model and arm — its command line read by the train
command's own parser and resolver (cli/train.py, fsa2rnn.nn.train.run.resolve), not a copy."""

import dataclasses
import shlex

import pytest

from fsa2rnn.cli.train import train_command
from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.nn.train.config import TrainConfig
from fsa2rnn.nn.train.presets import get_preset
from fsa2rnn.nn.train.reproduce import REPRODUCTIONS, get_reproduction
from fsa2rnn.nn.train.run import resolve

TABLES = ("brandoit-table1", "grazzi-table3", "grazzi-s5", "dlr-atomic")


def _cells(name: str):
    rep = get_reproduction(name)
    for scale in rep.scales:
        try:
            jobs = rep.jobs(scale, list(rep.tasks), list(rep.models), list(rep.arms), [rep.seeds[0]])
        except SpecError:  # a scale the table's presets do not have (grazzi-table3 --scale medium: parity)
            continue
        yield from ((scale, job) for job in jobs)


def _as_train(job) -> TrainConfig:
    """The TrainConfig that `fsa2rnn train` builds from the job's command line."""
    argv = shlex.split(job.command())
    assert argv[:2] == ["fsa2rnn", "train"]
    ctx = train_command.make_context("train", argv[2:], resilient_parsing=False)
    fields, seeds = resolve(ctx.params)
    assert seeds is None
    return TrainConfig(**{**fields, "progress": False})


def test_the_tables_are_registered():
    assert set(TABLES) <= set(REPRODUCTIONS.names())


@pytest.mark.parametrize("name", TABLES)
def test_every_cell_is_its_train_preset_run(name):
    seen = set()
    for scale, job in _cells(name):
        assert job.preset, f"{name} {scale} {job.name}: a cell not made from a preset"
        assert job.config["preset"] == job.preset and job.config["scale"] == scale
        table = TrainConfig(**job.config, seed=job.seed, progress=False)
        cli = _as_train(job)
        assert dataclasses.asdict(cli) == dataclasses.asdict(table), f"{name} --scale {scale}: {job.name}"
        seen.add(scale)
    assert {"tiny", "small", "paper"} <= seen


def test_the_budgets_and_heads_are_the_presets():
    """The settings that used to live in brandoit-table1 only (issue 32): Z16's and TSO's step budgets, A5's heads,
    TSO's length and depth, the Mamba⁻ block."""
    rep = get_reproduction("brandoit-table1")
    job = {j.cell: j for j in rep.jobs("small", ["Z16", "A5", "TSO3", "S4"], list(rep.models), list(rep.arms), [60])}
    z16, a5 = job[("Z16", "nfsm", "anchored")], job[("A5", "nfsm", "anchored")]
    tso, mamba = job[("TSO3", "nfsm", "anchored")], job[("S4", "mamba", "free")]
    assert z16.config["steps"] == 2000 and job[("Z16", "aussm", "free")].config["steps"] == 2000
    assert a5.config["head_family"] == "factored:5,12" and a5.config["steps"] == 600
    assert (tso.config["steps"], tso.config["layers"], tso.config["train_length"]) == (2500, 2, "256..256")
    pdssm = job[("TSO3", "pdssm", "free")].config
    assert pdssm["train_length"] == "256..256" and pdssm["steps"] == 2500 and "head_family" not in pdssm
    assert mamba.config["model"] == "mamba-minus"
    assert job[("S4", "nfsm-regular", "free")].config["head_family"] == "regular"
    assert z16.command() == (
        "fsa2rnn train brandoit:Z16 --preset brandoit --scale small --model nfsm --arm anchored --seed 60 --out RUN"
    )
    settings = get_preset("brandoit").settings("small", "nfsm", "brandoit:Z16")
    assert settings["steps"] == 2000 and settings["arm"] == "anchored" and settings["head_family"] == "regular"


def test_tiny_is_over_small_and_keeps_the_task_settings():
    p = get_preset("brandoit")
    tiny = p.settings("tiny", "nfsm", "brandoit:TSO3")
    assert tiny["steps"] == 6 and tiny["layers"] == 2 and tiny["train_length"] == "256..256"
    assert get_preset("grazzi-s5").settings("tiny", None, "grazzi:S5:tokens4")["eval_lengths"] == [64, 128]
    with pytest.raises(SpecError, match="has none"):
        get_preset("grazzi-s5").settings("medium", None)


@pytest.mark.parametrize("name", TABLES)
def test_tiny_is_one_seed_and_a_few_cells(name):
    """`--scale tiny` (issue 32, item 7): without --tasks/--seeds, the table's few smoke-test tasks and one seed
    (measured here: under 25 s per table); --tasks and --seeds still choose."""
    rep = get_reproduction(name)
    tasks, models, arms, seeds = rep.select("tiny", None, None, None, None)
    assert seeds == [rep.seeds[0]] and tasks == list(rep.tiny_tasks) and 0 < len(tasks) <= 2
    assert len(rep.all_jobs("tiny", tasks, models, arms, seeds)) <= 12
    assert rep.select("tiny", None, None, None, "42,43")[3] == [42, 43]
    assert rep.select("small", None, None, None, None)[0] == list(rep.tasks)


def test_the_estimate_line_and_the_wall_times_kept(tmp_path, monkeypatch):
    from fsa2rnn.nn.train.reproduce import walltimes

    monkeypatch.setenv(walltimes.ENV, str(tmp_path / "w.json"))
    rep = get_reproduction("brandoit-table1")
    jobs = rep.jobs("small", ["Z2", "Z16"], ["nfsm"], ["anchored"], [42, 43])
    assert walltimes.plan_line(rep.name, "small", jobs, 10) == (
        "brandoit-table1 --scale small: 4 runs to do (6 of 10 finished already); estimated time unknown (no wall "
        "time measured for these cells in w.json)"
    )
    walltimes.record(rep.name, "small", [(jobs[0], 100.0), (jobs[1], 200.0)])
    assert walltimes.load()["brandoit-table1"]["small"]["Z2__nfsm__anchored"] == {"seconds": 150.0, "runs": 2}
    assert walltimes.estimate(rep.name, "small", jobs) == (300.0, 2)
    line = walltimes.plan_line(rep.name, "small", jobs, 4)
    assert line.startswith("brandoit-table1 --scale small: 4 runs to do; estimated 5 min on one process for 2 of")
    assert "2 unknown" in line


def test_the_tracked_wall_times_cover_every_tiny_table():
    import json

    from fsa2rnn.nn.train.reproduce import walltimes

    data = json.loads(walltimes.DEFAULT.read_text())
    for name in TABLES:
        rep = get_reproduction(name)
        jobs = rep.all_jobs("tiny", *rep.select("tiny", None, None, None, None))
        cells = data[name]["tiny"]
        assert all(walltimes.cell_key(j) in cells for j in jobs), name


def test_a_table_not_run_names_each_seed_once_in_at_most_7_columns(tmp_path):
    """--table-only on a folder without finished runs: every cell "not run", each rate's seeds named once (issue 32:
    a row not run listed each seed twice), every table at most 7 columns, each cell's preset recorded."""
    import json

    from click.testing import CliRunner

    from fsa2rnn.cli.main import main

    (tmp_path / "runs").mkdir()
    args = ["reproduce", "grazzi-table3", "--scale", "paper", "--tasks", "parity", "--models", "deltanet",
            "--arm", "0..1", "--out", str(tmp_path), "--table-only", "--quiet"]  # fmt: skip
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    md = (tmp_path / "table.md").read_text()
    rows = [line for line in md.splitlines() if line.startswith("| parity | DeltaNet [0, 1] | 0.")]
    assert len(rows) == 4 and all("not run (42–44)" in r for r in rows), rows  # the paper's 4 rates
    assert all(line.count("|") <= 8 for line in md.splitlines() if line.startswith("|"))
    table = json.loads((tmp_path / "table.json").read_text())
    (cell,) = table["cells"]
    assert cell["preset"]["name"] == "grazzi-parity" and cell["preset"]["scale"] == "paper"
    assert cell["preset"]["lr_grid"] == [1e-2, 1e-3, 5e-4, 1e-4] and "--lr " not in cell["preset"]["command"]
    assert set(table["fsa2rnn"]) >= {"version", "commit"}
