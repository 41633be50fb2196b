"""benchmarks/gpu_reproduce.py's plan (``--dry-run``): the Grazzi cells it would run carry the presets' paper-scale
settings (App. E.1.1), both eigenvalue ranges for DeltaNet and Mamba, and the paper's Table 3 figure beside; the
device part itself is never run by the suite."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def gpu():
    spec = importlib.util.spec_from_file_location("gpu_reproduce", ROOT / "benchmarks" / "gpu_reproduce.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpu_reproduce"] = module
    spec.loader.exec_module(module)
    yield module
    del sys.modules["gpu_reproduce"]


def test_the_plan_holds_every_grazzi_cell_at_the_paper_settings(gpu, capsys):
    from fsa2rnn.nn.train.presets import get_preset

    p = gpu.plan(gpu._parser().parse_args([]))
    assert p["brandoit"] == list(gpu.ORDER) and p["budget_s"] == 420
    cells = [r["cell"] for r in p["grazzi"]]
    assert cells == [f"{t} {m} [{e}]" for t in ("parity", "modarith") for m in ("deltanet", "mamba")
                     for e in ("-1, 1", "0, 1")]  # fmt: skip
    for row in p["grazzi"]:
        task, model, _ = row["cell"].split(" ", 2)
        paper = get_preset(f"grazzi-{task}").settings("paper", model)
        assert (row["layers"], row["d_model"], row["batch"], row["steps"], row["lr"], row["clip"]) == (
            paper["layers"], 128, 1024, 100_000, 1e-3, paper["clip"])  # fmt: skip
        assert row["eval_range"] == "40..256" and row["train_length"] == "3..40" and row["weight_decay"] == 0.1
        assert ("heads" in row) == (model == "deltanet")  # the DeltaNet flags are shown for DeltaNet only
    by = {r["cell"]: r for r in p["grazzi"]}
    assert by["parity deltanet [-1, 1]"]["layers"] == 2 and by["modarith deltanet [-1, 1]"]["layers"] == 2
    assert by["modarith deltanet [-1, 1]"]["paper"] == 0.971 and by["modarith deltanet [0, 1]"]["paper"] == 0.314
    assert by["modarith mamba [-1, 1]"]["clip"] == 0.0 and by["parity mamba [-1, 1]"]["clip"] == 0.0
    gpu.main(["--dry-run", "--tasks", "Z2,S3", "--grazzi", "modarith", "--grazzi-models", "deltanet",
              "--grazzi-steps", "500"])  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert out[1].endswith(": Z2, S3") and "cut to 500 steps" in out[2]
    assert [line.split(" (paper")[0].strip() for line in out[3:]] == ["modarith deltanet [-1, 1]",
                                                                      "modarith deltanet [0, 1]"]  # fmt: skip
    assert all("steps 500," in line and "layers 2," in line for line in out[3:])


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--grazzi", "parity,brackets"], "unknown task 'brackets'"),
        (["--grazzi-models", "lstm"], "unknown 'lstm'"),
        (["--grazzi-steps", "0"], "must be ≥ 1"),
        (["--probe-steps", "-1"], "must be ≥ 1"),
    ],
)
def test_bad_plans_are_refused_before_any_work(gpu, argv, match):
    with pytest.raises(SystemExit, match=match):
        gpu.main(["--dry-run", *argv])


@pytest.mark.parametrize("scale, width", [("small", 48), ("medium", 64)])
def test_the_plan_adds_m11_with_its_readout_pinned(gpu, capsys, scale, width):
    """``--m11 SCALE``: Table 1's M11 cell (anchored NFSM, factored heads of 4 × 11 = 44 indices) at a width that
    pins its readout, as brandoit-table1 runs it at that scale."""
    p = gpu.plan(gpu._parser().parse_args(["--m11", scale]))
    assert p["m11"]["d_model"] == width >= 44 and p["m11"]["head_family"] == "factored"
    assert gpu.plan(gpu._parser().parse_args([]))["m11"] is None
    gpu.main(["--dry-run", "--tasks", "", "--grazzi", "", "--m11", scale])
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(f"Brandoit M11, anchored NFSM at --scale {scale}: d_model {width},")
