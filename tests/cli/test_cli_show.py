"""`fsa2rnn --version`, `list` and `show` on builtins, regexes and spec files."""

from __future__ import annotations

import json

import numpy as np
import pytest
from cases import DESIGN_SPEC, SMALL_CASES, case_automaton
from click.testing import CliRunner

from fsa2rnn import __version__
from fsa2rnn.cli.main import main
from fsa2rnn.fsa import Automaton
from fsa2rnn.fsa.library.builtins import CATALOGUE


def _run(*args: str):
    result = CliRunner().invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result


def test_version():
    assert _run("--version").stdout.strip() == f"fsa2rnn, version {__version__}"


def test_list_text_and_json():
    text = _run("list").stdout
    for entry in CATALOGUE:
        assert entry.form in text
    data = json.loads(_run("list", "--json").stdout)
    assert [b["name"] for b in data["builtins"]] == [b.form for b in CATALOGUE]
    assert all(b["description"] and b["example"] for b in data["builtins"])


@pytest.mark.parametrize("case", SMALL_CASES, ids=lambda c: c.name)
def test_show_json_matches_case(case):
    data = json.loads(_run("show", case.spec, "--json").stdout)
    assert data["n_states"] == case.n_states == len(data["states"])
    assert data["n_symbols"] == case.n_symbols == len(data["symbols"])
    assert data["is_group_automaton"] == case.is_group
    assert data["initial"] in data["states"]
    assert (data["accepting"] is not None) == case.has_accepting
    # the JSON carries a complete spec: rebuild the automaton from it
    spec = {k: data[k] for k in ("states", "symbols", "transitions", "initial")}
    if data["accepting"] is not None:
        spec["accepting"] = data["accepting"]
    rebuilt = Automaton.from_spec(spec)
    assert rebuilt.n_states == case.n_states
    a = case_automaton(case)  # the summary is the automaton itself (its semantics: tests/fsa/test_library.py)
    assert np.array_equal(rebuilt.transitions, a.transitions) and rebuilt.states == a.states
    assert rebuilt.initial == a.initial and rebuilt.accepting_states == a.accepting_states


def test_show_text_summary_of_a_builtin():
    out = _run("show", "parity").stdout
    assert "states:      2  [even, odd]" in out
    assert "symbols:     2  [0, 1]" in out
    assert "initial:     even" in out and "accepting:   [odd]" in out
    assert "group:       yes" in out


def test_show_regex():
    data = json.loads(_run("show", "regex:(ab)*", "--json").stdout)
    assert data["states"] == ["0", "1", "2"] and data["accepting"] == ["0"]
    assert data["transitions"] == {"a": [1, 2, 2], "b": [2, 0, 2]}


def test_show_spec_file_and_dot(tmp_path):
    spec = DESIGN_SPEC
    path = tmp_path / "a.json"
    path.write_text(json.dumps(spec))
    dot = tmp_path / "a.dot"
    out = _run("show", str(path), "--dot", str(dot)).stdout
    assert "states:      3  [q0, q1, q2]" in out and f"wrote {dot}" in out
    assert dot.read_text().startswith("digraph") and '"q2", shape=doublecircle' in dot.read_text()
    data = json.loads(_run("show", str(path), "--json").stdout)
    for key in ("states", "symbols", "transitions", "initial", "accepting"):
        assert data[key] == spec[key]


def test_show_large_builtin_previews():
    out = _run("show", "M11").stdout
    assert "states:      7920" in out and "(showing 8 of 7920 states, 2 of 2 symbols)" in out
    assert "action:      on 11 points" in out


def test_show_semiautomaton_and_product():
    out = _run("show", "gridworld:2").stdout
    assert "accepting:   (none)" in out and "factors:     row x column" in out
