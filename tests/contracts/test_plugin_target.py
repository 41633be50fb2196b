"""A compile target from outside fsa2rnn: the test plug-in package's toy target (tests/plugins/fsa2rnn_toys/onehot,
declared in its committed dist-info's ``fsa2rnn.targets`` entry points) runs through ``compile``, ``run`` and
``verify`` and the conformance test (tests/contracts/test_conformance.py, which reads the registry) with no line of
fsa2rnn changed; a malformed registration — an import error, a missing attribute, a missing method, a reused name — is
one ``error:`` line naming the plug-in, and the built-in targets keep working."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.compiler import TARGETS, CompiledModel, get_target, load_executor, register_target
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.errors import PluginError

SPEC = "S3"


def test_the_toy_target_is_registered_from_its_entry_point():
    assert "onehot" in TARGETS.names() and not TARGETS.is_builtin("onehot")
    assert TARGETS.origin("onehot").startswith("fsa2rnn-toys")
    assert TARGETS.ref("onehot") == "fsa2rnn_toys.onehot:TARGET"
    from . import test_conformance

    assert "onehot" in test_conformance.TARGETS  # the conformance test runs it on every small case


def test_compile_run_verify(tmp_path):
    """The CLI in a fresh process (the plug-in found through PYTHONPATH, as an installed package would be)."""
    model = tmp_path / "toy.safetensors"
    a = resolve_spec(SPEC)
    env = {**os.environ, "OMP_NUM_THREADS": "1"}

    def cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-c", "from fsa2rnn.cli.main import main; main()", *args]
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env, timeout=300)

    res = cli("compile", SPEC, "--target", "onehot", "-o", str(model), "--json")
    assert res.returncode == 0, res.stderr
    assert json.loads(res.stdout)["verified"] is True
    words = [[a.symbols[x] for x in w] for w in np.random.default_rng(0).integers(0, a.n_symbols, (3, 9)).tolist()]
    res = cli("run", str(model), stdin="".join(json.dumps(w) + "\n" for w in words))
    assert res.returncode == 0, res.stderr
    got = [json.loads(line) for line in res.stdout.splitlines()]
    assert got == [[a.states[q] for q in a.run(w)] for w in words]
    res = cli("run", str(model), "--engine", "torch", "--dtype", "float32", stdin=json.dumps(words[0]) + "\n")
    assert res.returncode == 0 and json.loads(res.stdout) == got[0], res.stderr
    res = cli("verify", str(model), "--json", "--length", "64", "--words", "4")
    report = json.loads(res.stdout)
    assert res.returncode == 0 and report["ok"] and report["exact"]["ok"] and report["target"] == "onehot"


def test_compile_refuses_other_targets_options_and_non_group_automata(tmp_path):
    runner = CliRunner()
    out = str(tmp_path / "m.safetensors")
    res = runner.invoke(main, ["compile", SPEC, "--target", "onehot", "--margin", "2", "-o", out])
    assert res.exit_code == 2 and "--margin does not apply to target 'onehot'" in res.stderr
    res = runner.invoke(main, ["compile", "flipflop", "--target", "onehot", "-o", out])
    assert res.exit_code == 2 and res.stderr.startswith("error: the onehot target needs a group automaton")
    assert not (tmp_path / "m").exists()


def test_the_numpy_executor_and_the_stepper_of_the_plug_in():
    from fsa2rnn.realize.robust import run
    from fsa2rnn.realize.steppers import stepper_for

    a = resolve_spec(SPEC)
    model = get_target("onehot").compile_model(a)
    ids = np.random.default_rng(1).integers(0, a.n_symbols, (4, 40))
    want = a.run(ids)
    np.testing.assert_array_equal(load_executor(model).predict_states(ids), want)
    stepper = stepper_for(model, "float64")
    assert stepper.one_hot and stepper.radius == pytest.approx(0.5**0.5)
    torch_states, _, _ = run(stepper, ids, eta=0.2, engine="torch", seed=3)
    numpy_states, _, _ = run(stepper, ids, eta=0.2, engine="numpy", seed=3)
    np.testing.assert_array_equal(numpy_states.numpy(), torch_states.numpy())
    # a permutation is an isometry: the adversary's pushes add up, right while t·η < 1/√2, wrong soon after
    horizon = int(np.ceil(stepper.radius / 0.2))
    np.testing.assert_array_equal(numpy_states.numpy()[:, : horizon - 1], want[:, : horizon - 1])
    assert (numpy_states.numpy() != want).any()


BROKEN = {
    "toybroken_import.py": "raise RuntimeError('the plug-in fails at import')\n",
    "toybroken_method.py": textwrap.dedent(
        """
        from dataclasses import replace

        from fsa2rnn_toys.onehot import TARGET

        class NoPredict:
            def __init__(self, model):
                pass

        NOMETHOD = replace(TARGET, name="nomethod", numpy_executor="toybroken_method:NoPredict")
        DUPLICATE = replace(TARGET, name="householder")
        """
    ),
}
ENTRY_POINTS = (
    "[fsa2rnn.targets]\n"
    "importfail = toybroken_import:TARGET\n"
    "missing = toybroken_method:NOT_THERE\n"
    "nomethod = toybroken_method:NOMETHOD\n"
    "householder = toybroken_method:DUPLICATE\n"
)


@pytest.fixture
def broken_plugins(tmp_path):
    """A distribution ``toybroken`` with malformed target registrations, in a temporary folder on PYTHONPATH."""
    for name, text in BROKEN.items():
        (tmp_path / name).write_text(text)
    info = tmp_path / "toybroken-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toybroken\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return tmp_path


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("importfail", "target plug-in 'importfail' (toybroken (entry point fsa2rnn.targets))"),
        ("missing", "has no attribute 'NOT_THERE'"),
        ("nomethod", "has no method predict_states()"),
    ],
)
def test_a_malformed_registration_is_one_error_line_naming_the_plug_in(broken_plugins, tmp_path, target, message):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(broken_plugins), os.environ.get("PYTHONPATH", "")])}
    out = tmp_path / "m.safetensors"

    def compile_(name: str) -> subprocess.CompletedProcess:
        cmd = [sys.executable, "-c", "from fsa2rnn.cli.main import main; main()", "compile", "Z3", "--target", name,
               "-o", str(out)]  # fmt: skip
        return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)

    res = compile_(target)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], lines
    assert "toybroken" in lines[0] and not out.exists()
    for name in ("householder", "onehot"):  # the built-ins (a reused name keeps the built-in) and the good plug-in
        res = compile_(name)
        assert res.returncode == 0, res.stderr
        assert CompiledModel.load(out).target == name
        out.unlink()


def test_a_reused_name_is_reported_and_refused_to_register_target(broken_plugins, monkeypatch):
    monkeypatch.syspath_prepend(str(broken_plugins))
    TARGETS.refresh()
    try:
        assert TARGETS.origin("householder").startswith("fsa2rnn ")  # the built-in keeps its name
        problems = "\n".join(TARGETS.problems())
        assert "target plug-in 'householder' from toybroken is not used" in problems
        with pytest.raises(PluginError, match=r"target 'onehot' is already registered \(by fsa2rnn-toys"):
            register_target(get_target("onehot"))
        with pytest.raises(PluginError, match="is registered as 'toy2' but names itself 'onehot'"):
            register_target(get_target("onehot"), name="toy2")
        assert "toy2" not in TARGETS
    finally:
        monkeypatch.undo()
        TARGETS.refresh()


def test_register_target_from_a_script():
    from dataclasses import replace

    toy = replace(get_target("onehot"), name="onehot-script")
    register_target(toy)
    try:
        assert get_target("onehot-script") is toy and TARGETS.origin("onehot-script") == "register()"
        assert "onehot-script" in TARGETS.names()
        with pytest.raises(PluginError, match="not an fsa2rnn.compiler.Target"):
            register_target({"name": "not-a-target"}, name="not-a-target")
    finally:
        TARGETS.unregister("onehot-script")
        TARGETS.unregister("not-a-target")
