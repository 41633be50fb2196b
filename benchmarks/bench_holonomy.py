"""Benchmark of the holonomy decomposition (issue 4 targets, each run includes the emulation check).

- T_7 (standard generators: 7-cycle, transposition, collapse)                          [< 5 s]
- random 12-state 3-symbol automata (seeds 0..4; the slowest is compared)              [< 30 s]
- the minimal DFA of regex:(a|b)*a(a|b)(a|b)(a|b)(a|b)(a|b) — 64 states: "the 6th symbol
  from the end is a"                                                                     [< 10 s]
- the minimal DFA of regex:(a|b)*a(a|b)(a|b)(a|b)(a|b)(a|b)|(b*ab*ab*a)*b* — 160 states [< 10 s]

Prints one line per figure (time, ratio to the target, the cascade's shape); exits 1 if a target is missed.
Usage: python benchmarks/bench_holonomy.py
"""

from __future__ import annotations

import sys
import time

import numpy as np

from fsa2rnn.fsa import Automaton, resolve_spec
from fsa2rnn.fsa.holonomy import holonomy_decomposition

REGEXES = [
    "(a|b)*a(a|b)(a|b)(a|b)(a|b)(a|b)",
    "(a|b)*a(a|b)(a|b)(a|b)(a|b)(a|b)|(b*ab*ab*a)*b*",
]


def t_n(n: int) -> Automaton:
    return Automaton([[(i + 1) % n for i in range(n)], [1, 0, *range(2, n)], [0, 0, *range(2, n)]], name=f"T{n}")


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

    failed = False
    for name, dt, budget, info in rows:
        ok = dt < budget
        failed |= not ok
        print(f"{name:<55} {dt:7.2f} s  ({dt / budget:6.1%} of {budget:g} s) {'ok' if ok else 'OVER'}  [{info}]")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
