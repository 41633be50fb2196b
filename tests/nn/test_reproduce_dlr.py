"""`fsa2rnn reproduce dlr-atomic` (nn/train/reproduce/dlr_atomic.py): the jobs from the dlr preset, a tiny table end
to end whose figures are the runs' own (eval.json), its markdown and plot."""

import json

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.nn.tasks.dlr import DLR_TASKS
from fsa2rnn.nn.train.presets import get_preset
from fsa2rnn.nn.train.reproduce import REPRODUCTIONS, get_reproduction
from fsa2rnn.nn.train.reproduce.dlr_atomic import FINDINGS, LONG_SHIFT

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_jobs_follow_the_dlr_preset():
    assert "dlr-atomic" in REPRODUCTIONS
    rep = get_reproduction("dlr-atomic")
    assert rep.tasks == (*DLR_TASKS, LONG_SHIFT) and set(FINDINGS) == set(rep.tasks)
    jobs = rep.jobs("small", list(rep.tasks), list(rep.models), ["free"], [42, 43])
    cells = {(j.task, j.model) for j in jobs}
    # Table 1: DLR, DSS_exp, attention on every atomic task; Table 2: DLR, DSS_exp, DLR-prod on long Shift
    assert cells == {(t, m) for t in DLR_TASKS for m in ("dlr", "dss-exp", "attention")} | {
        (LONG_SHIFT, m) for m in ("dlr", "dss-exp", "dlr-prod")
    }
    assert len(jobs) == 2 * len(cells)
    small = get_preset("dlr").settings("small", "dlr")
    sort = next(j for j in jobs if (j.task, j.model) == ("sort", "dlr"))
    for key in ("d_model", "train_length", "batch", "steps", "lr", "mlp_ratio", "layers", "state_size"):
        assert sort.config[key] == small[key], key
    att = next(j for j in jobs if (j.task, j.model) == ("mips", "attention"))
    assert att.config["task"] == "dlr:mips" and "state_size" not in att.config
    long = next(j for j in jobs if (j.task, j.model) == (LONG_SHIFT, "dlr-prod"))
    assert long.config["task"] == "dlr:shift" and long.preset == "dlr-long"
    assert long.config["train_length"] == get_preset("dlr-long").settings("small", "dlr-prod")["train_length"]
    assert long.config["steps"] == small["steps"]  # every model trains for the same number of steps


def test_tiny_table_end_to_end(tmp_path):
    out = tmp_path / "rep"
    args = ["reproduce", "dlr-atomic", "--scale", "tiny", "--tasks", f"cumsum,{LONG_SHIFT}"]
    args += ["--models", "attention,dlr-prod", "--seeds", "42,43", "--out", str(out), "--json"]
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    table = json.loads(res.stdout)
    assert json.loads((out / "table.json").read_text()) == table
    got = {(c["task"], c["model"]): c for c in table["cells"]}
    assert set(got) == {("cumsum", "attention"), (LONG_SHIFT, "dlr-prod")}  # attention is not run on long Shift
    for (task, model), cell in got.items():
        assert [s["job"]["seed"] for s in cell["seeds"]] == [42, 43]
        assert cell["paper"]["finding"] == FINDINGS[task]
        for seed in cell["seeds"]:  # the figures are the run's own evaluation
            ev = json.loads((out / seed["run"] / "eval.json").read_text())
            assert seed["r2"] == ev["r2"][0] and seed["length"] == ev["lengths"][0]
            cfg = json.loads((out / seed["run"] / "config.json").read_text())
            assert cfg["model"]["layer"] == model and cfg["train"]["seed"] == seed["job"]["seed"]
        r2 = sorted(s["r2"] for s in cell["seeds"])
        assert cell["median_r2"] == pytest.approx((r2[0] + r2[1]) / 2)
        assert cell["length"] == (64 if task == LONG_SHIFT else 16)
    md = (out / "table.md").read_text()
    row = next(line for line in md.splitlines() if line.startswith("| cumsum (16) |"))
    c = got[("cumsum", "attention")]
    assert f"**{c['aggregate']}**" in row and "| – |" in row and FINDINGS["cumsum"] in row
    seeds = next(line for line in md.splitlines() if line.startswith("| cumsum | Attention |"))
    assert f"42: {c['seeds'][0]['r2']:.3f}" in seeds  # every seed, in the second table
    assert "| task (length) | Attention | DLR-prod |" in md
    assert (out / "plot.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_selection_is_one_line_exit_2(tmp_path):
    res = CliRunner().invoke(main, ["reproduce", "dlr-atomic", "--tasks", "parity", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--tasks: unknown task of dlr-atomic 'parity' (choose from shift" in res.output
    res = CliRunner().invoke(main, ["reproduce", "dlr-atomic", "--scale", "medium", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--scale must be one of tiny, small, paper" in res.output
    assert not (tmp_path / "o").exists()
