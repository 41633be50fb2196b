"""Model files written by an earlier version (tests/fixtures/models/, one per compile target and construction) load
and give the figures they gave when they were written: the states of every executor on the same words (and the
automaton's own), the stepper's cell inradius, the summary in the header, ``verify --json`` and ``verify --eta
--json``. tests/fixtures/models/make.py wrote them; a change that alters any figure fails here."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main

HERE = Path(__file__).resolve().parents[1] / "fixtures" / "models"
EXPECTED = json.loads((HERE / "expected.json").read_text())
_spec = importlib.util.spec_from_file_location("fixtures_make", HERE / "make.py")
make = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_every_target_and_construction_has_a_fixture():
    assert set(EXPECTED) == set(make.FIXTURES)
    targets = {name.split("-")[0] for name in EXPECTED}
    assert targets == {"householder", "diagonal", "nfsm", "affine", "pdssm"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_loads_to_the_same_figures(name):
    want = EXPECTED[name]
    path = HERE / f"{name}.safetensors"
    got = make.figures(path)
    assert got["radius"] == want["radius"]
    model = make.load(path)
    automaton = model.target_automaton()
    ids = make.words(len(model.symbols))
    truth = automaton.run(ids, start=np.full(len(ids), model.initial))
    truth = np.where(np.arange(ids.shape[1])[None, :] < np.array(make.LENGTHS)[:, None], truth, -1)
    for executor, states in want["states"].items():
        np.testing.assert_array_equal(got["states"][executor], states, err_msg=executor)
        np.testing.assert_array_equal(states, truth, err_msg=executor)
    summary = {k: v for k, v in want["compile"].items() if k not in ("certificate", "robust")}
    assert json.loads(json.dumps(model.summary)) == summary
    for key, extra in (("verify", []), ("verify_eta", None)):
        if key not in want:
            continue
        args = ["verify", str(path), *make.VERIFY]
        if extra is None:
            args += ["--eta", str(want[key]["robust"]["eta"]), "--cap", "64"]
        res = CliRunner().invoke(main, args)
        assert res.exit_code == (0 if want[key]["ok"] else 1), res.output
        assert json.loads(res.output) == want[key]
