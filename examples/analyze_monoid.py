"""Analyze transition monoids: size, Green's classes, maximal subgroups, classification and realizability.

Run: python examples/analyze_monoid.py   (a few seconds; writes nothing)
"""

from __future__ import annotations

import numpy as np

from fsa2rnn.fsa import (
    Automaton,
    TransitionMonoid,
    analyze,
    classify,
    definite_degree,
    green_classes,
    realizability,
    resolve_spec,
)

# 1. The full transformation monoid T_4 (builtin "T4"): 4^4 elements, one D-class per rank.
M = TransitionMonoid(resolve_spec("T4"))
print(M, "| idempotents:", M.number_of_idempotents)
print(
    "Green's classes: D =",
    M.number_of_D_classes,
    "R =",
    M.number_of_R_classes,
    "L =",
    M.number_of_L_classes,
    "H =",
    M.number_of_H_classes,
)
for h in M.green.maximal_subgroups:  # one per regular D-class: S4, S3, C2, C1
    print(f"  D-class {h.d_class}: {h.name} of order {h.order} on {h.rank} points, factors {h.composition_factors}")

# 2. Elements, words and the product s·t = "apply s, then t".
s, t = 5, 17
print("element 5 =", M.elements[s].tolist(), "word", M.word(s), "| 5·17 =", M.elements[M.product(s, t)].tolist())

# 3. The word problem of S5: a group whose maximal subgroup has composition factors A5 and C2 (not solvable).
S5 = TransitionMonoid(resolve_spec("S5:gens"))
(h,) = S5.green.maximal_subgroups
print("S5:", S5.size, "elements,", h.name, h.composition_factors, "| classification:", classify(S5))

# 4. A definite automaton: the state is the last two symbols (states ab as 2a+b), so words of length ≥ 2 are constant.
last_two = Automaton([[0, 2, 0, 2], [1, 3, 1, 3]], states=["00", "01", "10", "11"], symbols=["0", "1"])
print("last-two definite degree:", definite_degree(TransitionMonoid(last_two)))

# 5. Which architectures realize the flip-flop, exactly and robustly (docs/theory.md's two senses)?
for family, cols in realizability(resolve_spec("flipflop")).items():
    print(f"  {family:<22} exact: {cols['exact']['realizes']!s:<5}  robust: {cols['robust']['realizes']}")

# 6. Without enumerating: T_8 has 8^8 = 16,777,216 elements; green_classes gets its Green's classes, size and
#    idempotents from orbits of images and kernels and the Schützenberger groups (a fraction of a second).
T8 = green_classes(resolve_spec("T8"))
print(T8, "| idempotents:", T8.number_of_idempotents, "| definite:", classify(T8)["is_definite"])
for d in T8.d_classes[:3]:
    print(f"  D-class {d.index}: rank {d.rank}, {d.r_classes} R × {d.l_classes} L classes, H of order {d.group_order}")

# 7. Everything `fsa2rnn analyze --json` prints, as a dict: a random 9-state, 3-letter automaton (the benchmark's
#    generator, docs/monoid.md "Performance") whose monoid has about 10^4 elements.
gens = np.random.default_rng(13).integers(0, 9, (3, 9))
report = analyze(Automaton(gens, symbols=["a", "b", "c"]))
m = report["monoid"]
print(f"random 9-state automaton: {m['size']:,} elements, {m['d_classes']} D-classes, subgroups",
      sorted({h["name"] for h in m["subgroups"]}), "| solvable:", m["is_solvable"])  # fmt: skip
