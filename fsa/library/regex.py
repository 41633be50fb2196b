"""``regex:PATTERN`` — the minimal DFA of a regular expression, via automata-lib.

automata-lib's syntax: concatenation, ``|`` (union), ``*``, ``+``, ``?``, parentheses, ``&`` (intersection),
``.`` (any symbol). The alphabet is the set of symbols occurring in the pattern, sorted. The result is complete
(a partial DFA gains a sink state) and its states are renamed "0".."n-1" in BFS order from the initial state "0".
"""

from __future__ import annotations

from ..automaton import Automaton
from ..errors import SpecError
from ..minimize import minimize


def automaton_from_regex(pattern: str) -> Automaton:
    """The minimal complete DFA of ``pattern`` (NFA.from_regex → DFA.from_nfa → minify)."""
    from automata.base.exceptions import AutomatonException, RegexException
    from automata.fa.dfa import DFA
    from automata.fa.nfa import NFA

    from ..dfa_interop import from_dfa

    if not pattern:
        raise SpecError("bad regex '': the pattern is empty")
    try:
        dfa = DFA.from_nfa(NFA.from_regex(pattern)).minify()
    except (RegexException, AutomatonException) as exc:
        raise SpecError(f"bad regex {pattern!r}: {' '.join(str(exc).split())}") from None
    a = from_dfa(dfa)
    symbols = sorted(a.symbols)  # automata-lib's order depends on set iteration: make it canonical
    a = a.replace(transitions=a.transitions[[a.symbol_index(x) for x in symbols]], symbols=symbols)
    a = minimize(a)  # canonical BFS numbering; a partial DFA's added sink may equal a dead state
    return a.replace(states=[str(i) for i in range(a.n_states)], name=f"regex:{pattern}")
