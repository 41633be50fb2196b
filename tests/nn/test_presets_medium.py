"""``--scale medium``: offered by the presets that set it (grazzi-modarith: the authors' model at a longer CPU
budget), layered over the paper scale as ``small`` is, refused in one line elsewhere."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.nn.train.presets import PRESETS, SCALES, get_preset
from fsa2rnn.nn.train.run import preset_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_medium_is_offered_only_where_a_preset_sets_it():
    assert SCALES == ("paper", "small", "medium", "tiny")
    for name, preset in PRESETS.items():
        optional = tuple(s for s in ("medium", "tiny") if getattr(preset, s) is not None)
        assert preset.scales == ("paper", "small", *optional), name
    assert "medium" in get_preset("grazzi-modarith").scales
    with pytest.raises(SpecError, match="--scale medium: preset 'grazzi-parity' has none"):
        get_preset("grazzi-parity").settings("medium", None)
    with pytest.raises(SpecError, match="--scale must be one of paper, small, medium, tiny, got 'large'"):
        get_preset("grazzi-modarith").settings("large", None)


def test_modarith_medium_is_the_small_scale_longer():
    """The authors' model (2 blocks of width 128, answer-only labels, fla's layer, no clipping) as at small scale,
    at batch 64 for 3000 steps."""
    preset = get_preset("grazzi-modarith")
    small, medium = preset.settings("small", "deltanet"), preset.settings("medium", "deltanet")
    changed = {k: (small.get(k), v) for k, v in medium.items() if small.get(k) != v}
    assert changed == {"batch": (32, 64), "steps": (1000, 3000)}
    assert set(small) == set(medium)
    cfg = preset_config("grazzi-modarith", "medium", eig="0,1")
    assert (cfg.task, cfg.eig, cfg.layers, cfg.labels, cfg.delta_form, cfg.clip) == (
        "grazzi:modarith", "0,1", 2, "answer", "fla", 0.0)  # fmt: skip
    # a flag given wins over the scale, as for every preset
    assert preset_config("grazzi-modarith", "medium", steps=10, batch=8).batch == 8
    # Mamba at medium: the DeltaNet-only flags are dropped
    assert "head_dim" not in preset.settings("medium", "mamba")


def test_scale_medium_on_the_command_line(tmp_path):
    res = CliRunner().invoke(main, ["train", "--preset", "grazzi-parity", "--scale", "medium", "--out",
                                    str(tmp_path / "p")])  # fmt: skip
    assert res.exit_code == 2 and res.stderr.strip().splitlines() == [
        "error: --scale medium: preset 'grazzi-parity' has none (it has paper, small, tiny)"
    ]
    assert not (tmp_path / "p").exists()
    out = tmp_path / "m"
    args = ["train", "--preset", "grazzi-modarith", "--scale", "medium", "--steps", "2", "--d-model", "16",
            "--head-dim", "8", "--layers", "1", "--samples", "8", "--eval-lengths", "8", "--no-lmax",
            "--quiet"]  # fmt: skip
    res = CliRunner().invoke(main, [*args, "--out", str(out)])
    assert res.exit_code == 0, res.output
    cfg = json.loads((out / "config.json").read_text())["train"]
    assert (cfg["batch"], cfg["labels"], cfg["steps"], cfg["d_model"]) == (64, "answer", 2, 16)
    # the run resumes from its checkpoint with its stored settings (a finished one is only re-evaluated)
    res = CliRunner().invoke(main, ["train", "--out", str(out), "--resume", "--quiet"])
    assert res.exit_code == 0, res.output
