"""The claims registry (realize/theorems) and `fsa2rnn theorems`; `verify --eta` and `compile --target affine`."""

from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.realize.theorems import (
    KINDS,
    REGISTRY,
    STATUSES,
    Theorem,
    checked,
    combine,
    demonstrated,
    registry,
    run_theorem,
    verified,
)

pytestmark = pytest.mark.usefixtures("one_torch_thread")

REQUIRED = [
    "grazzi.thm1",
    "grazzi.thm2",
    "grazzi.prop1.norm",
    "grazzi.prop1.orthogonal",
    "grazzi.prop1.permutation",
    "grazzi.prop1.contraction",
    "grazzi.thm3",
    "grazzi.thm4",
    "grazzi.thm6",
    "brandoit.thm3.1",
    "brandoit.thm3.2",
    "brandoit.thm3.3",
    "brandoit.thm4.1.i",
    "brandoit.thm4.1.ii",
    "brandoit.propF.1",
    "brandoit.def5.1",
    "brandoit.propG.1",
    "dlr.init_dft",
    "dlr.prod",
    "dlr.conv",
    "grazzi.sec4.2",
    "brandoit.propG.3",
    "brandoit.H.6",
    "brandoit.corF.14",
    "terzic.pdssm",
]


@pytest.fixture
def runner():
    return CliRunner()


def _one_line_error(res, message: str) -> None:
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], res.stderr
    assert res.stdout == "" and "Traceback" not in res.stderr


def test_registry_has_every_required_claim_with_a_kind_source_and_one_line_statement():
    reg = registry()
    assert set(REQUIRED) <= set(reg)
    for entry in reg.values():
        assert (
            entry.kind in KINDS
            and entry.source
            and "\n" not in entry.statement
            and entry.id.split(".")[0]
            in (
                "grazzi",
                "brandoit",
                "dlr",
                "terzic",
            )
        )


def test_cheap_claims_pass_through_the_cli_json(runner):
    for tid in ("grazzi.prop1.permutation", "dlr.prod", "brandoit.lemF.11"):
        res = runner.invoke(main, ["theorems", "--only", tid, "--json"])
        assert res.exit_code == 0, res.output
        (entry,) = json.loads(res.stdout)["theorems"]
        assert set(entry) == {"id", "source", "statement", "kind", "status", "seconds", "evidence", "parts"}
        assert entry["id"] == tid and entry["status"] in STATUSES and entry["status"] != "failed" and entry["evidence"]
        assert entry["parts"] and all(p["status"] in entry["status"].split("+") for p in entry["parts"])


def test_unknown_theorem_id_is_bad_input(runner):
    _one_line_error(runner.invoke(main, ["theorems", "--only", "grazzi.thm99"]), "unknown theorem id")


def test_status_follows_from_how_each_part_was_checked():
    assert combine(verified("a", cases="x")) == ("verified", "a [exact; cases: x]")
    status, evidence = combine([verified("a", cases="x"), checked("b", cases="y", tolerance="1e-9")])
    assert status == "verified+checked" and evidence.startswith("verified: a") and "checked: b" in evidence
    assert combine([demonstrated("c", witnesses="w")])[0] == "demonstrated"
    with pytest.raises(ValueError):
        checked("b", cases="y")  # neither a tolerance nor a sample size
    with pytest.raises(TypeError):
        combine("a bare string")  # type: ignore[arg-type]


def test_a_check_returning_a_bare_string_fails(monkeypatch):
    monkeypatch.setitem(REGISTRY, "test.str", Theorem("test.str", "a test", "s", "bound", lambda thorough: "ok"))
    assert run_theorem(REGISTRY["test.str"])["status"] == "failed"


def test_a_failing_check_exits_1(runner, monkeypatch):
    def check(thorough: bool) -> str:
        raise ValueError("boom")

    monkeypatch.setitem(REGISTRY, "test.fails", Theorem("test.fails", "a test", "never holds", "bound", check))
    res = runner.invoke(main, ["theorems", "--only", "test.fails"])
    assert res.exit_code == 1 and "failed" in res.stdout and "boom" in res.stdout


@pytest.mark.slow
def test_every_registered_claim_passes_by_default_in_under_a_minute(runner):
    start = time.perf_counter()
    res = runner.invoke(main, ["theorems", "--json"])
    seconds = time.perf_counter() - start
    assert res.exit_code == 0, res.output[-3000:]
    out = json.loads(res.stdout)["theorems"]
    assert {e["id"] for e in out} == set(registry())
    assert all(e["status"] != "failed" for e in out), [e for e in out if e["status"] == "failed"]
    assert seconds < 60 * 2  # 60 s on an idle 2-core machine; slack for a shared one


# ---------------------------------------------------------------------------------------------------- verify --eta
def test_verify_eta_gives_the_verdict_lmax_and_plot(runner, tmp_path):
    model, png = tmp_path / "z5.safetensors", tmp_path / "drift.png"
    assert runner.invoke(main, ["compile", "Z5", "--target", "householder", "-o", str(model)]).exit_code == 0
    args = ["verify", str(model), "--eta", "0.01", "--lmax", "--cap", "256", "--plot", str(png), "--json"]
    res = runner.invoke(main, [*args, "--length", "50"])
    assert res.exit_code == 1, res.output  # not robust
    robust = json.loads(res.stdout)["robust"]
    assert {"eta", "verdict", "theorem", "evidence", "witness", "l_max", "l_max_capped"} <= set(robust)
    assert robust["verdict"] == "not_robust" and robust["theorem"] == "Theorem 4.1 (i)" and robust["witness"]
    assert robust["l_max"] == robust["horizon"] == 59 and not robust["l_max_capped"]
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_verify_eta_robust_nfsm_exits_0(runner, tmp_path):
    model = tmp_path / "ff.safetensors"
    assert runner.invoke(main, ["compile", "flipflop", "--target", "nfsm", "-o", str(model)]).exit_code == 0
    res = runner.invoke(main, ["verify", str(model), "--eta", "0.5", "--lmax", "--cap", "64", "--length", "20"])
    assert res.exit_code == 0, res.output
    assert "verdict: robust" in res.stdout and "l_max_capped: True" in res.stdout


@pytest.mark.parametrize(
    "args,message",
    [
        (["--eta", "-0.1"], "'--eta': -0.1 is outside its limit [0, 1,000]"),
        (["--eta", "nan"], "'--eta': must be a finite number"),
        (["--eta", "0.1", "--lmax", "--cap", "8"], "below the start length"),
        (["--lmax"], "need --eta"),
        (["--eta", "0.1", "--perturbation", "gaussian"], "perturbation"),
    ],
)
def test_verify_eta_bad_input(runner, tmp_path, args, message):
    model = tmp_path / "p.safetensors"
    assert runner.invoke(main, ["compile", "parity", "--target", "householder", "-o", str(model)]).exit_code == 0
    _one_line_error(runner.invoke(main, ["verify", str(model), *args]), message)


# ---------------------------------------------------------------------------------------------------- compile affine
def test_compile_affine_writes_a_certified_model_and_verify_accepts_it(runner, tmp_path):
    model = tmp_path / "ab.safetensors"
    res = runner.invoke(main, ["compile", "regex:(a|b)*ab", "--target", "affine", "-o", str(model), "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout)
    assert summary["target"] == "affine" and summary["verified"] and "η < 0.25" in summary["robust"]
    res = runner.invoke(main, ["verify", str(model), "--eta", "0.2", "--length", "100", "--json"])
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["exact"]["ok"] and report["robust"]["verdict"] == "robust"


def test_compile_affine_refuses_non_definite_automata_with_theorem_4_1(runner, tmp_path):
    out = tmp_path / "ff.safetensors"
    res = runner.invoke(main, ["compile", "flipflop", "--target", "affine", "-o", str(out)])
    _one_line_error(res, "Theorem 4.1")
    assert "witness" in res.stderr and not out.exists()


def test_check_conditions_flags_a_robust_verdict_its_own_simulation_contradicts(monkeypatch):
    from fsa2rnn.compiler.targets.affine.definite_to_affine import compile_affine
    from fsa2rnn.fsa.library import resolve_spec
    from fsa2rnn.realize import conditions

    model = compile_affine(resolve_spec("regex:(a|b)*ab"))  # certified radius 1/4, tight
    honest = conditions.check_conditions(model, 0.2, cap=64)
    assert honest["verdict"] == "robust" and honest["contradiction"] is False
    original = conditions._certified
    monkeypatch.setattr(conditions, "_certified", lambda st, a, eta, star, *rest: original(st, a, eta, 3 * star, *rest))
    res = conditions.check_conditions(model, 0.6, cap=64)  # "robust below 0.75" is a lie
    assert res["verdict"] == "not_robust" and res["contradiction"] is True and res["theorem"] == "contradiction"
    assert res["simulation"]["l_max"] is not None and "certified radius is wrong" in res["evidence"]
