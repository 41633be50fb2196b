"""`fsa2rnn analyze`: JSON keys of docs/architecture.md, values against independent facts, the text report, and bad
input."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main


def _run(*args: str):
    return CliRunner().invoke(main, list(args))


def test_json_keys_and_values_t4():
    res = _run("analyze", "T4", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    m = out["monoid"]
    for key in (
        "size",
        "idempotents",
        "d_classes",
        "r_classes",
        "l_classes",
        "h_classes",
        "is_group",
        "is_aperiodic",
        "is_commutative",
        "is_definite",
        "definite_degree",
        "is_solvable",
        "subgroups",
    ):
        assert key in m
    assert (m["size"], m["idempotents"], m["d_classes"], m["l_classes"], m["r_classes"], m["h_classes"]) == (
        256,
        41,
        4,
        15,
        15,
        71,
    )
    assert [s["order"] for s in m["subgroups"]] == [24, 6, 2, 1]
    assert m["is_group"] is False and m["is_definite"] is False
    r = out["realizability"]
    assert set(r) >= {"nfsm", "householder", "diagonal_nonnegative", "diagonal_real", "diagonal_complex"}
    assert r["nfsm"]["exact"]["indices"] == 4 and r["nfsm"]["robust"]["realizes"] is True
    assert r["householder"]["robust"]["realizes"] is False  # Theorem 4.1: T4 is not definite
    assert all("theorem" in col for fam in r.values() for col in fam.values())


def test_json_group_s5():
    out = json.loads(_run("analyze", "S5:gens", "--json").output)
    m = out["monoid"]
    assert m["is_group"] and m["size"] == 120 and not m["is_solvable"]
    (h,) = m["subgroups"]
    assert h["name"] == "S5" and sorted(h["composition_factors"]) == ["A5", "C2"]
    hh = out["realizability"]["householder"]["exact"]
    assert hh["layers"] == 1 and hh["width"] == 5 and hh["reflections_per_step"] <= 4
    assert out["realizability"]["diagonal_complex"]["exact"]["realizes"] is False  # non-solvable
    assert out["realizability"]["diagonal_real"]["exact"]["realizes"] is False


def test_parity_and_definite():
    r = json.loads(_run("analyze", "parity", "--json").output)["realizability"]
    assert r["diagonal_nonnegative"]["exact"]["realizes"] is False  # Theorem 1
    assert r["diagonal_real"]["exact"]["realizes"] is True


def test_text_report():
    res = _run("analyze", "flipflop")
    assert res.exit_code == 0
    assert "transition monoid: 3 elements" in res.output
    assert "aperiodic: yes" in res.output
    assert "realizability" in res.output


def test_bad_input_exit_2_one_line():
    for args in (("analyze", "no-such-builtin"), ("analyze", "T6", "--max-elements", "100")):
        res = _run(*args)
        assert res.exit_code == 2
        assert "Traceback" not in res.output
        assert len(res.stderr.strip().splitlines()) == 1
    res = _run("analyze", "T6", "--max-elements", "100")
    assert "element limit of 100" in res.stderr


def test_definite_spec_file_is_robustly_realizable(tmp_path):
    """The last two symbols (states 2a+b): definite of degree 2, so an affine recurrence realizes it robustly."""
    spec = {
        "format": "fsa2rnn.automaton/1",
        "states": ["00", "01", "10", "11"],
        "symbols": ["0", "1"],
        "transitions": {"0": [0, 2, 0, 2], "1": [1, 3, 1, 3]},
        "initial": "00",
    }
    path = tmp_path / "last_two.json"
    path.write_text(json.dumps(spec))
    out = json.loads(_run("analyze", str(path), "--json").output)
    assert out["monoid"]["is_definite"] is True and out["monoid"]["definite_degree"] == 2
    assert out["monoid"]["is_aperiodic"] is True
    r = out["realizability"]
    assert r["affine_any"]["robust"]["realizes"] is True
    assert r["diagonal_nonnegative"]["exact"]["realizes"] is True  # aperiodic: resets only
    assert r["householder"]["exact"]["layers"] >= 1  # the holonomy cascade sizes the Theorem 4 construction


#: Runs one command in a fresh interpreter and prints, on its last stderr line, the heavy libraries it imported.
_PROBE = """import atexit, runpy, sys
HEAVY = ("sympy", "scipy", "torch", "networkx", "automata", "matplotlib")
atexit.register(lambda: print("LOADED", *sorted({m.split(".")[0] for m in sys.modules} & set(HEAVY)), file=sys.stderr))
sys.argv = ["fsa2rnn", *sys.argv[1:]]
runpy.run_module("fsa2rnn.cli", run_name="__main__")
"""


def _loaded(args: list[str], stdin: str = "") -> list[str]:
    cmd = [sys.executable, "-c", _PROBE, *args]
    res = subprocess.run(cmd, input=stdin, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stderr.strip().splitlines()[-1].split()[1:]


@pytest.mark.parametrize(
    "args",
    [["show", "parity"], ["analyze", "parity", "--json"], ["analyze", "S4", "--json"], ["analyze", "T4"],
     ["decompose", "parity"]],
)  # fmt: skip
def test_commands_import_only_what_they_use(args):
    """Start-up: sympy and scipy are imported inside the functions that need them (non-solvable groups, large
    graphs), torch only by the commands that train or load torch modules; none of them for these commands."""
    assert _loaded(args) == []


def test_run_imports_no_torch_sympy_or_scipy(tmp_path):
    """`run` executes a compiled model in numpy (compile itself uses torch for its float certificates)."""
    model = tmp_path / "parity.safetensors"
    assert CliRunner().invoke(main, ["compile", "parity", "--target", "nfsm", "-o", str(model)]).exit_code == 0
    assert _loaded(["run", str(model)], stdin='["1", "0", "1"]\n') == []


def test_a_non_solvable_group_still_gets_sympy():
    """The control: A5's composition factors need sympy, imported on use (the probe sees it)."""
    assert "sympy" in _loaded(["analyze", "A5", "--json", "--no-cascade"])
