"""Benchmark of the holonomy decomposition (issue 4 targets, each run includes the emulation check).

- T_7 (standard generators: 7-cycle, transposition, collapse)                          [< 5 s]
- random 12-state 3-symbol automata (seeds 0..4; the slowest is compared)              [< 30 s]
- the minimal DFA of regex:(a|b)*a(a|b)(a|b)(a|b)(a|b)(a|b) — 64 states: "the 6th symbol
  from the end is a"                                                                     [< 10 s]
- the minimal DFA of regex:(a|b)*a(a|b)(a|b)(a|b)(a|b)(a|b)|(b*ab*ab*a)*b* — 160 states [< 10 s]
- 16 states, S16 with a random rank-8 map (seeded): 39,203 image sets, S16 acting on the 12,870 tiles of Q
  (13+ CPU-minutes before the groups were described on their atoms): the levels and their groups   [< 10 s]
  and the whole decomposition, which refuses at the 500,000-tuple limit                             [< 60 s]

Prints one line per figure (time, ratio to the target, the cascade's shape); exits 1 if a target is missed.
Usage: python benchmarks/bench_holonomy.py
"""

from __future__ import annotations

import sys
import time

import numpy as np

from fsa2rnn.fsa import Automaton, resolve_spec
from fsa2rnn.fsa.errors import LimitExceededError
from fsa2rnn.fsa.holonomy import holonomy_decomposition, holonomy_levels

REGEXES = [
    "(a|b)*a(a|b)(a|b)(a|b)(a|b)(a|b)",
    "(a|b)*a(a|b)(a|b)(a|b)(a|b)(a|b)|(b*ab*ab*a)*b*",
]


def t_n(n: int) -> Automaton:
    return Automaton([[(i + 1) % n for i in range(n)], [1, 0, *range(2, n)], [0, 0, *range(2, n)]], name=f"T{n}")


def full_transformations(n: int, rank: int, seed: int) -> Automaton:
    """S_n (an n-cycle and a transposition) with one random map of the given rank (every set of at most ``rank``
    states is an image)."""
    rng = np.random.default_rng(seed)
    f = rng.permutation(n)[np.r_[np.arange(rank), rng.integers(0, rank, n - rank)]]
    return Automaton(np.stack([np.roll(np.arange(n), -1), np.r_[1, 0, np.arange(2, n)], f]))


def _timed(a: Automaton):
    t = time.perf_counter()
    c = holonomy_decomposition(a)
    return c, time.perf_counter() - t


def _shape(a: Automaton, c) -> str:
    sk = c.skeleton
    return (
        f"{a.n_states} states, image set {sk.M}, {c.n_levels} levels, widths {c.widths}, "
        f"{c.reachable_tuples.shape[0]} coordinate tuples, verified={c.emulation_verified}"
    )


def main() -> int:
    rows = []
    a = t_n(7)
    c, dt = _timed(a)
    rows.append(("T7", dt, 5.0, _shape(a, c) + f"; {c}"))

    worst, worst_info = 0.0, ""
    for seed in range(5):
        rng = np.random.default_rng(seed)
        a = Automaton(rng.integers(0, 12, size=(3, 12)))
        c, dt = _timed(a)
        if dt >= worst:
            worst, worst_info = dt, f"seed {seed}: " + _shape(a, c)
    rows.append(("random 12-state 3-symbol (slowest of 5)", worst, 30.0, worst_info))

    for pattern in REGEXES:
        a = resolve_spec(f"regex:{pattern}")
        c, dt = _timed(a)
        rows.append((f"regex:{pattern}", dt, 10.0, _shape(a, c)))

    a = full_transformations(16, 8, seed=0)
    t = time.perf_counter()
    levels = holonomy_levels(a)
    dt = time.perf_counter() - t
    groups = " / ".join(f"({c.points},{c.group})" for lv in levels for c in lv.components)
    rows.append(("16 states, S16 + rank-8 map: levels and groups", dt, 10.0, groups))
    t = time.perf_counter()
    try:
        holonomy_decomposition(a)
        outcome = "decomposed"
    except LimitExceededError as exc:
        outcome = f"refused: {exc}"
    rows.append(("16 states, S16 + rank-8 map: decompose", time.perf_counter() - t, 60.0, outcome))

    failed = False
    for name, dt, budget, info in rows:
        ok = dt < budget
        failed |= not ok
        print(f"{name:<55} {dt:7.2f} s  ({dt / budget:6.1%} of {budget:g} s) {'ok' if ok else 'OVER'}  [{info}]")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
