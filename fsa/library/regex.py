"""``regex:PATTERN`` and ``regex[ALPHABET]:PATTERN`` — the minimal DFA of a regular expression.

The pattern is read and measured first (regex_syntax.py: its alphabet, what it may not mean, the size of its NFA),
so that nothing is built for a pattern beyond the limits. automata-lib then builds the Thompson NFA of its
canonical form, the subset construction of fsa/determinize.py (with a limit on the DFA states) and
fsa/minimize.py do the rest. Syntax: concatenation, ``|`` (union), ``&`` (intersection), ``^`` (shuffle),
``*``, ``+``, ``?``, counts ``{m}``, ``{m,}``, ``{m,n}``, ``{,n}``, parentheses (``()`` is the empty word),
classes ``[ab]``, ``[a-c]``, ``\\d``, ``\\s``, ``\\w``, escapes ``\\*``, ``\\n``, ``\\x41``; with a stated alphabet
also ``.`` (any symbol), ``[^a]``, ``\\D``, ``\\S``, ``\\W``. The alphabet is the stated one, else the pattern's
literal symbols, sorted. The result is complete (the empty set of NFA states is the dead state) and its states are
renamed "0".."n-1" in BFS order from the initial state "0".
"""

from __future__ import annotations

import numpy as np

from ..automaton import Automaton
from ..determinize import MAX_DFA_STATES, determinize
from ..errors import LimitExceededError, SpecError
from ..minimize import minimize
from .regex_syntax import Pattern, canonical, parse

#: Longest pattern read (its NFA has about two states per character; the expansion limit of regex_syntax.py
#: bounds what repetitions add).
MAX_PATTERN_LENGTH = 30_000


def automaton_from_regex(pattern: str, max_states: int = MAX_DFA_STATES) -> Automaton:
    """The minimal complete DFA of ``pattern`` (a bare pattern, or a ``regex:``/``regex[…]:`` spec string);
    LimitExceededError as soon as determinization reaches more than ``max_states`` DFA states."""
    spec = pattern if pattern.startswith(("regex:", "regex[")) else "regex:" + pattern
    if len(spec) > MAX_PATTERN_LENGTH:
        raise LimitExceededError(f"the regex has {len(spec):,} characters, over the limit of {MAX_PATTERN_LENGTH:,}")
    parsed = parse(spec)
    table, acc = determinize(*_nfa(parsed), max_states=max_states, what=f"regex {_short(spec)!r}")
    a = Automaton(table, symbols=list(parsed.alphabet), initial=0, accepting=np.flatnonzero(acc).tolist())
    a = minimize(a)  # the minimal DFA, numbered in canonical BFS order
    return a.replace(states=[str(i) for i in range(a.n_states)], name=spec)


def _short(text: str) -> str:
    return text if len(text) <= 40 else text[:39] + "…"


def _nfa(parsed: Pattern) -> tuple:
    """The arguments of :func:`determinize` for automata-lib's NFA of the canonical pattern: every move's symbol
    must be one of the alphabet's (anything else would be a symbol the pattern did not mean, refused)."""
    from automata.base.exceptions import AutomatonException, RegexException
    from automata.fa.nfa import NFA

    text = canonical(parsed.tree, parsed.alphabet)
    try:
        nfa = NFA.from_regex(text, input_symbols=set(parsed.alphabet))
    except (RegexException, AutomatonException) as exc:  # the canonical form is ours: a library limitation
        raise SpecError(
            f"regex {_short(parsed.text)!r} cannot be represented by the regex library: {' '.join(str(exc).split())}"
        ) from None
    state_id = {q: i for i, q in enumerate(nfa.states)}
    symbol_id = {x: i for i, x in enumerate(parsed.alphabet)}
    moves: list[tuple[int, int, int]] = []
    eps: list[tuple[int, int]] = []
    for q, row in nfa.transitions.items():
        for x, targets in row.items():
            if x != "" and x not in symbol_id:
                raise SpecError(
                    f"regex {_short(parsed.text)!r} cannot be represented faithfully: the regex library read a "
                    f"symbol {x!r} the pattern does not have"
                )
            for r in targets:
                if x == "":
                    eps.append((state_id[q], state_id[r]))
                else:
                    moves.append((state_id[q], symbol_id[x], state_id[r]))
    mv = np.array(moves, dtype=np.int64).reshape(-1, 3).T
    ep = np.array(eps, dtype=np.int64).reshape(-1, 2).T
    accepting = np.zeros(len(state_id), dtype=bool)
    accepting[[state_id[q] for q in nfa.final_states]] = True
    return (len(state_id), state_id[nfa.initial_state], accepting, (mv[0], mv[1], mv[2]), (ep[0], ep[1]),
            len(parsed.alphabet))  # fmt: skip
