"""Relabelling, renumbering, isomorphism and homomorphism of automata.

Two automata over the same symbol names are isomorphic when a bijection of states carries δ_x onto δ_x for every
symbol, the initial state onto the initial state and the accepting set onto the accepting set — and, for Moore
machines (``labels=(labels_a, labels_b)``, an output per state), each state's label onto an equal label.

A homomorphism of initially connected automata a → b is a map φ with φ(q0) = q0' and φ(δ_x(q)) = δ'_x(φ(q)): it
exists iff, in the product run from the initial pair, every reachable state of a meets one state of b only
(:func:`homomorphism`, which otherwise returns a witness).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .errors import SpecError
from .indices import STATE_DTYPE
from .reachable import bfs_order

if TYPE_CHECKING:  # the operations build automata with Automaton.replace: no import cycle
    from .automaton import Automaton

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
    return a.replace(
        transitions=inverse[a.transitions[:, order]],
        states=[a.states[i] for i in order],
        initial=None if a.initial is None else int(inverse[a.initial]),
        accepting=None if a.accepting is None else np.flatnonzero(a.accepting[order]).tolist(),
        factors=None,
    )


def align_symbols(a: Automaton, symbols: Sequence[str]) -> np.ndarray:
    """a's transition table with rows in the given symbol order (the same set of names)."""
    if set(symbols) != set(a.symbols):
        raise SpecError("the automata have different alphabets")
    return a.transitions[[a.symbol_index(x) for x in symbols]]


Labels = tuple[np.ndarray | Sequence[int], np.ndarray | Sequence[int]]


def _labels(a: Automaton, b: Automaton, labels: Labels | None) -> tuple[np.ndarray, np.ndarray] | None:
    if labels is None:
        return None
    la, lb = (np.asarray(v, dtype=np.int64) for v in labels)
    if la.shape != (a.n_states,) or lb.shape != (b.n_states,):
        raise SpecError(f"labels must give one integer per state ({a.n_states} and {b.n_states})")
    return la, lb


def isomorphism(a: Automaton, b: Automaton, *, labels: Labels | None = None) -> np.ndarray | None:
    """A state bijection ``phi`` (phi[q] = b's state for a's state q) showing a ≅ b, or None.

    Symbols are matched by name; with ``labels`` = (labels of a's states, labels of b's states) the bijection must
    also preserve them (Moore machines). Initially connected automata are compared through their canonical BFS
    numbering (linear time); otherwise networkx's VF2 matcher searches for a labelled digraph isomorphism.
    """
    lab = _labels(a, b, labels)
    if a.n_states != b.n_states or set(a.symbols) != set(b.symbols):
        return None
    if (a.initial is None) != (b.initial is None) or (a.accepting is None) != (b.accepting is None):
        return None
    tb = align_symbols(b, a.symbols)
    if a.initial is not None:
        oa, ob = bfs_order(a), bfs_order(b)
        if len(oa) == a.n_states and len(ob) == b.n_states:
            ia = np.empty_like(oa)
            ia[oa] = np.arange(len(oa))
            ib = np.empty_like(ob)
            ib[ob] = np.arange(len(ob))
            same = np.array_equal(ia[a.transitions[:, oa]], ib[tb[:, ob]])
            if a.accepting is not None:
                same = same and np.array_equal(a.accepting[oa], b.accepting[ob])
            if lab is not None:
                same = same and np.array_equal(lab[0][oa], lab[1][ob])
            if not same:
                return None
            phi = np.empty(a.n_states, dtype=STATE_DTYPE)
            phi[oa] = ob
            return phi
    return _vf2(a, b, tb, lab)


def _vf2(a: Automaton, b: Automaton, tb: np.ndarray, lab: tuple[np.ndarray, np.ndarray] | None) -> np.ndarray | None:
    import networkx as nx
    from networkx.algorithms.isomorphism import DiGraphMatcher

    def graph(aut: Automaton, table: np.ndarray, out: np.ndarray | None) -> nx.DiGraph:
        g = nx.DiGraph()
        acc = aut.accepting
        for q in range(aut.n_states):
            g.add_node(
                q,
                init=q == aut.initial,
                acc=bool(acc[q]) if acc is not None else False,
                out=None if out is None else int(out[q]),
            )
        labels: dict[tuple[int, int], set[int]] = {}
        for x in range(table.shape[0]):
            for q, r in enumerate(table[x].tolist()):
                labels.setdefault((q, r), set()).add(x)
        for (q, r), xs in labels.items():
            g.add_edge(q, r, labels=frozenset(xs))
        return g

    matcher = DiGraphMatcher(
        graph(a, a.transitions, None if lab is None else lab[0]),
        graph(b, tb, None if lab is None else lab[1]),
        node_match=lambda u, v: u == v,
        edge_match=lambda e, f: e["labels"] == f["labels"],
    )
    for mapping in matcher.isomorphisms_iter():
        phi = np.empty(a.n_states, dtype=STATE_DTYPE)
        for q, r in mapping.items():
            phi[q] = r
        return phi
    return None


def is_isomorphic(a: Automaton, b: Automaton, *, labels: Labels | None = None) -> bool:
    """Whether a and b are isomorphic (see :func:`isomorphism`)."""
    return isomorphism(a, b, labels=labels) is not None


@dataclass(frozen=True)
class Witness:
    """Why no homomorphism a → b exists. ``kind`` "output": after ``words[0]`` the labels differ; "states": a sends
    ``words[0]`` and ``words[1]`` to one state, b to two different ones. Words are tuples of symbol ids of a."""

    kind: str
    words: tuple[tuple[int, ...], ...]


def homomorphism(
    a: Automaton, b: Automaton, *, labels: Labels | None = None
) -> tuple[np.ndarray | None, Witness | None]:
    """(φ, None) with φ[q] = b's state for each state q of a reachable from a's initial state (−1 elsewhere), a
    homomorphism a → b preserving the initial state (and the labels, if given); or (None, a witness).

    The product of a and b is run breadth first from the initial pair, one numpy step per level (symbols matched
    by name); the first pair with different labels, or the first state of a met with a second state of b, gives
    the witness, whose words are shortest ones reaching those pairs."""
    lab = _labels(a, b, labels)
    if set(a.symbols) != set(b.symbols):
        raise SpecError("the automata have different alphabets")
    if a.initial is None or b.initial is None:
        raise SpecError("a homomorphism of initially connected automata needs initial states")
    ta, tb = a.transitions.astype(np.int64), align_symbols(b, a.symbols).astype(np.int64)
    nb = b.n_states
    codes = [np.array([a.initial * nb + b.initial], dtype=np.int64)]  # pair codes by BFS level
    parents, symbols = [np.array([-1], dtype=np.int64)], [np.array([-1], dtype=np.int64)]
    seen = codes[0]
    phi = np.full(a.n_states, -1, dtype=np.int64)
    first = np.full(a.n_states, -1, dtype=np.int64)  # global index of the first pair met for each state of a
    offset = 0
    while True:
        level = codes[-1]
        pa, pb = level // nb, level % nb
        idx = offset + np.arange(len(level))
        if lab is not None:
            bad = np.flatnonzero(lab[0][pa] != lab[1][pb])
            if len(bad):
                return None, Witness("output", (_path(codes, parents, symbols, int(idx[bad[0]])),))
        # pairs whose a-state is already mapped elsewhere, or met twice in this level (pairs are distinct, so with
        # different b-states)
        order = np.argsort(pa, kind="stable")
        sa, sb, si = pa[order], pb[order], idx[order]
        lead = np.r_[True, sa[1:] != sa[:-1]]
        clash_in = np.flatnonzero(~lead)
        known = phi[pa] >= 0
        clash_old = np.flatnonzero(known & (phi[pa] != pb))
        if len(clash_old):
            i = int(clash_old[0])
            w1 = _path(codes, parents, symbols, int(first[pa[i]]))
            return None, Witness("states", (w1, _path(codes, parents, symbols, int(idx[i]))))
        if len(clash_in):
            j = int(clash_in[0])
            head = j - 1  # sorted by a-state: the previous pair has the same one
            w1 = _path(codes, parents, symbols, int(si[head]))
            return None, Witness("states", (w1, _path(codes, parents, symbols, int(si[j]))))
        phi[sa[lead]] = sb[lead]
        first[sa[lead]] = si[lead]
        succ = (ta[:, pa] * nb + tb[:, pb]).T.ravel()  # pair-major, then symbol
        par = np.repeat(idx, ta.shape[0])
        sym = np.tile(np.arange(ta.shape[0], dtype=np.int64), len(level))
        _, keep = np.unique(succ, return_index=True)
        keep.sort()
        keep = keep[~np.isin(succ[keep], seen)]
        offset += len(level)
        if not len(keep):
            return phi, None
        codes.append(succ[keep])
        parents.append(par[keep])
        symbols.append(sym[keep])
        seen = np.concatenate([seen, succ[keep]])


def _path(codes: list[np.ndarray], parents: list[np.ndarray], symbols: list[np.ndarray], i: int) -> tuple[int, ...]:
    """The word leading to the pair of global BFS index ``i`` (levels concatenated)."""
    par, sym = np.concatenate(parents), np.concatenate(symbols)
    word = []
    while par[i] >= 0:
        word.append(int(sym[i]))
        i = int(par[i])
    return tuple(word[::-1])
