"""``compile_householder``: an automaton → exact weights of a linear RNN whose transitions are GH products.

The whole path (negative-eigenvalues paper):

    automaton ─┬─ group, cyclic ───────► rotation       (C.1: width 2, two reflections; parity: the scalar −1)
               ├─ group ──────────────► permutation    (Theorem 3: faithful permutation rep., reflections per swap)
               ├─ group, cyclic ───────► reflections2   (Theorem 6: two layers, one reflection each; on request)
               └─ any ── holonomy ─────► cascade        (Theorem 4: one layer per level, resets as β = 1 factors)
                          decomposition

``construction="auto"`` takes the first that applies among rotation, permutation, cascade. The result is checked
exhaustively and exactly (compiler/targets/lrnn/exact.py) before it is returned: ``summary["verified"]``.
"""

from __future__ import annotations

from ....fsa.automaton import Automaton
from ....fsa.errors import ConstructionError, LimitExceededError
from ...model import CompiledModel, resolve_initial
from .cascade_to_householder import cascade
from .cyclic_to_rotation import rotation
from .group_to_householder import permutation
from .reflections2 import reflections2
from .spec import Construction, assemble_construction

CONSTRUCTIONS = ("auto", "permutation", "rotation", "reflections2", "cascade")


def _builder(name: str) -> Construction:
    if name == "permutation":
        return permutation
    if name == "rotation":
        return rotation
    if name == "reflections2":
        return reflections2
    return cascade


def compile_householder(
    automaton: Automaton, *, construction: str = "auto", initial: int | str | None = None, verify: bool = True
) -> CompiledModel:
    """Compile to target "householder" with the named construction (see the module docstring)."""
    if construction not in CONSTRUCTIONS:
        raise ConstructionError(f"unknown construction {construction!r} (choose from {', '.join(CONSTRUCTIONS)})")
    q0 = resolve_initial(automaton, initial)
    if construction == "auto":
        order = ["rotation", "permutation", "cascade"] if automaton.is_group_automaton else ["cascade"]
        reasons = []
        for name in order:
            try:
                return _compile(automaton, q0, name, verify)
            except (ConstructionError, LimitExceededError) as exc:
                reasons.append(f"{name}: {exc}")
        raise ConstructionError("no Householder construction applies: " + "; ".join(reasons))
    return _compile(automaton, q0, construction, verify)


def _compile(automaton: Automaton, q0: int, construction: str, verify: bool) -> CompiledModel:
    return assemble_construction(
        automaton, q0, _builder(construction), target="householder", construction=construction, verify=verify
    )
