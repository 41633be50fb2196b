"""``regex:PATTERN`` — the minimal DFA of a regular expression: automata-lib parses it into an NFA, the subset
construction of fsa/determinize.py (with a limit on the DFA states) and fsa/minimize.py do the rest.

automata-lib's syntax: concatenation, ``|`` (union), ``*``, ``+``, ``?``, parentheses, ``&`` (intersection),
``.`` (any symbol). The alphabet is the set of symbols occurring in the pattern, sorted. The result is complete
(the empty set of NFA states is the dead state) and its states are renamed "0".."n-1" in BFS order from the
initial state "0".
"""

from __future__ import annotations

import numpy as np

from ..automaton import Automaton
from ..determinize import MAX_DFA_STATES, determinize
from ..errors import LimitExceededError, SpecError
from ..minimize import minimize

#: Longest pattern parsed: its NFA has about two states per character, and the subset construction stores a bitset
#: of all of them per state (fsa/determinize.py refuses beyond about 65,000 NFA states).
MAX_PATTERN_LENGTH = 30_000


def automaton_from_regex(pattern: str, max_states: int = MAX_DFA_STATES) -> Automaton:
    """The minimal complete DFA of ``pattern``; LimitExceededError as soon as determinization reaches more than
    ``max_states`` DFA states."""
    from automata.base.exceptions import AutomatonException, RegexException
    from automata.fa.nfa import NFA

    if not pattern:
        raise SpecError("bad regex '': the pattern is empty")
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise LimitExceededError(f"the regex has {len(pattern):,} characters, over the limit of {MAX_PATTERN_LENGTH:,}")
    try:
        nfa = NFA.from_regex(pattern)
    except (RegexException, AutomatonException) as exc:
        raise SpecError(f"bad regex {pattern!r}: {' '.join(str(exc).split())}") from None
    symbols = sorted(nfa.input_symbols)
    if not symbols:
        raise SpecError(f"bad regex {pattern!r}: the pattern has no symbols")
    state_id = {q: i for i, q in enumerate(nfa.states)}
    symbol_id = {x: i for i, x in enumerate(symbols)}
    moves: list[tuple[int, int, int]] = []
    eps: list[tuple[int, int]] = []
    for q, row in nfa.transitions.items():
        for x, targets in row.items():
            for r in targets:
                if x == "":
                    eps.append((state_id[q], state_id[r]))
                else:
                    moves.append((state_id[q], symbol_id[x], state_id[r]))
    mv = np.array(moves, dtype=np.int64).reshape(-1, 3).T
    ep = np.array(eps, dtype=np.int64).reshape(-1, 2).T
    accepting = np.zeros(len(state_id), dtype=bool)
    accepting[[state_id[q] for q in nfa.final_states]] = True
    table, acc = determinize(
        len(state_id),
        state_id[nfa.initial_state],
        accepting,
        (mv[0], mv[1], mv[2]),
        (ep[0], ep[1]),
        len(symbols),
        max_states=max_states,
        what=f"regex {pattern if len(pattern) <= 40 else pattern[:39] + '…'!r}",
    )
    a = Automaton(table, symbols=symbols, initial=0, accepting=np.flatnonzero(acc).tolist())
    a = minimize(a)  # the minimal DFA, numbered in canonical BFS order
    return a.replace(states=[str(i) for i in range(a.n_states)], name=f"regex:{pattern}")
