"""The open registries of layers, tasks and reproduction tables (fsa/registry.py): fsa2rnn's built-ins are its own
entry points, the test plug-in package (tests/plugins/fsa2rnn_toys) adds a task that trains and evaluates through
the CLI, ``register_*`` adds entries in-process, and a malformed plug-in is one ``error:`` line naming it that never
breaks the built-in commands."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.fsa.errors import ConfigError, PluginError
from fsa2rnn.nn.layers import LAYERS, build_layer, register_layer
from fsa2rnn.nn.tasks import TASKS, TaskFamily, get_task, register_task
from fsa2rnn.nn.train.reproduce import REPRODUCTIONS, get_reproduction, register_reproduction

pytestmark = pytest.mark.usefixtures("one_torch_thread")

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
GROUPS = {"fsa2rnn.layers": LAYERS, "fsa2rnn.tasks": TASKS, "fsa2rnn.reproductions": REPRODUCTIONS}


def test_the_builtins_are_the_entry_points_of_pyproject():
    tomllib = pytest.importorskip("tomllib")
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["entry-points"]
    for group, registry in GROUPS.items():
        builtins = {n: registry.ref(n) for n in registry.names() if registry.is_builtin(n)}
        assert builtins == declared[group], group
        for name in builtins:
            registry.get(name)  # every built-in loads and passes its registry's check
    assert set(TASKS.names()) >= {"grazzi", "brandoit", "dlr"} and isinstance(TASKS.get("grazzi"), TaskFamily)
    assert get_task("brandoit:FF").name == "brandoit:FF" and get_task("dlr:shift").kind == "regression"


_WITHOUT_TORCH = """
import sys
sys.modules["torch"] = None  # any import of torch now raises ImportError
from click.testing import CliRunner
from fsa2rnn.cli.main import main
from fsa2rnn.nn.layers import LAYERS
from fsa2rnn.nn.tasks import TASKS
from fsa2rnn.nn.train.reproduce import REPRODUCTIONS
res = CliRunner().invoke(main, ["train", "--help"])
print(res.exit_code, "deltanet" in res.stdout, len(LAYERS.names()), len(TASKS.names()), len(REPRODUCTIONS.names()))
"""


def test_the_registries_and_train_help_need_no_torch():
    res = subprocess.run([sys.executable, "-c", _WITHOUT_TORCH], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    installed = [len([n for n in r.names() if r.origin(n) != "register()"]) for r in (LAYERS, TASKS, REPRODUCTIONS)]
    assert res.stdout.split() == ["0", "True", *map(str, installed)]


def test_the_toy_task_trains_and_evaluates_through_the_cli(tmp_path):
    assert TASKS.origin("toy-count3").startswith("fsa2rnn-toys") and not TASKS.is_builtin("toy-count3")
    run = tmp_path / "run"
    small = ["--cap", "32", "--samples", "16", "--quiet", "--json"]
    args = ["train", "toy-count3", "--model", "deltanet", "--d-model", "16", "--steps", "12", "--batch", "8"]
    res = CliRunner().invoke(main, [*args, "--eval-lengths", "8,16", *small, "--out", str(run)])
    assert res.exit_code == 0, res.output
    trained = json.loads(res.stdout)
    assert json.loads((run / "config.json").read_text())["task"]["name"] == "toy-count3"
    res = CliRunner().invoke(main, ["eval", str(run), "--lmax", *small])
    assert res.exit_code == 0, res.output
    evaluated = json.loads(res.stdout)
    assert evaluated["lengths"] == [8, 16] and evaluated["token_accuracy"] == trained["eval"]["token_accuracy"]
    listed = json.loads(CliRunner().invoke(main, ["tasks", "--json"]).stdout)["tasks"]
    toy = [r for r in listed if r["name"] == "toy-count3"]
    assert toy and toy[0]["n_classes"] == 3 and listed.index(toy[0]) > [r["name"] for r in listed].index("grazzi:A5")


def test_register_calls_add_entries_and_refuse_a_taken_name():
    import torch

    class Mirror(torch.nn.Module):  # a plain torch module, no fsa2rnn base class
        def __init__(self, d_model: int, scale: float = 1.0) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(d_model, d_model)

        def forward(self, x, state=None, return_state=False):
            return self.proj(x)

    from fsa2rnn.nn.tasks.papers import GRAZZI_TASKS
    from fsa2rnn.nn.train.reproduce import Reproduction
    from fsa2rnn.nn.train.reproduce.brandoit_table1 import BrandoitTable1

    try:
        register_layer("mirror", Mirror)
        assert isinstance(build_layer("mirror", 8, scale=2.0), Mirror) and "mirror" in LAYERS
        with pytest.raises(ConfigError, match="layer 'mirror'"):
            build_layer("mirror", 8, heads=2)
        with pytest.raises(PluginError, match="layer 'mirror' is already registered"):
            register_layer("mirror", Mirror)
        register_task("my-parity", GRAZZI_TASKS["grazzi:parity"])
        assert get_task("my-parity").name == "grazzi:parity"
        with pytest.raises(PluginError, match="is a builtin spec"):
            register_task("S5", GRAZZI_TASKS["grazzi:parity"])
        with pytest.raises(PluginError, match="must name its tasks mine:"):
            register_task("mine", TaskFamily("mine", {"yours:x": GRAZZI_TASKS["grazzi:parity"]}))
        register_reproduction("my-table", BrandoitTable1)
        assert get_reproduction("my-table").tasks == get_reproduction("brandoit-table1").tasks
        with pytest.raises(PluginError, match="does not define jobs, result, cell"):
            register_reproduction("bad-table", type("Bad", (Reproduction,), {}))
    finally:
        LAYERS.unregister("mirror")
        TASKS.unregister("my-parity")
        REPRODUCTIONS.unregister("my-table")


def test_a_registered_table_reads_finished_runs(tmp_path):
    """A table registered by a script goes through `reproduce --table-only` like a built-in one."""
    from fsa2rnn.nn.train.reproduce.brandoit_table1 import BrandoitTable1

    out = tmp_path / "table"
    shutil.copytree(FIXTURES / "reproduce" / "brandoit-table1-tiny", out)
    register_reproduction("my-table", BrandoitTable1)
    try:
        args = ["reproduce", "my-table", "--scale", "tiny", "--tasks", "Z2", "--models", "nfsm,mamba"]
        res = CliRunner().invoke(main, [*args, "--seeds", "42", "--out", str(out), "--table-only", "--json"])
    finally:
        REPRODUCTIONS.unregister("my-table")
    assert res.exit_code == 0, res.output
    assert all(s["status"] == "done" for c in json.loads(res.stdout)["cells"] for s in c["seeds"])


BROKEN_MODULE = """
import torch

def not_a_class():
    pass

NOT_CALLABLE = 3


class NoJobs:
    pass
"""


@pytest.fixture
def broken(tmp_path):
    """A distribution ``toybad`` whose entries are malformed: a missing attribute, an import error, a name taken by
    a built-in, a builtin spec's name, objects that are no layer or table."""
    (tmp_path / "toybad_mod.py").write_text(textwrap.dedent(BROKEN_MODULE))
    (tmp_path / "toybad_boom.py").write_text("raise RuntimeError('boom at import')\n")
    info = tmp_path / "toybad-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toybad\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(
        "[fsa2rnn.layers]\n"
        "bad-layer = toybad_mod:NOT_CALLABLE\n"
        "boom-layer = toybad_boom:Layer\n"
        "deltanet = toybad_mod:not_a_class\n"
        "[fsa2rnn.tasks]\n"
        "bad-task = toybad_mod:MISSING\n"
        "boom-task = toybad_boom:task\n"
        "grazzi = toybad_mod:not_a_class\n"
        "S5 = toybad_mod:not_a_class\n"
        "[fsa2rnn.reproductions]\n"
        "bad-table = toybad_mod:NoJobs\n"
        "boom-table = toybad_boom:Table\n"
    )
    sys.path.insert(0, str(tmp_path))
    for registry in GROUPS.values():
        registry.refresh()
    yield tmp_path
    sys.path.remove(str(tmp_path))
    for mod in ("toybad_mod", "toybad_boom"):
        sys.modules.pop(mod, None)
    for registry in GROUPS.values():
        registry.refresh()


def _one_error_line(res, *needles: str) -> None:
    lines = [line for line in res.stderr.splitlines() if line.strip()]
    assert res.exit_code == 2 and len(lines) == 1 and lines[0].startswith("error: "), res.output
    assert "Traceback" not in res.output and all(n in lines[0] for n in needles), lines[0]


def test_a_malformed_plugin_is_one_error_line_and_the_builtins_work(broken, tmp_path):
    runner = CliRunner()
    listing = runner.invoke(main, ["tasks", "--json"])
    assert listing.exit_code == 0, listing.output
    names = [r["name"] for r in json.loads(listing.stdout)["tasks"]]
    assert "grazzi:parity" in names and "toy-count3" in names  # the built-ins and the good plug-in
    errors = [line for line in listing.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 4 and all("toybad" in e for e in errors), listing.stderr
    assert any("'boom-task'" in e and "does not import (RuntimeError: boom at import)" in e for e in errors)
    assert any("'bad-task'" in e and "has no attribute 'MISSING'" in e for e in errors)
    assert any("'S5'" in e and "builtin spec" in e for e in errors)
    assert any("'grazzi' from toybad is not used: the name is already registered by fsa2rnn" in e for e in errors)

    out = str(tmp_path / "o")
    train = ["train", "grazzi:parity", "--steps", "1", "--quiet", "--out", out]
    _one_error_line(runner.invoke(main, ["train", "boom-task", "--out", out]), "task plug-in 'boom-task'", "toybad")
    _one_error_line(runner.invoke(main, [*train, "--model", "bad-layer"]), "layer plug-in 'bad-layer'", "not callable")
    _one_error_line(runner.invoke(main, [*train, "--model", "boom-layer"]), "'boom-layer'", "does not import")
    rep = ["--scale", "tiny", "--out", out]
    _one_error_line(runner.invoke(main, ["reproduce", "bad-table", *rep]), "'bad-table'", "not a subclass")
    _one_error_line(runner.invoke(main, ["reproduce", "boom-table", *rep]), "'boom-table'", "does not import")
    assert not Path(out).exists()
    # the built-ins: deltanet is fsa2rnn's (the plug-in's duplicate is not used), and a run evaluates as before
    assert LAYERS.is_builtin("deltanet") and TASKS.is_builtin("grazzi")
    res = runner.invoke(main, ["eval", str(FIXTURES / "runs" / "z2-nfsm"), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["lengths"] == [8, 16], res.output
