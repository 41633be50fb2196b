"""Relabelling, renumbering and isomorphism of automata.

Two automata over the same symbol names are isomorphic when a bijection of states carries δ_x onto δ_x for every
symbol, the initial state onto the initial state and the accepting set onto the accepting set.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from .automaton import STATE_DTYPE, Automaton
from .errors import SpecError

Renaming = Sequence[str] | Mapping[str, str] | Callable[[str], str] | None


def _rename(old: tuple[str, ...], new: Renaming, what: str) -> tuple[str, ...]:
    if new is None:
        return old
    if callable(new):
        return tuple(str(new(s)) for s in old)
    if isinstance(new, Mapping):
        unknown = sorted(set(new) - set(old))
        if unknown:
            raise SpecError(f"relabel: unknown {what} {unknown[0]!r}")
        return tuple(str(new.get(s, s)) for s in old)
    names = tuple(str(s) for s in new)
    if len(names) != len(old):
        raise SpecError(f"relabel: got {len(names)} {what} names for {len(old)} {what}s")
    return names


def relabel(a: Automaton, states: Renaming = None, symbols: Renaming = None) -> Automaton:
    """Rename states and/or symbols (a list of new names, a mapping old → new, or a function); indices unchanged."""
    return a.replace(states=_rename(a.states, states, "state"), symbols=_rename(a.symbols, symbols, "symbol"))


def renumber(a: Automaton, order: Sequence[int] | np.ndarray) -> Automaton:
    """The same automaton with states reordered: new state i is old state ``order[i]`` (names travel along)."""
    order = np.asarray(order, dtype=STATE_DTYPE)
    if order.shape != (a.n_states,) or not np.array_equal(np.sort(order), np.arange(a.n_states)):
        raise SpecError(f"renumber: order must be a permutation of 0..{a.n_states - 1}")
    inverse = np.empty_like(order)
    inverse[order] = np.arange(a.n_states)
    return Automaton(
        inverse[a.transitions[:, order]],
        states=[a.states[i] for i in order],
        symbols=a.symbols,
        initial=None if a.initial is None else int(inverse[a.initial]),
        accepting=None if a.accepting is None else np.flatnonzero(a.accepting[order]).tolist(),
        name=a.name,
        action=a.action,
    )


def align_symbols(a: Automaton, symbols: Sequence[str]) -> np.ndarray:
    """a's transition table with rows in the given symbol order (the same set of names)."""
    if set(symbols) != set(a.symbols):
        raise SpecError("the automata have different alphabets")
    return a.transitions[[a.symbol_index(x) for x in symbols]]


def isomorphism(a: Automaton, b: Automaton) -> np.ndarray | None:
    """A state bijection ``phi`` (phi[q] = b's state for a's state q) showing a ≅ b, or None.

    Symbols are matched by name. Initially connected automata are compared through their canonical BFS numbering
    (linear time); otherwise networkx's VF2 matcher searches for a labelled digraph isomorphism.
    """
    if a.n_states != b.n_states or set(a.symbols) != set(b.symbols):
        return None
    if (a.initial is None) != (b.initial is None) or (a.accepting is None) != (b.accepting is None):
        return None
    tb = align_symbols(b, a.symbols)
    if a.initial is not None:
        from .reachable import bfs_order

        oa, ob = bfs_order(a), bfs_order(b)
        if len(oa) == a.n_states and len(ob) == b.n_states:
            ia = np.empty_like(oa)
            ia[oa] = np.arange(len(oa))
            ib = np.empty_like(ob)
            ib[ob] = np.arange(len(ob))
            same = np.array_equal(ia[a.transitions[:, oa]], ib[tb[:, ob]])
            if a.accepting is not None:
                same = same and np.array_equal(a.accepting[oa], b.accepting[ob])
            if not same:
                return None
            phi = np.empty(a.n_states, dtype=STATE_DTYPE)
            phi[oa] = ob
            return phi
    return _vf2(a, b, tb)


def _vf2(a: Automaton, b: Automaton, tb: np.ndarray) -> np.ndarray | None:
    import networkx as nx
    from networkx.algorithms.isomorphism import DiGraphMatcher

    def graph(aut: Automaton, table: np.ndarray) -> nx.DiGraph:
        g = nx.DiGraph()
        acc = aut.accepting
        for q in range(aut.n_states):
            g.add_node(q, init=q == aut.initial, acc=bool(acc[q]) if acc is not None else False)
        labels: dict[tuple[int, int], set[int]] = {}
        for x in range(table.shape[0]):
            for q, r in enumerate(table[x].tolist()):
                labels.setdefault((q, r), set()).add(x)
        for (q, r), xs in labels.items():
            g.add_edge(q, r, labels=frozenset(xs))
        return g

    matcher = DiGraphMatcher(
        graph(a, a.transitions),
        graph(b, tb),
        node_match=lambda u, v: u == v,
        edge_match=lambda e, f: e["labels"] == f["labels"],
    )
    for mapping in matcher.isomorphisms_iter():
        phi = np.empty(a.n_states, dtype=STATE_DTYPE)
        for q, r in mapping.items():
            phi[q] = r
        return phi
    return None


def is_isomorphic(a: Automaton, b: Automaton) -> bool:
    """Whether a and b are isomorphic (see :func:`isomorphism`)."""
    return isomorphism(a, b) is not None
