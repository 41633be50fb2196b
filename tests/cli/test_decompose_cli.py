"""`fsa2rnn decompose`: the JSON contract of docs/architecture.md, the DOT file, and bad input (exit 2, one line, no
file)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def _levels(data: dict) -> list[list[tuple[int, int]]]:
    return [[(c["points"], c["group_order"]) for c in lv["components"]] for lv in data["levels"]]


@pytest.mark.parametrize(
    "spec, expected",
    [
        ("T4", [[(4, 24)], [(3, 6)], [(2, 2)]]),
        ("flipflop", [[(2, 1)]]),
        ("Z12", [[(12, 12)]]),
        ("parity", [[(2, 2)]]),
    ],
)
def test_json_levels_top_first(runner: CliRunner, spec: str, expected: list) -> None:
    res = runner.invoke(main, ["decompose", spec, "--json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert _levels(data) == expected
    assert data["emulation_verified"] is True
    assert data["n_levels"] == len(expected) and data["widths"] == [sum(p for p, _ in lv) for lv in expected]
    for lv in data["levels"]:
        for c in lv["components"]:
            assert set(c) == {"points", "group_order", "group", "composition_factors"}


def test_group_names(runner: CliRunner) -> None:
    data = json.loads(runner.invoke(main, ["decompose", "T4", "--json"]).output)
    assert [lv["components"][0]["group"] for lv in data["levels"]] == ["S4", "S3", "C2"]
    factors = [sorted(lv["components"][0]["composition_factors"]) for lv in data["levels"]]
    assert factors == [["C2", "C2", "C2", "C3"], ["C2", "C3"], ["C2"]]
    assert data["display"] == "1: (4,S4) / 2: (3,S3) / 3: (2,C2)"


def test_regex_and_json_file_specs(runner: CliRunner, tmp_path) -> None:
    res = runner.invoke(main, ["decompose", "regex:(a|b)*abb", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["emulation_verified"] is True
    spec = {"states": 3, "symbols": ["a", "b"], "transitions": {"a": [1, 2, 0], "b": [0, 0, 2]}}
    path = tmp_path / "a.json"
    path.write_text(json.dumps(spec))
    res = runner.invoke(main, ["decompose", str(path)])
    assert res.exit_code == 0, res.output
    assert "emulation:   verified" in res.output and "level 1:" in res.output


def test_dot_file(runner: CliRunner, tmp_path) -> None:
    out = tmp_path / "c.dot"
    res = runner.invoke(main, ["decompose", "T3", "--dot", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    assert text.startswith("digraph cascade {") and "S3" in text and text.rstrip().endswith("}")


def test_bad_spec_exits_2_with_one_line(runner: CliRunner, tmp_path) -> None:
    out = tmp_path / "c.dot"
    res = runner.invoke(main, ["decompose", "no-such-automaton", "--dot", str(out)])
    assert res.exit_code == 2
    assert len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output
    assert not out.exists()


def test_image_set_limit_exits_2_without_output_file(runner: CliRunner, tmp_path) -> None:
    out = tmp_path / "c.dot"
    res = runner.invoke(main, ["decompose", "T7", "--max-image-set", "50", "--dot", str(out), "--json"])
    assert res.exit_code == 2
    line = res.output.strip()
    assert "more than 50 sets" in line and "limit 50" in line and len(line.splitlines()) == 1
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []
