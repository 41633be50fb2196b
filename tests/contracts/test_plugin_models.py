"""Plug-in layers and whole models by import path (nn/plugins.py, nn/layers/plugin.py, nn/capabilities.py): the
test package's GRU layers (one with the carried-state methods, one forward only) and whole model through train,
eval, compare (white-box, its L* fallback, --method lstar) and reproduce; the run record and the rule that a run
directory never imports code on its own; bad plug-ins refused in one line before training; fla's adapter on a
CPU stand-in."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main

pytestmark = pytest.mark.usefixtures("one_torch_thread")

PKG = "fsa2rnn_toys.gru"
PLUGINS = {"layer": f"{PKG}:GRULayer", "forward": f"{PKG}:GRUForward", "whole": f"{PKG}:gru_model"}
TINY = ["grazzi:parity", "--steps", "12", "--d-model", "8", "--mlp-ratio", "0", "--batch", "8", "--train-length",
        "3..8", "--log-every", "1", "--val-every", "6", "--no-lmax", "--eval-lengths", "8", "--samples", "16",
        "--quiet"]  # fmt: skip
COMPARE = ["--length", "6", "--words", "16", "--no-lmax", "--json", "--quiet"]
LSTAR = ["--method", "lstar", "--max-seconds", "5", "--depth", "1"]


def _invoke(*args: str):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """One tiny run of each plug-in and of DeltaNet (the built-in whose compare keys they must have)."""
    root = tmp_path_factory.mktemp("plugins")
    out = {}
    for name, model in [*PLUGINS.items(), ("deltanet", "deltanet")]:
        res = _invoke("train", *TINY, "--model", model, "--out", root / name)
        assert res.exit_code == 0, res.output
        out[name] = root / name
    return out


def test_the_run_records_the_plugin(runs):
    rec = json.loads((runs["layer"] / "config.json").read_text())
    plugin = rec["model"]["plugin"]
    assert rec["model"]["layer"] == rec["train"]["model"] == PLUGINS["layer"]
    assert plugin["kind"] == "layer" and plugin["distribution"] == "fsa2rnn-toys" and plugin["version"] == "0.1"
    assert len(plugin["source_hash"]) == 16
    assert json.loads((runs["whole"] / "config.json").read_text())["model"]["plugin"]["kind"] == "model"


@pytest.mark.parametrize("name", list(PLUGINS))
def test_eval_and_compare_on_each(runs, name):
    res = _invoke("eval", runs[name], "--model", PLUGINS[name], "--lengths", "8,24", "--lmax", "--cap", "32",
                  "--samples", "16", "--json", "--quiet")  # fmt: skip
    assert res.exit_code == 0, res.output
    ev = json.loads(res.stdout)
    assert ev["lengths"] == [8, 24] and len(ev["token_accuracy"]) == 2 and "l_max" in ev
    res = _invoke("compare", runs[name], "--model", PLUGINS[name], *COMPARE, "--max-seconds", "5")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    if name == "layer":  # the carried state: white-box extraction, the keys of a built-in's report
        builtin = json.loads(_invoke("compare", runs["deltanet"], *COMPARE).stdout)
        assert set(report) == set(builtin) and set(report["extracted"]) == set(builtin["extracted"])
        assert report["extracted"]["sample_based"] and not res.stderr.strip()
    else:  # forward only: L* instead, said in one line
        lines = res.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("note: white-box extraction reads a carried state"), lines
        assert "learning the machine with L* instead" in lines[0]
        assert report["white_box"]["n_states"] is None and report["learned"]["n_states"] >= 1


@pytest.mark.parametrize("name", list(PLUGINS))
def test_method_lstar_on_each(runs, name):
    res = _invoke("compare", runs[name], "--model", PLUGINS[name], *COMPARE, *LSTAR)
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    builtin = json.loads(_invoke("compare", runs["deltanet"], *COMPARE, *LSTAR).stdout)
    assert set(report) == set(builtin) and set(report["learned"]) == set(builtin["learned"])


def test_a_run_directory_never_imports_on_its_own(runs, tmp_path):
    """config.json naming an import path the command line did not name: refused before anything is imported."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(runs["layer"], run)
    rec = json.loads((run / "config.json").read_text())
    ref = "fsa2rnn_toys.sentinel:Layer"
    rec["train"]["model"] = rec["model"]["layer"] = rec["model"]["plugin"]["ref"] = ref
    (run / "config.json").write_text(json.dumps(rec))
    for args in (["eval", run], ["compare", run], ["eval", run, "--model", PLUGINS["layer"]]):
        res = _invoke(*args)
        assert res.exit_code == 2 and res.stderr.count("\n") == 1, res.output
        assert f"add --model {ref}" in res.stderr
    res = _invoke("train", "--out", run, "--resume", "--quiet")
    assert res.exit_code == 2 and f"add --model {ref}" in res.stderr
    assert "fsa2rnn_toys.sentinel" not in sys.modules


def test_a_changed_source_is_refused_unless_asked(runs, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(runs["layer"], run)
    rec = json.loads((run / "config.json").read_text())
    rec["model"]["plugin"]["source_hash"] = "0" * 16
    (run / "config.json").write_text(json.dumps(rec))
    args = ["eval", run, "--model", PLUGINS["layer"], "--lengths", "8", "--samples", "16", "--quiet"]
    res = _invoke(*args)
    assert res.exit_code == 2 and "changed since" in res.stderr and "--allow-changed-plugin" in res.stderr
    assert _invoke(*args, "--allow-changed-plugin").exit_code == 0


def _records(run):
    return [{k: v for k, v in json.loads(line).items() if k != "tokens_per_s"} for line in open(run / "metrics.jsonl")]


def test_resume_after_ctrl_c_equals_the_uninterrupted_run(runs, tmp_path):
    from .test_hostile_inputs import _interrupt_at

    part = tmp_path / "part"
    watcher = _interrupt_at(part, 5)
    res = _invoke("train", *TINY, "--model", PLUGINS["layer"], "--checkpoint-every", "1000", "--out", part)
    watcher.join()
    assert res.exit_code == 130, res.output
    assert f"--model {PLUGINS['layer']}" in res.stderr  # the resume command names the plug-in again
    assert _invoke("train", "--out", part, "--resume", "--quiet").exit_code == 2  # without it: refused
    res = _invoke("train", "--out", part, "--resume", "--model", PLUGINS["layer"], "--quiet")
    assert res.exit_code == 0, res.output
    assert _records(part) == _records(runs["layer"])


BAD = {
    "fsa2rnn_toys.nothere:Layer": "does not import",
    "fsa2rnn_toys.bad:Missing": "has no attribute 'Missing'",
    "fsa2rnn_toys.bad:NoArgs": "does not take (d_model, **args)",
    "fsa2rnn_toys.bad:WrongShape": "output of shape (3, 12, 9) on a probe batch, expected (3, 12, 8)",
    "fsa2rnn_toys.bad:Anticausal": "is not causal",
    "fsa2rnn_toys.bad:NotFinite": "not finite",
}


@pytest.mark.parametrize("ref,phrase", BAD.items(), ids=list(BAD))
def test_a_bad_plugin_is_one_line(ref, phrase, tmp_path):
    res = _invoke("train", *TINY, "--model", ref, "--out", tmp_path / "out")
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and phrase in lines[0], lines
    assert ref in lines[0] and not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "args,phrase",
    [
        (["--model", "deltanet", "--model-args", '{"x": 1}'], "--model-args applies to a plug-in"),
        (["--model", PLUGINS["layer"], "--model-args", "[1]"], "--model-args must be a JSON object"),
        (["--model", PLUGINS["layer"], "--model-args", '{"nope": 1}'], "does not take (d_model, **args)"),
        (["--model", PLUGINS["layer"], "--heads", "2"], "--heads applies to"),
        (["--model", "x.y:"], "is not of the form package.module:Name"),
        (["--model", "fla:DeltaNet"], "fla's kernels need a CUDA device"),
    ],
)
def test_plugin_options_refused_in_one_line(args, phrase, tmp_path):
    res = _invoke("train", *TINY, *args, "--out", tmp_path / "out")
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and phrase in res.stderr, res.output
    assert not (tmp_path / "out").exists()


def test_a_whole_model_refuses_real_valued_inputs(tmp_path):
    res = _invoke("train", "dlr:shift", "--model", PLUGINS["whole"], "--steps", "2", "--out", tmp_path / "o")
    assert res.exit_code == 2 and "reads symbol ids" in res.stderr


def test_reproduce_puts_a_plugin_row_beside_the_builtin(tmp_path):
    out = tmp_path / "rep"
    models = f"deltanet,{PLUGINS['layer']}"
    res = _invoke("reproduce", "grazzi-table3", "--scale", "tiny", "--tasks", "parity", "--models", models,
                  "--arm", "-1..1", "--seeds", "42", "--json", "--quiet", "--out", out)  # fmt: skip
    assert res.exit_code == 0, res.output
    table = json.loads(res.stdout)
    assert [c["model"] for c in table["cells"]] == ["deltanet", PLUGINS["layer"]]
    for cell in table["cells"]:
        for rec in cell["seeds"]:
            ev = json.loads((out / rec["run"] / "eval.json").read_text())
            assert rec["range"] == ev["range"] and rec["token_accuracy"] == ev["token_accuracy"]
    assert PLUGINS["layer"] in (out / "table.md").read_text()


def test_fla_adapter_on_a_cpu_standin():
    """fla's forward signature (a tuple with a cache), the eigenvalue switch passed through, and refused where the
    layer has none."""
    import torch
    from fsa2rnn_toys import fla_standin

    from fsa2rnn.fsa.errors import SpecError
    from fsa2rnn.nn.layers.fla_adapter import fla_factory
    from fsa2rnn.nn.layers.plugin import PluginLayer, probe_layer

    make = fla_factory("DeltaNet", module=fla_standin)
    for eig, neg in (("-1,1", True), ("0,1", False)):
        layer = make(8, eig=eig)
        assert layer.layer.allow_neg_eigval is neg
        probe_layer("fla:DeltaNet", layer, 8)  # shape, finite, causal
        x = torch.randn(2, 6, 8)
        y, state = PluginLayer("fla:DeltaNet", layer)(x[:, :4], None, True)
        y2, _ = PluginLayer("fla:DeltaNet", layer)(x[:, 4:], state, True)
        assert torch.allclose(torch.cat([y, y2], 1), layer(x), atol=1e-5)  # the prefix carried between chunks
    with pytest.raises(SpecError, match="has no allow_neg_eigval switch"):
        fla_factory("Mamba2", module=fla_standin)(8, eig="-1,1")
