"""The builtin catalogue: spec-string patterns → builders.

Each entry has a pattern (a regular expression over the spec string), the form shown by ``fsa2rnn list`` and a
one-line description. :func:`builtin` resolves a name such as ``Z60``, ``S5:swaps`` or ``flipflop:3``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..automaton import Automaton
from ..errors import UnknownBuiltinError
from ..registry import did_you_mean
from . import tasks, word_problems


@dataclass(frozen=True)
class Builtin:
    form: str  #: how the name is written, e.g. "S<n>[:gens|:swaps|:s3]"
    pattern: str  #: full-match regular expression; groups are passed to ``build``
    build: Callable[..., Automaton]
    description: str
    example: str  #: a concrete spec string


def _opt(value: str | None, default: str) -> str:
    return value[1:] if value else default


CATALOGUE: tuple[Builtin, ...] = (
    Builtin("parity", r"parity", tasks.parity, "parity of the number of 1s (states even/odd; accepting odd)", "parity"),
    Builtin(
        "Z<m>[:gen]",
        r"[ZC](\d+)(:gen)?",
        lambda m, v: tasks.cyclic(int(m), _opt(v, "all")),
        "counter modulo m = word problem of C_m (symbols: add x for every x; :gen: only +1)",
        "Z60",
    ),
    Builtin(
        "S<n>[:gens|:swaps|:s3]",
        r"S(\d+)(:gens|:swaps|:s3|:all)?",
        lambda n, v: word_problems.symmetric(int(n), _opt(v, "all")),
        "word problem of the symmetric group S_n (all elements; generators; identity+swaps; ≤3 points moved)",
        "S5:swaps",
    ),
    Builtin(
        "A<n>[:gens]",
        r"A(\d+)(:gens|:all)?",
        lambda n, v: word_problems.alternating(int(n), _opt(v, "all")),
        "word problem of the alternating group A_n (all elements; generators)",
        "A5",
    ),
    Builtin(
        "D<n>[:gens]",
        r"D(\d+)(:gens|:all)?",
        lambda n, v: word_problems.dihedral(int(n), _opt(v, "all")),
        "word problem of the dihedral group of order 2n on n points (all elements; generators)",
        "D4",
    ),
    Builtin(
        "Q8[:gens]",
        r"Q8(:gens|:all)?",
        lambda v: word_problems.quaternion(_opt(v, "all")),
        "word problem of the quaternion group Q8 (all elements; generators i, j)",
        "Q8",
    ),
    Builtin(
        "M11",
        r"M11(:gens|:all)?",
        lambda v: word_problems.mathieu11(_opt(v, "gens")),
        "word problem of the Mathieu group M11, 7920 states, on its 2 generators (M11:all is refused)",
        "M11",
    ),
    Builtin(
        "PSL(2,7)[:gens]",
        r"PSL\(2,7\)(:gens|:all)?",
        lambda v: word_problems.psl27(_opt(v, "all")),
        "word problem of PSL(2,7) = GL(3,2), order 168, on 7 points (all elements; generators)",
        "PSL(2,7)",
    ),
    Builtin(
        "flipflop[:<n>]",
        r"flipflop(?::(\d+))?",
        lambda n: tasks.flipflop(None if n is None else int(n)),
        "flip-flop: set/reset/read on 2 states (:n — n write symbols w0..w<n-1> plus read)",
        "flipflop",
    ),
    Builtin(
        "T<n>",
        r"T(\d+)",
        lambda n: tasks.full_transformation(int(n)),
        "full transformation monoid T_n acting on n points (generators cycle, swap, collapse)",
        "T4",
    ),
    Builtin(
        "modarith[:<m>]",
        r"modarith(?::(\d+))?",
        lambda m: tasks.modular_arithmetic(5 if m is None else int(m)),
        "modular arithmetic without brackets mod m (default 5): digits, + - * =, precedence respected",
        "modarith:5",
    ),
    Builtin(
        "cycle_nav[:<n>]",
        r"cycle_nav(?::(\d+))?",
        lambda n: tasks.cycle_navigation(5 if n is None else int(n)),
        "cycle navigation on a cycle of n points (default 5): forward, backward, stay",
        "cycle_nav",
    ),
    Builtin(
        "even_pairs",
        r"even_pairs",
        tasks.even_pairs,
        'even pairs over {a,b}: accept iff the number of "ab" and "ba" is even (first = last letter)',
        "even_pairs",
    ),
    Builtin(
        "gridworld[:<n>]",
        r"gridworld(?::(\d+))?",
        lambda n: tasks.gridworld(4 if n is None else int(n)),
        "agent on an n×n grid (default 4), moves N/S/E/W clipped at the walls",
        "gridworld:4",
    ),
)


def builtin(spec: str) -> Automaton:
    """The builtin automaton named by ``spec`` (UnknownBuiltinError if no catalogue entry matches)."""
    name = spec.strip()
    for entry in CATALOGUE:
        m = re.fullmatch(entry.pattern, name)
        if m:
            return entry.build(*m.groups())
    raise UnknownBuiltinError(
        f"unknown builtin or missing file {spec!r} (run `fsa2rnn list` for the builtin catalogue"
        f"{did_you_mean(spec, builtin_names(spec))})"
    )


def is_builtin(name: str) -> bool:
    """Whether ``name`` is the form of a builtin (its parameters are checked when it is built)."""
    return any(re.fullmatch(entry.pattern, name) for entry in CATALOGUE)


def builtin_names(like: str = "") -> list[str]:
    """Concrete builtin names to suggest for ``like``: each entry's example and its variants (``S5:gens``,
    ``S5:swaps``, …), with the number of ``like`` (``S7:swap`` → ``S7:swaps``) where it has one."""
    number = re.search(r"\d+", like)
    names = []
    for b in CATALOGUE:
        base = b.example.split(":")[0]
        options = re.search(r"\[((?::[a-z0-9]+\|?)+)\]", b.form)
        variants = [b.example] + ([base + o for o in options.group(1).split("|")] if options else [])
        names += [re.sub(r"\d+", number.group(), v, count=1) if number and "<" in b.form else v for v in variants]
    return list(dict.fromkeys(names))
