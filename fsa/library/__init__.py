"""Spec strings and the builtin catalogue.

A spec string is a path to a JSON spec, ``regex:PATTERN`` (or ``regex[ALPHABET]:PATTERN``), or a builtin name
with optional parameters (``Z60``, ``S5:swaps``). :func:`resolve_spec` is what every CLI command uses.

Modules: ``builtins`` (the catalogue), ``word_problems`` (groups, ``word_problem``, ``transformation_automaton``),
``tasks`` (counters, flip-flop, T_n, the papers' tasks), ``regex``, ``cayley`` (monoid enumeration by BFS).
"""

from __future__ import annotations

from pathlib import Path

from ..automaton import Automaton
from ..determinize import MAX_DFA_STATES
from ..errors import SpecError
from .builtins import builtin
from .regex import automaton_from_regex


def resolve_spec(spec: str, max_states: int = MAX_DFA_STATES) -> Automaton:
    """Turn a spec string (file path, ``regex:PATTERN``, ``regex[ALPHABET]:PATTERN`` or builtin name) into an
    Automaton.

    ``max_states`` bounds the DFA states the determinization of a regex may build (LimitExceededError beyond)."""
    if not isinstance(spec, str) or not spec.strip():
        raise SpecError("empty spec string")
    if spec.startswith(("regex:", "regex[")):
        return automaton_from_regex(spec, max_states=max_states)
    path = Path(spec)
    if spec.lower().endswith(".json") or path.exists():
        return Automaton.load(path)

    return builtin(spec)
