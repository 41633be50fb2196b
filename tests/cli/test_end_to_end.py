"""End to end, tracr-style: every automaton of tests/cases.py through the whole CLI, in process.

For each case: ``show --json`` (the table is the automaton's), ``analyze --json`` (the monoid's size against a
breadth-first enumeration written here, or the published order for the 7920-state M11; ``is_group`` against a
direct permutation check of the table), ``decompose --json`` (the emulation is verified; SgpDec's published holonomy
oracles where the case states them), then ``compile`` to both targets, ``run`` on random words (state names
compared with :meth:`Automaton.run`) and ``verify`` against the spec. Random automata take the same path as JSON
spec files. A missing command fails (click exit 2, "No such command"), it is never skipped; no case is expected to be
refused, so any refusal fails too.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from cases import CASES, Case, case_automaton, random_automaton
from click.testing import CliRunner, Result

from fsa2rnn.cli.main import main
from fsa2rnn.fsa import Automaton

#: Breadth-first enumeration stores |M| arrays of n_states entries; beyond this many entries use the published order.
BFS_ENTRY_LIMIT = 2_000_000
TARGETS = ("householder", "nfsm")
#: (states, symbols, seed) of the random automata (tests/cases.py random_automaton)
RANDOM = [(3, 2, 0), (4, 2, 1), (5, 3, 2), (6, 2, 3), (7, 3, 4), (8, 2, 5)]


def _invoke(args: list[str], stdin: str | None = None) -> Result:
    result = CliRunner().invoke(main, args, input=stdin)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    assert result.exit_code == 0, f"fsa2rnn {' '.join(args)} exited {result.exit_code}: {result.output[-500:]}"
    return result


def _json(args: list[str]) -> dict:
    return json.loads(_invoke(args).stdout)


def _monoid_size_by_bfs(transitions: np.ndarray, max_elements: int | None = None) -> int | None:
    """|{δ_w}| (the empty word included) by breadth-first search over right multiplication by the letters;
    None once more than max_elements are found."""
    n = transitions.shape[1]
    dtype = np.int16 if n < 2**15 else np.int32
    gens = transitions.astype(dtype)
    frontier = np.arange(n, dtype=dtype)[None]
    seen = {frontier[0].tobytes()}
    while len(frontier):
        # s·x = "apply s, then x" = x[s]: every frontier element times every letter, deduplicated
        products = np.unique(gens[:, frontier].reshape(-1, n), axis=0)
        fresh = [p for p in products if p.tobytes() not in seen]
        seen.update(p.tobytes() for p in fresh)
        if max_elements is not None and len(seen) > max_elements:
            return None
        frontier = np.array(fresh, dtype=dtype).reshape(-1, n)
    return len(seen)


def _independent_monoid_size(case: Case) -> int:
    """Enumerated here when small enough, else the published order (M11: 7920)."""
    a = case_automaton(case)
    size = _monoid_size_by_bfs(a.transitions, max_elements=BFS_ENTRY_LIMIT // a.n_states)
    if size is None:
        assert case.monoid_size is not None, f"{case.name}: too large to enumerate here and no published order"
        return case.monoid_size
    if case.monoid_size is not None:
        assert size == case.monoid_size, "the test's enumeration disagrees with the published order"
    return size


def _random_words(a: Automaton, seed: int, n_words: int = 3, max_len: int = 24) -> list[list[str]]:
    rng = np.random.default_rng(seed)
    words = [rng.integers(0, a.n_symbols, size=int(rng.integers(1, max_len + 1))) for _ in range(n_words)]
    return [[a.symbols[x] for x in w] for w in words]


def _check_show(spec: str, a: Automaton) -> None:
    out = _json(["show", spec, "--json"])
    assert (out["n_states"], out["n_symbols"]) == (a.n_states, a.n_symbols)
    assert out["states"] == list(a.states) and out["symbols"] == list(a.symbols)
    assert out["initial"] == a.states[a.initial]
    assert np.array_equal(np.array([out["transitions"][x] for x in a.symbols]), a.transitions)


def _check_analyze(spec: str, a: Automaton, size: int) -> dict:
    monoid = _json(["analyze", spec, "--json"])["monoid"]
    assert monoid["size"] == size
    permutes = bool(np.all(np.sort(a.transitions, axis=1) == np.arange(a.n_states)))
    assert monoid["is_group"] is permutes
    return monoid


def _check_decompose(spec: str) -> dict:
    out = _json(["decompose", spec, "--json"])
    assert out["emulation_verified"] is True
    assert out["levels"] and all(level["components"] for level in out["levels"])
    return out


def _check_compile_run_verify(spec: str, a: Automaton, target: str, tmp_path: Path, seed: int) -> None:
    path = tmp_path / f"model-{target}.safetensors"
    summary = _json(["compile", spec, "--target", target, "-o", str(path), "--json"])
    assert summary["target"] == target and summary["verified"] is True and path.exists()

    words = _random_words(a, seed)
    stdin = "".join(json.dumps(w) + "\n" for w in words)
    for dtype in ("float64", "float32"):
        lines = _invoke(["run", str(path), "--dtype", dtype], stdin=stdin).stdout.splitlines()
        assert len(lines) == len(words)
        for word, line in zip(words, lines):
            assert json.loads(line) == [a.states[q] for q in a.run(word)], (dtype, word)

    report = _json(["verify", str(path), "--spec", spec, "--json", "--length", "64", "--words", "4"])
    assert report["ok"] is True and report["agreement"] == 1.0 and report["first_failing_length"] is None
    assert report.get("exact", {"ok": True})["ok"] is True


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_show(case):
    a = case_automaton(case)
    assert (a.n_states, a.n_symbols) == (case.n_states, case.n_symbols)
    _check_show(case.spec, a)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_analyze(case):
    monoid = _check_analyze(case.spec, case_automaton(case), _independent_monoid_size(case))
    assert monoid["is_group"] is case.is_group
    if case.idempotents is not None:
        assert monoid["idempotents"] == case.idempotents
    if case.green is not None:
        assert (monoid["d_classes"], monoid["l_classes"], monoid["r_classes"], monoid["h_classes"]) == case.green


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_decompose(case):
    out = _check_decompose(case.spec)
    if case.holonomy_levels is not None:
        assert len(out["levels"]) == case.holonomy_levels
        got = [(c["points"], c["group_order"]) for level in out["levels"] for c in level["components"]]
        if any(order is None for _, order in case.holonomy):  # the published oracle states only the points
            got = [(points, None) for points, _ in got]
        assert Counter(got) == Counter(case.holonomy)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_compile_run_verify(case, target, tmp_path):
    _check_compile_run_verify(case.spec, case_automaton(case), target, tmp_path, seed=sum(map(ord, case.name)))


@pytest.mark.parametrize(("n", "k", "seed"), RANDOM)
def test_random_json_spec_through_every_stage(n, k, seed, tmp_path):
    """Random automata, given as JSON spec files (no builtin structure to lean on), through the whole pipeline."""
    a = random_automaton(n, k, seed)
    spec = str(tmp_path / "spec.json")
    a.save(spec)
    _check_show(spec, a)
    _check_analyze(spec, a, _monoid_size_by_bfs(a.transitions))
    _check_decompose(spec)
    for target in TARGETS:
        _check_compile_run_verify(spec, a, target, tmp_path, seed)


def test_bfs_oracle_on_known_monoids():
    """The enumeration used above, on monoids whose sizes are known in closed form."""
    t3 = np.array([[1, 2, 0], [1, 0, 2], [0, 0, 2]])
    assert _monoid_size_by_bfs(t3) == 27
    assert _monoid_size_by_bfs(np.array([[1, 2, 3, 4, 0]])) == 5  # C5 (the identity is δ of the empty word)
    assert _monoid_size_by_bfs(np.array([[0, 0, 0]])) == 2  # {1, constant}
    ff = np.array([[0, 1], [1, 1], [0, 0]])  # read, set, reset
    assert _monoid_size_by_bfs(ff) == 3
    assert _monoid_size_by_bfs(t3, max_elements=26) is None
