"""Builtin automata other than group word problems: counters, the flip-flop, T_n, and the papers' regular tasks.

Each builder returns a validated Automaton; the "Builtin catalogue" of docs/guide/automata.md documents states,
symbols and initial state of each. Task automata follow Delétang et al. (2023) as used by the negative-eigenvalues
paper (App. E.1).
"""

from __future__ import annotations

import numpy as np

from ..automaton import STATE_DTYPE, Automaton
from ..errors import LimitExceededError, SpecError
from ..product import product
from .cayley import DEFAULT_STATE_LIMIT
from .word_problems import MAX_ALPHABET


def _need(value: int, low: int, what: str) -> None:
    if value < low:
        raise SpecError(f"{what} needs a parameter >= {low}, got {value}")


def _states_limit(n: int, what: str, limit: int = DEFAULT_STATE_LIMIT) -> None:
    if n > limit:
        raise LimitExceededError(f"{what} has {n} states, over the limit of {limit}")


def parity() -> Automaton:
    """Parity of the number of ones: states even/odd, symbols "0"/"1", initial even, accepting odd (≅ Z2)."""
    table = np.array([[0, 1], [1, 0]], dtype=STATE_DTYPE)
    return Automaton(
        table,
        states=["even", "odd"],
        symbols=["0", "1"],
        initial="even",
        accepting=["odd"],
        name="parity",
        action=table,
    )


def cyclic(m: int, symbols: str = "all") -> Automaton:
    """Counter modulo m (word problem of C_m): states "0".."m-1", initial "0".

    ``symbols="all"``: symbols "0".."m-1", symbol x adds x; ``"gen"``: the single symbol "+1". The action is the
    natural (regular) one of C_m on m points."""
    _need(m, 1, "Z<m>")
    _states_limit(m, f"Z{m}")
    q = np.arange(m)
    if symbols == "all":
        if m > MAX_ALPHABET:
            raise LimitExceededError(
                f"Z{m} has {m} elements, over the limit of {MAX_ALPHABET} symbols for an all-elements alphabet "
                f"(use Z{m}:gen)"
            )
        table = q[None, :] + q[:, None]
        table[table >= m] -= m  # (q + x) mod m without a division
        names = [str(x) for x in range(m)]
    elif symbols == "gen":
        table = ((q + 1) % m)[None, :]
        names = ["+1"]
    else:
        raise SpecError(f"unknown symbol set {symbols!r} for Z<m> (choose all, gen)")
    table = table.astype(STATE_DTYPE)
    suffix = "" if symbols == "all" else ":gen"
    return Automaton(table, states=m, symbols=names, initial=0, name=f"Z{m}{suffix}", action=table)


def flipflop(n: int | None = None) -> Automaton:
    """The flip-flop: states "0"/"1", symbols "set" (go to 1), "reset" (go to 0), "read" (stay); initial "0".

    With ``n``: the n-write variant: states "0".."n-1", symbols "w0".."w{n-1}" (write i: go to i) and "read"."""
    if n is None:
        table = [[1, 1], [0, 0], [0, 1]]
        return Automaton(table, states=["0", "1"], symbols=["set", "reset", "read"], initial="0", name="flipflop")
    _need(n, 1, "flipflop:<n>")
    _states_limit(n, f"flipflop:{n}")
    if n + 1 > MAX_ALPHABET:
        raise LimitExceededError(f"flipflop:{n} has {n + 1} symbols, over the limit of {MAX_ALPHABET}")
    table = np.concatenate([np.repeat(np.arange(n)[:, None], n, axis=1), np.arange(n)[None, :]])
    return Automaton(table, states=n, symbols=[f"w{i}" for i in range(n)] + ["read"], initial=0, name=f"flipflop:{n}")


def flipflop_monoid() -> Automaton:
    """The flip-flop monoid's word problem (Brandoit et al.'s FF and DFF5): the class of a prefix is its running
    composite. States "empty" (initial: nothing written yet, the identity), "0" (the last write was reset) and "1"
    (set); symbols "read" (the identity), "reset" (go to 0) and "set" (go to 1), in the authors' order."""
    table = [[0, 1, 2], [1, 1, 1], [2, 2, 2]]
    return Automaton(
        table, states=["empty", "0", "1"], symbols=["read", "reset", "set"], initial="empty", name="flipflop_monoid"
    )


def full_transformation(n: int) -> Automaton:
    """T_n's action on n points with the standard generators: states "0".."n-1", initial "0", symbols "cycle"
    (i ↦ i+1 mod n), "swap" (the transposition (0 1)) and "collapse" (1 ↦ 0, other points fixed)."""
    _need(n, 2, "T<n>")
    _states_limit(n, f"T{n}")
    q = np.arange(n)
    swap = q.copy()
    swap[[0, 1]] = [1, 0]
    collapse = q.copy()
    collapse[1] = 0
    table = np.stack([(q + 1) % n, swap, collapse])
    return Automaton(table, states=n, symbols=["cycle", "swap", "collapse"], initial=0, name=f"T{n}")


def modular_arithmetic(m: int = 5) -> Automaton:
    """Modular arithmetic without brackets (Delétang et al.): the running value mod m of ``d op d op … d``.

    Symbols: the digits "0".."m-1", "+", "-", "*", "=". Operands are single digits; ``*`` binds tighter than
    ``+``/``-``, which associate to the left (Python's evaluation order). States:

    - ``start`` (initial; expects an operand) and ``err`` (absorbing: a malformed prefix, or anything after ``=``);
    - ``s{s}p{p}`` after an operand: completed terms sum to s, the current term (with its sign) is p; value s+p;
    - ``s{s}+`` / ``s{s}-`` after ``+`` / ``-`` (s: the sum so far); ``s{s}p{p}*`` after ``*``;
    - ``={v}`` after ``=``: the final value v.

    2m² + 3m + 2 states, all reachable. The readout of a state is its value (:func:`modular_value`).
    """
    _need(m, 1, "modarith:<m>")
    n_states = 2 * m * m + 3 * m + 2
    _states_limit(n_states, f"modarith:{m}")
    if m + 4 > MAX_ALPHABET:
        raise LimitExceededError(f"modarith:{m} has {m + 4} symbols, over the limit of {MAX_ALPHABET}")
    names = ["start", "err"]
    names += [f"s{s}p{p}" for s in range(m) for p in range(m)]
    names += [f"s{s}+" for s in range(m)] + [f"s{s}-" for s in range(m)]
    names += [f"s{s}p{p}*" for s in range(m) for p in range(m)]
    names += [f"={v}" for v in range(m)]
    START, ERR = 0, 1
    OPERAND = 2  # s*m + p
    PLUS, MINUS = OPERAND + m * m, OPERAND + m * m + m
    TIMES = MINUS + m  # s*m + p
    EQ = TIMES + m * m
    symbols = [str(d) for d in range(m)] + ["+", "-", "*", "="]
    table = np.full((len(symbols), n_states), ERR, dtype=STATE_DTYPE)
    s, p = np.divmod(np.arange(m * m), m)
    d = np.arange(m)
    # operands
    table[:m, START] = OPERAND + d
    for digit in range(m):
        table[digit, PLUS + d] = OPERAND + d * m + digit
        table[digit, MINUS + d] = OPERAND + d * m + (-digit) % m
        table[digit, TIMES + s * m + p] = OPERAND + s * m + (p * digit) % m
    # operators after an operand
    total = (s + p) % m
    table[m, OPERAND + s * m + p] = PLUS + total
    table[m + 1, OPERAND + s * m + p] = MINUS + total
    table[m + 2, OPERAND + s * m + p] = TIMES + s * m + p
    table[m + 3, OPERAND + s * m + p] = EQ + total
    return Automaton(table, states=names, symbols=symbols, initial=START, name=f"modarith:{m}")


def modular_value(state_name: str, m: int) -> int | None:
    """The value a ``modarith:<m>`` state reports (None for start, err and the operator states)."""
    if state_name.startswith("="):
        return int(state_name[1:])
    if state_name.startswith("s") and state_name[-1].isdigit():
        s, p = state_name[1:].split("p")
        return (int(s) + int(p)) % m
    return None


def cycle_navigation(n: int = 5) -> Automaton:
    """Cycle navigation (Delétang et al.): position on a cycle of n points (default 5). States "0".."n-1",
    initial "0"; symbols "forward" (+1), "backward" (-1), "stay"."""
    _need(n, 1, "cycle_nav:<n>")
    _states_limit(n, f"cycle_nav:{n}")
    q = np.arange(n)
    table = np.stack([(q + 1) % n, (q - 1) % n, q])
    name = "cycle_nav" if n == 5 else f"cycle_nav:{n}"
    return Automaton(table, states=n, symbols=["forward", "backward", "stay"], initial=0, name=name, action=table)


def even_pairs() -> Automaton:
    """Even pairs (Delétang et al.): words over {a, b} whose number of "ab" plus "ba" factors is even, i.e. whose
    first and last letters agree. States "empty" (initial), "aa", "ab", "ba", "bb" (first and last letter);
    accepting: empty, aa, bb."""
    # states: 0 empty, 1 aa, 2 ab, 3 ba, 4 bb (first letter, last letter)
    table = [
        [1, 1, 1, 3, 3],  # a: empty→aa, aa→aa, ab→aa, ba→ba, bb→ba
        [4, 2, 2, 4, 4],  # b: empty→bb, aa→ab, ab→ab, ba→bb, bb→bb
    ]
    return Automaton(
        table,
        states=["empty", "aa", "ab", "ba", "bb"],
        symbols=["a", "b"],
        initial="empty",
        accepting=["empty", "aa", "bb"],
        name="even_pairs",
    )


def gridworld(n: int = 4) -> Automaton:
    """An agent on an n×n grid (default 4): states "(r,c)" (row r from the top, column c from the left), initial
    "(0,0)"; symbols N, S, E, W move one cell, clipped at the walls. Built as the direct product of a row counter
    and a column counter (``factors``)."""
    _need(n, 1, "gridworld:<n>")
    _states_limit(n * n, f"gridworld:{n}")
    q = np.arange(n)
    up, down, stay = np.maximum(q - 1, 0), np.minimum(q + 1, n - 1), q
    rows = Automaton(np.stack([up, down, stay, stay]), states=n, symbols=list("NSEW"), initial=0, name="row")
    cols = Automaton(np.stack([stay, stay, down, up]), states=n, symbols=list("NSEW"), initial=0, name="column")
    grid = product(rows, cols)
    return grid.replace(name="gridworld" if n == 4 else f"gridworld:{n}")
