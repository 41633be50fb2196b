"""The shared table of automata that drives the tests of every stage (algebra, decomposition, compilers, runtime).

Each case names a spec string and facts known independently of fsa2rnn's code (group orders from the literature,
|T_n| = n^n, sizes that follow from the definitions). Use::

    from cases import CASES, SMALL_CASES, case_automaton, random_automaton

    @pytest.mark.parametrize("case", SMALL_CASES, ids=lambda c: c.name)
    def test_something(case):
        a = case_automaton(case)
        ...
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import cache
from math import factorial

import numpy as np

from fsa2rnn.fsa import Automaton, resolve_spec

#: The JSON spec example of docs/architecture.md and docs/guide/automata.md.
DESIGN_SPEC: dict = {
    "format": "fsa2rnn.automaton/1",
    "states": ["q0", "q1", "q2"],
    "symbols": ["a", "b"],
    "transitions": {"a": [1, 2, 0], "b": [0, 2, 2]},
    "initial": "q0",
    "accepting": ["q2"],
}


@dataclass(frozen=True)
class Case:
    name: str
    spec: str  #: spec string for resolve_spec / the CLI
    n_states: int
    n_symbols: int
    is_group: bool  #: every symbol permutes the states
    monoid_size: int | None = None  #: |transition monoid| (the group order for group automata), None if not stated
    group: str | None = None  #: name of the transition group (docs/architecture.md, "Vocabulary") (group automata only)
    has_accepting: bool = False
    large: bool = False  #: thousands of states: skip in per-element or quadratic tests
    definite: int | None = None  #: k of a k-definite automaton (the state is a function of the last k symbols)
    # Published oracles (SgpDec 1.x's holonomy outputs, the counts of T_n); None where not published.
    idempotents: int | None = None  #: number of idempotents of the transition monoid
    green: tuple[int, int, int, int] | None = None  #: numbers of (D, L, R, H) classes
    #: holonomy decomposition: number of levels and the multiset of (points, group order) of its components,
    #: group order None where the published oracle states only the points
    holonomy_levels: int | None = None
    holonomy: tuple[tuple[int, int | None], ...] | None = None


def _full_transformation_case(n: int, idempotents: int, green: tuple, holonomy: tuple) -> Case:
    """T_n by its standard generators, with the published counts: |T_n| = n^n, idempotents, Green's
    classes (D, L, R, H) and the holonomy levels (n - 1 of them)."""
    return Case(
        f"T{n}",
        f"T{n}",
        n,
        3,
        False,
        n**n,
        idempotents=idempotents,
        green=green,
        holonomy_levels=n - 1,
        holonomy=holonomy,
    )


CASES: tuple[Case, ...] = (
    Case("parity", "parity", 2, 2, True, 2, "C2", has_accepting=True, holonomy_levels=1, holonomy=((2, 2),)),
    Case("Z3", "Z3", 3, 3, True, 3, "C3", holonomy_levels=1, holonomy=((3, 3),)),
    Case("Z6:gen", "Z6:gen", 6, 1, True, 6, "C6", holonomy_levels=1, holonomy=((6, 6),)),
    Case("Z60", "Z60", 60, 60, True, 60, "C60"),
    Case("S3", "S3", 6, 6, True, 6, "S3"),
    Case("S4:gens", "S4:gens", 24, 2, True, 24, "S4"),
    Case("S5", "S5", 120, 120, True, 120, "S5"),
    Case("S5:gens", "S5:gens", 120, 2, True, 120, "S5"),
    Case("S5:swaps", "S5:swaps", 120, 1 + 10, True, 120, "S5"),
    Case("S5:s3", "S5:s3", 120, 1 + 10 + 20, True, 120, "S5"),
    Case("A4", "A4", 12, 12, True, 12, "A4"),
    Case("A5", "A5", 60, 60, True, 60, "A5"),
    Case("A5:gens", "A5:gens", 60, 2, True, 60, "A5"),
    Case("A6:gens", "A6:gens", 360, 2, True, 360, "A6"),
    Case("D4", "D4", 8, 8, True, 8, "D8"),
    Case("D5:gens", "D5:gens", 10, 2, True, 10, "D10"),
    Case("Q8", "Q8", 8, 8, True, 8, "Q8"),
    Case("Q8:gens", "Q8:gens", 8, 2, True, 8, "Q8"),
    Case("PSL(2,7):gens", "PSL(2,7):gens", 168, 2, True, 168, "PSL(2,7)"),
    Case("M11", "M11", 7920, 2, True, 7920, "M11", large=True),
    Case("flipflop", "flipflop", 2, 3, False, 3, holonomy_levels=1, holonomy=((2, 1),)),
    Case("flipflop:3", "flipflop:3", 3, 4, False, 4),
    _full_transformation_case(3, 10, (3, 7, 5, 13), ((3, None), (2, None))),
    _full_transformation_case(4, 41, (4, 15, 15, 71), ((4, 24), (3, 6), (2, 2))),
    _full_transformation_case(5, 196, (5, 31, 52, 456), ((5, None), (4, None), (3, None), (2, None))),
    Case("cycle_nav", "cycle_nav", 5, 3, True, 5, "C5"),
    Case("even_pairs", "even_pairs", 5, 2, False, None, has_accepting=True),
    Case("modarith:3", "modarith:3", 2 * 9 + 3 * 3 + 2, 3 + 4, False),
    Case("gridworld:3", "gridworld:3", 9, 4, False),
    # syntactic monoid of (ab)*: {1, a, b, ab, ba, 0}
    Case("regex:(ab)*", "regex:(ab)*", 3, 2, False, 6, has_accepting=True),
    # definite automata (the state is a function of the last k symbols; the affine target compiles them): "ends in
    # ab" (k = 2: states ε/b, a, ab) and "the third symbol from the end is a" (k = 3: the 2³ windows)
    Case("regex:(a|b)*ab", "regex:(a|b)*ab", 3, 2, False, has_accepting=True, definite=2),
    Case("regex:(a|b)*a(a|b)(a|b)", "regex:(a|b)*a(a|b)(a|b)", 8, 2, False, has_accepting=True, definite=3),
)

#: Cases small enough for per-element or quadratic checks.
SMALL_CASES: tuple[Case, ...] = tuple(c for c in CASES if not c.large)

#: Known orders, for tests that need them by name.
GROUP_ORDERS = {"S5": factorial(5), "A5": 60, "M11": 7920, "PSL(2,7)": 168, "Q8": 8}


@cache
def case_automaton(case: Case) -> Automaton:
    """The automaton of a case (built once per test session)."""
    return resolve_spec(case.spec)


def automaton_named(name: str) -> Automaton:
    """The automaton of the case called ``name``."""
    return case_automaton(next(c for c in CASES if c.name == name))


def random_automaton(
    n: int, k: int, seed: int, accepting: bool = True, initial: bool = True, p_accept: float = 0.4
) -> Automaton:
    """A uniformly random complete automaton with n states and k symbols ("a", "b", … for k <= 26)."""
    rng = np.random.default_rng(seed)
    symbols = [chr(ord("a") + i) for i in range(k)] if k <= 26 else None
    acc = np.flatnonzero(rng.random(n) < p_accept).tolist() if accepting else None
    return Automaton(
        rng.integers(0, n, size=(k, n)),
        states=[f"q{i}" for i in range(n)],
        symbols=symbols,
        initial=0 if initial else None,
        accepting=acc,
        name=f"random-{n}x{k}-{seed}",
    )


def window_automaton(k: int, s: int = 2) -> Automaton:
    """States = the last k symbols over s letters (de Bruijn): the 'last k symbols' family, definite of degree k."""
    states = list(itertools.product(range(s), repeat=k))
    index = {w: i for i, w in enumerate(states)}
    table = np.array([[index[w[1:] + (x,)] for w in states] for x in range(s)])
    return Automaton(
        table, states=["".join(map(str, w)) for w in states], symbols=[str(x) for x in range(s)], initial=0
    )
