"""Limits are checked before the memory is spent, and they hold (issue 9, item 2).

The out-of-memory regressions of benchmarks/bench_limits.py run here as the CLI in a child process: each is refused
with exit 2 and one line naming the size and the limit, at a peak RSS under 1 GiB (the child's own, ``os.wait4``),
under a generous hang timeout — the seconds are the benchmark's business. The new algorithms are checked against
independent oracles: the subset construction against automata-lib's, the powers of a transformation by iterating
it, the memory limit of the monoid enumeration by the peak RSS it really reaches.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.fsa.errors import LimitExceededError, SpecError
from fsa2rnn.fsa.library.regex import automaton_from_regex
from fsa2rnn.fsa.monoid import powers_count

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bench_limits  # noqa: E402

MIB = 1 << 20


@pytest.fixture(scope="module")
def spec_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("limits")
    bench_limits.write_specs(d)
    return d


@pytest.mark.parametrize("case", bench_limits.CASES, ids=lambda c: c.name)
def test_oom_inputs_are_refused_in_one_line_below_1_gib(case, spec_dir):
    rc, err, _, peak_mib = bench_limits.run_measured([a.replace("{dir}", str(spec_dir)) for a in case.args])
    lines = err.strip().splitlines()
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert case.expect in lines[0], lines[0]
    assert peak_mib < 1024, f"peak RSS {peak_mib:.0f} MiB"
    assert not (spec_dir / "m.safetensors").exists()


def test_monoid_memory_limit_bounds_the_real_peak(tmp_path):
    """analyze with --max-memory 0.125 on a 3000-state automaton: refused by the memory limit, and the child's peak
    RSS above that of a trivial analysis (the interpreter and its imports) stays within the limit."""
    n = 3000
    rng = np.random.default_rng(1)
    spec = {"states": n, "symbols": ["a", "b"], "transitions": {"a": rng.integers(0, n, n).tolist(), "b": []}}
    spec["transitions"]["b"] = rng.integers(0, n, n).tolist()
    path = tmp_path / "random3000.json"
    path.write_text(json.dumps(spec))
    rc, err, _, peak = bench_limits.run_measured(["analyze", str(path), "--max-memory", "0.125", "--no-cascade"])
    assert rc == 2 and "memory limit of 0.125 GiB" in err, err
    _, _, _, base = bench_limits.run_measured(["analyze", "parity", "--no-cascade"])
    assert peak - base <= 0.125 * 1024, f"peak {peak:.0f} MiB, baseline {base:.0f} MiB"


# ---------------------------------------------------------------- the subset construction (fsa/determinize.py)
def _automata_lib_minimal_dfa(pattern: str):
    """The oracle: automata-lib's own determinization and minimization, renumbered the way regex: numbers states."""
    from automata.fa.dfa import DFA
    from automata.fa.nfa import NFA

    from fsa2rnn.fsa import Automaton
    from fsa2rnn.fsa.minimize import minimize

    a = Automaton.from_dfa(DFA.from_nfa(NFA.from_regex(pattern)).minify())
    symbols = sorted(a.symbols)
    a = minimize(a.replace(transitions=a.transitions[[a.symbol_index(x) for x in symbols]], symbols=symbols))
    return a.replace(states=[str(i) for i in range(a.n_states)])


def _random_regex(rng: np.random.Generator, depth: int = 0) -> str:
    kind = rng.integers(0, 6 if depth < 3 else 1)
    if kind == 0:
        return str(rng.choice(list("abc")))
    if kind == 1:
        return _random_regex(rng, depth + 1) + _random_regex(rng, depth + 1)
    if kind == 2:
        return f"({_random_regex(rng, depth + 1)}|{_random_regex(rng, depth + 1)})"
    if kind == 3:
        return f"({_random_regex(rng, depth + 1)})" + str(rng.choice(["*", "+", "?"]))
    if kind == 4:
        return f"({_random_regex(rng, depth + 1)}&{_random_regex(rng, depth + 1)})"
    return "."


def test_determinize_matches_automata_lib():
    rng = np.random.default_rng(9)
    patterns = ["(a|b)*abb", "(a|b)*a(a|b)(a|b)", "a*b*c*", ".*a.", "((a|b)(a|b))*", "(a|b)" * 40 + "a"]
    patterns += [_random_regex(rng) for _ in range(60)]
    for p in patterns:
        letters = "".join(sorted(set(p) & set("abc")))  # automata-lib's "." is any of the pattern's symbols
        spec = f"regex[{letters}]:{p}" if "." in p and letters else p
        try:
            want = _automata_lib_minimal_dfa(p)
        except SpecError:  # e.g. "(.|.)": no symbol at all
            with pytest.raises(SpecError):
                automaton_from_regex(spec)
            continue
        assert automaton_from_regex(spec).replace(name=None) == want, p


def test_max_states_is_the_dfa_state_limit():
    p = "(a|b)*a" + "(a|b)" * 6  # subsets: the 2^7 = 128 states of the minimal DFA and the initial closure
    assert automaton_from_regex(p, max_states=129).n_states == 128
    with pytest.raises(LimitExceededError, match="reached 129 DFA states, over the limit of 128"):
        automaton_from_regex(p, max_states=128)
    res = CliRunner().invoke(main, ["show", f"regex:{p}", "--max-states", "100"])
    assert res.exit_code == 2 and res.stderr.count("\n") == 1 and "over the limit of 100 states" in res.stderr
    assert CliRunner().invoke(main, ["show", f"regex:{p}", "--max-states", "200"]).exit_code == 0


# ---------------------------------------------------------------- the monoid's size bound from the input
def test_powers_count_against_iteration():
    rng = np.random.default_rng(3)
    for trial in range(200):
        n = int(rng.integers(1, 13))
        t = rng.permutation(n) if trial % 3 == 0 else rng.integers(0, n, n)
        seen, cur = set(), np.arange(n)
        while tuple(cur) not in seen:
            seen.add(tuple(cur))
            cur = t[cur]
        assert powers_count(t) == len(seen), t
    chain = np.maximum(np.arange(1000) - 1, 0)  # tail 999, then a fixed point
    assert powers_count(chain) == 1000
    assert powers_count(np.array([1, 2, 0, 4, 3, 6, 7, 8, 9, 5])) == 30  # cycles 3, 2, 5


def test_monoid_refused_before_enumeration_when_the_powers_do_not_fit():
    from fsa2rnn.fsa.monoid import TransitionMonoid

    n = 5000
    cycle = np.roll(np.arange(n), 1)
    with pytest.raises(LimitExceededError, match="at least 5,000 elements \\(the powers of symbol '0'\\)"):
        TransitionMonoid([cycle, cycle], max_elements=4999)
    with pytest.raises(LimitExceededError, match="memory limit of .* holds at 10,"):
        TransitionMonoid([cycle, cycle], max_bytes=10 * MIB)  # 5000 × 2 bytes per image: about 700 elements fit


# ---------------------------------------------------------------- compile's key space, show's group order
def test_key_space_message_is_true_at_the_boundary():
    from fsa2rnn.compiler.targets.lrnn.spec import MAX_KEY_SPACE, check_key_space

    check_key_space([2] * 62, "layer")  # exactly 2^62 keys: codes 0..2^62-1 fit
    with pytest.raises(LimitExceededError) as info:
        check_key_space([2] * 63, "layer")
    space, limit = (int(w) for w in str(info.value).split() if w.isdigit())
    assert space == 2**63 > limit == MAX_KEY_SPACE


def test_cascade_levels_bound_is_a_lower_bound():
    """levels_lower_bound never exceeds the number of levels the holonomy decomposition finds."""
    from fsa2rnn.compiler.targets.lrnn.cascade_to_householder import levels_lower_bound
    from fsa2rnn.fsa.holonomy import holonomy_levels
    from fsa2rnn.fsa.library import resolve_spec

    tight = 0
    for spec in ["T4", "flipflop", "regex:(a|b)*abb", "regex:" + "(a|b)" * 8 + "a", "cycle_nav", "gridworld:4"]:
        a = resolve_spec(spec)
        bound, levels = levels_lower_bound(a)[0], len(holonomy_levels(a))
        assert 1 <= bound <= levels, spec
        tight += bound == levels
    assert tight >= 3  # flipflop, cycle_nav, (a|b)*abb: the powers of one symbol reach the depth


def test_group_order_named_without_python_hints():
    res = CliRunner().invoke(main, ["show", "A13:gens"])
    assert res.exit_code == 2 and "order 3113510400" in res.stderr and "limit of 100000" in res.stderr
    assert "limit=" not in res.stderr
