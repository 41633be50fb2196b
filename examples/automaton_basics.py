"""Automaton basics: build, run, minimize, combine and convert automata with fsa2rnn's Python API.

Run: python examples/automaton_basics.py   (a few seconds; writes nothing)
"""

from __future__ import annotations

import numpy as np
from sympy.combinatorics import Permutation, PermutationGroup

from fsa2rnn.fsa import Automaton, resolve_spec, transformation_automaton, word_problem

# 1. An automaton from the JSON spec format (a dict here; Automaton.load reads a file).
a = Automaton.from_spec(
    {
        "states": ["q0", "q1", "q2"],
        "symbols": ["a", "b"],
        "transitions": {"a": [1, 2, 0], "b": [0, 2, 2]},
        "initial": "q0",
        "accepting": ["q2"],
    }
)
print(a, "| run a,b,a ->", a.decode_states(a.run(["a", "b", "a"])), "| accepts a,a:", a.accepts(["a", "a"]))

# 2. Batches of words run vectorized: (B, T) symbol ids -> (B, T) states.
words = np.random.default_rng(0).integers(0, a.n_symbols, size=(4, 10))
print("batch final states:", a.run(words)[:, -1].tolist())

# 3. Builtins and regexes by spec string (the same strings the CLI takes).
s5 = resolve_spec("S5:swaps")
print(s5, "| initial", s5.states[s5.initial], "| action on", s5.action.shape[1], "points")
r = resolve_spec("regex:(a|b)*abb")
print(r, "| accepts b,a,b,b:", r.accepts(list("babb")))

# 4. Minimization: the same language with fewer states (here: a padded copy of the regex DFA).
# a 2-state automaton accepting every word: the product with it changes nothing but the number of states
everything = Automaton([[1, 0], [0, 1]], states=["x", "y"], symbols=["a", "b"], initial="x", accepting=["x", "y"])
padded = r.product(everything)
print(
    "product",
    padded.n_states,
    "states -> minimized",
    padded.minimize().n_states,
    "states;",
    "isomorphic to the regex DFA:",
    padded.minimize().is_isomorphic(r),
)

# 5. Word problems of any permutation group, and Cayley automata of transformation monoids.
g = PermutationGroup([Permutation([1, 0, 2, 3]), Permutation([1, 2, 3, 0])])
print("word problem of", g.order(), "element group:", word_problem(g))
print("T3 as a Cayley automaton:", transformation_automaton([[1, 2, 0], [1, 0, 2], [0, 0, 2]]))

# 6. automata-lib interop: to_dfa / from_dfa round trip.
dfa = r.to_dfa()
print("automata-lib DFA with", len(dfa.states), "states; round trip exact:", Automaton.from_dfa(dfa) == r)

# 7. DOT export (render with Graphviz: fsa2rnn show SPEC --dot out.svg).
print(r.to_dot().splitlines()[0], "...", len(r.to_dot().splitlines()), "lines")
