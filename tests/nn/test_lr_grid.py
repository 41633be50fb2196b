"""``fsa2rnn train --lr-grid`` (nn/train/lr_grid.py): the negative-eigenvalues paper's protocol — every rate × every
seed, the rate chosen by the median score, its best and median reported; its options validated."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.nn.train.lr_grid import PAPER_GRID, grid_summary, parse_lr_grid, score_of

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def _run(score, seed):
    return {"seed": seed, "run": f"r{seed}", "range": {"lengths": "40..256", "scaled_accuracy": score}, "eval": {}}


def test_choice_by_the_median_reports_best_and_median():
    rates = [1e-2, 1e-3, 1e-4]
    scores = [[1.0, 0.1, 0.0], [0.6, 0.5, 0.4], [0.5, 0.6, 0.2]]  # medians 0.1, 0.5, 0.5: the first 0.5 wins
    s = grid_summary(rates, [[_run(x, 42 + j) for j, x in enumerate(row)] for row in scores], "t", "deltanet")
    assert s["chosen_lr"] == 1e-3 and s["median"] == 0.5 and s["best"] == 0.6
    assert [r["median"] for r in s["per_lr"]] == [0.1, 0.5, 0.5] and s["per_lr"][0]["best"] == 1.0
    assert s["per_lr"][2]["scores"] == [0.5, 0.6, 0.2] and "40..256" in s["score"]
    assert score_of({"eval": {"lengths": [40], "scaled_accuracy": [0.25]}})[0] == 0.25
    assert score_of({"eval_regression": [{"length": 64, "r2": 0.9}]}) == (0.9, "R² at length 64")


def test_parse_lr_grid():
    assert parse_lr_grid("paper") == list(PAPER_GRID) == [1e-2, 1e-3, 5e-4, 1e-4]
    assert parse_lr_grid("3e-3,1e-2") == [3e-3, 1e-2]
    for bad in ("", "0.1,0.1", "-1e-3", "fast", "nan", "1e-3,0"):
        with pytest.raises(SpecError, match="--lr-grid"):
            parse_lr_grid(bad)


@pytest.mark.parametrize(
    "extra, msg",
    [(["--lr-grid", "1e-2,x", "--seeds", "1,2"], "--lr-grid must be"), (["--lr-grid", "1e-2"], "needs --seeds"),
     (["--lr-grid", "1e-2", "--seeds", "1,2", "--lr", "1e-3"], "not both")],
)  # fmt: skip
def test_bad_grid_options_are_one_line_errors(tmp_path, extra, msg):
    res = CliRunner().invoke(main, ["train", "grazzi:parity", "--out", str(tmp_path / "g"), *extra])
    assert res.exit_code == 2 and msg in res.output and "Traceback" not in res.output
    assert not (tmp_path / "g").exists()


def test_tiny_grid_runs_every_rate_and_seed(tmp_path):
    out = tmp_path / "grid"
    args = ["train", "grazzi:parity", "--model", "deltanet", "--d-model", "8", "--heads", "1", "--mlp-ratio", "0",
            "--steps", "3", "--batch", "4", "--train-length", "3..6", "--eval-lengths", "6", "--eval-range", "6..8",
            "--samples", "16", "--no-lmax", "--val-every", "3", "--lr-grid", "1e-2,1e-3", "--seeds", "1,2",
            "--out", str(out), "--json"]  # fmt: skip
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["lr_grid"] == [1e-2, 1e-3] and summary["chosen_lr"] in (1e-2, 1e-3)
    for row in summary["per_lr"]:
        assert row["seeds"] == [1, 2] and len(row["scores"]) == 2
        for seed in (1, 2):
            cfg = json.loads((out / f"lr-{row['lr']:g}" / f"seed-{seed}" / "config.json").read_text())["train"]
            assert cfg["lr"] == row["lr"] and cfg["seed"] == seed
    chosen = next(r for r in summary["per_lr"] if r["lr"] == summary["chosen_lr"])
    assert summary["median"] == chosen["median"] == max(r["median"] for r in summary["per_lr"])
