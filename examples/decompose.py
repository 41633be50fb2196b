"""Krohn–Rhodes holonomy decomposition: levels, coordinates, dependency tables, simulation, emulation.

Run: python examples/decompose.py
"""

from __future__ import annotations

import numpy as np

from fsa2rnn.fsa import Automaton, Cascade, holonomy_decomposition, resolve_spec

# 1. T_4 (all maps of 4 points): SgpDec's 1: (4,S4) / 2: (3,S3) / 3: (2,C2)
t4 = holonomy_decomposition(resolve_spec("T4"))
print("T4:", t4, "| widths", t4.widths, "| emulation verified:", t4.emulation_verified)

# 2. a regex: coordinates of each state, and the level tables a compiler turns into layers
a = resolve_spec("regex:(a|b)*ab")
c = holonomy_decomposition(a)
print("\nregex:(a|b)*ab:", c)
for q, coords in enumerate(c.coordinates):
    print(f"  state {a.states[q]} -> coordinates {coords.tolist()}")
for i in range(c.n_levels):
    keys, images = c.dependency(i)
    for key, row in zip(keys, images):
        x, upper = a.symbols[key[0]], key[1:].tolist()
        kind = "constant" if np.all(row == row[0]) else "permutation"
        print(f"  level {i + 1}: input ({x}, upper {upper}) -> {row.tolist()} ({kind})")

# 3. simulate words on the cascade (level i reads the upper coordinates *before* each symbol) and map back
rng = np.random.default_rng(0)
ids = rng.integers(0, a.n_symbols, size=(4, 12))
states = c.decode(c.run(ids, c.coordinates[np.zeros(4, dtype=int)]))
assert np.array_equal(states, a.run(ids, start=0))
print("  4 random words of 12 symbols: cascade and automaton agree")

# 4. a forward cascade product (Definition 1): a flip-flop over a level that copies it with one step of delay
flip_flop = resolve_spec("flipflop")
delay = Automaton([[c0, c0] for _x in range(3) for c0 in range(2)])  # input (x, c0) resets to c0
prod = Cascade.product([flip_flop, delay])
word = np.array([[0, 2, 1, 2, 0]])
print("\nflip-flop over a delay:", prod.run(word, np.array([[0, 0]]))[0].tolist())
