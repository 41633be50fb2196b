"""The syntax of ``regex:PATTERN`` and ``regex[ALPHABET]:PATTERN``, read before any automaton is built.

:func:`parse` turns a pattern into a tree, its alphabet and its *expansion* — the states and moves of the
Thompson NFA that automata-lib would build for it (counted repetitions multiply, ``&`` and ``^`` take products) —
so that a pattern whose NFA is too large (``a{999999999999999999}``, ``((a{100}){100}){100}``) is refused from
its text alone. :func:`canonical` writes the tree back in the part of automata-lib's syntax that it reads
faithfully (every symbol a one-character class, every operator parenthesized, a{0} as the empty word), so that
the library's own quirks — digits of a count, a backslash or the characters of a range joining the alphabet, a
negated class taken over the pattern's symbols — never reach the automaton.

The alphabet is the pattern's literal symbols: characters outside the syntax, escaped characters, and the
members of classes ``[ab]``, ``[a-c]``, ``\\d``, ``\\s``, ``\\w``. Quantifier syntax (``*``, ``+``, ``?``,
``{m}``, ``{m,}``, ``{m,n}``, ``{,n}``) is syntax. ``regex[abc]:PATTERN`` states the alphabet (a class body:
``regex[a-z0-9]:…``); then ``.`` is any of its symbols and ``[^a]``, ``\\D``, ``\\S``, ``\\W`` its complements,
which a pattern without a stated alphabet cannot mean and is refused for. Backreferences, anchors (``$``, a
leading ``^``, ``\\b``), groups with options (``(?…)``) and escapes with no meaning here are refused with one
line; so are an alphabet over :data:`MAX_SYMBOLS` symbols and an expansion over :data:`MAX_NFA_STATES` states or
:data:`MAX_NFA_MOVES` moves.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field

from ..errors import LimitExceededError, SpecError

#: NFA states a pattern may expand to. The subset construction keeps a bitset of every NFA state per DFA state
#: (fsa/determinize.py: 16·n·⌈n/64⌉ bytes for the closures alone, 128 MiB at this size).
MAX_NFA_STATES = 1 << 15
#: NFA moves (symbol and ε) a pattern may expand to (automata-lib holds each as Python objects).
MAX_NFA_MOVES = 1 << 19
#: symbols an alphabet (stated, or the pattern's) or one class may have: each is a column of the DFA's table
MAX_SYMBOLS = 1 << 12
#: groups, operators and repetitions nested inside each other
MAX_DEPTH = 100
#: digits of a repetition count (10^30 copies is beyond any limit already)
MAX_COUNT_DIGITS = 30
#: an expansion is reported exactly up to here, as "more than" beyond
_HUGE = 10**30

DIGITS = frozenset(string.digits)
WHITESPACE = frozenset(" \t\n\r\f\v")
WORD = frozenset(string.ascii_letters + string.digits + "_")
_SHORTHANDS = {"d": DIGITS, "s": WHITESPACE, "w": WORD}
_CONTROL = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v"}
_HEX = {"x": 2, "u": 4, "U": 8}
_ANCHORS = {"b": "a word boundary", "B": "a non-boundary", "A": "an anchor", "Z": "an anchor", "z": "an anchor",
            "G": "an anchor"}  # fmt: skip
#: characters that are syntax outside a class
_SYNTAX = set("*+?{}()[]|&^.$\\")
_INFIX = {"|": "alt", "&": "and", "^": "shuffle"}
_POSTFIX = {"*": (0, None), "+": (1, None), "?": (0, 1)}
_COUNT = re.compile(r"([0-9]*)(,([0-9]*))?")


@dataclass(frozen=True)
class Node:
    """A pattern tree: ``sym`` (a set of symbols: a literal, a class, ``.``), ``eps`` (the empty word, ``()``),
    ``cat``/``alt``/``and``/``shuffle`` (children in order) or ``rep`` (one child, ``lo`` to ``hi`` copies; ``hi``
    None: unbounded)."""

    kind: str
    children: tuple[Node, ...] = ()
    symbols: frozenset[str] = frozenset()
    lo: int = 0
    hi: int | None = None
    depth: int = 1


@dataclass(frozen=True)
class Size:
    """The Thompson NFA automata-lib builds for a tree: states, moves (symbol and ε), accepting states."""

    states: int
    moves: int
    finals: int


@dataclass
class Pattern:
    """A parsed pattern: its tree, its alphabet (sorted), its expansion, and the spec text it came from."""

    tree: Node
    alphabet: tuple[str, ...]
    size: Size
    text: str
    stated: bool = field(default=False)  #: the alphabet was given as regex[…]:


def _show(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:39] + "…")


class _Reader:
    """A cursor over the pattern; every refusal names the pattern and the character position."""

    def __init__(self, text: str, alphabet: frozenset[str] | None, shown: str) -> None:
        self.text, self.i, self.alphabet, self.shown = text, 0, alphabet, shown

    def fail(self, why: str, at: int | None = None) -> SpecError:
        at = self.i if at is None else at
        where = f" (at character {at + 1})" if at < len(self.text) else " (at the end)"
        return SpecError(f"bad regex {self.shown}: {why}{where}")

    def peek(self) -> str | None:
        return self.text[self.i] if self.i < len(self.text) else None

    def complement(self, members: frozenset[str], what: str, at: int) -> frozenset[str]:
        """The stated alphabet minus ``members`` (``.``, ``[^…]``, ``\\D``…): refused without a stated alphabet."""
        if self.alphabet is None:
            raise self.fail(
                f"{what} means symbols outside the pattern, so it needs the alphabet stated: write "
                f"regex[abc]:PATTERN (the alphabet's symbols inside the brackets)",
                at,
            )
        return self.alphabet - members

    # ------------------------------------------------------------------ symbols
    def escape(self, in_class: bool) -> frozenset[str]:
        """The symbols of the escape at the cursor (the backslash), advancing past it."""
        start = self.i
        self.i += 1
        c = self.peek()
        if c is None:
            raise self.fail("a backslash ends the pattern", start)
        self.i += 1
        if c in _SHORTHANDS:
            return _SHORTHANDS[c]
        if c in "DSW":
            if in_class:
                raise self.fail(f"\\{c} is not supported inside a class", start)
            return self.complement(_SHORTHANDS[c.lower()], f"\\{c}", start)
        if c in _CONTROL:
            return frozenset(_CONTROL[c])
        if c in _HEX:
            digits = self.text[self.i : self.i + _HEX[c]]
            if len(digits) != _HEX[c] or not all(d in string.hexdigits for d in digits):
                raise self.fail(f"\\{c} needs {_HEX[c]} hexadecimal digits", start)
            self.i += _HEX[c]
            return frozenset(chr(int(digits, 16)))
        if c.isdigit():
            raise self.fail(
                f"\\{c} is a backreference, which no finite automaton can match (regular languages have none)", start
            )
        if c in _ANCHORS:
            raise self.fail(f"\\{c} ({_ANCHORS[c]}) is not supported: a pattern always matches whole words", start)
        if c.isalnum():
            raise self.fail(f"unknown escape \\{c}", start)
        return frozenset(c)  # an escaped character stands for itself: \* \\ \$ \- \] …

    def class_body(self) -> tuple[frozenset[str], bool]:
        """The members of a class whose ``[`` is behind the cursor (ranges, escapes; ``]`` first is a member),
        up to and past its ``]``; and whether it was negated (``[^…]``)."""
        open_at = self.i - 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        members: set[str] = set()
        first = True
        while True:
            c = self.peek()
            if c is None:
                raise self.fail("a class '[' is never closed", open_at)
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            lo = self._class_char()
            if self.peek() == "-" and self.i + 1 < len(self.text) and self.text[self.i + 1] != "]":
                at = self.i
                self.i += 1
                hi = self._class_char()
                if len(lo) != 1 or len(hi) != 1:
                    raise self.fail("a range's ends must be single characters", at)
                a, b = ord(next(iter(lo))), ord(next(iter(hi)))
                if a > b:
                    raise self.fail(f"the range {chr(a)!r}-{chr(b)!r} is reversed", at)
                if b - a + 1 > MAX_SYMBOLS:
                    raise LimitExceededError(
                        f"regex {self.shown}: the range {chr(a)!r}-{chr(b)!r} has {b - a + 1:,} symbols, over the "
                        f"limit of {MAX_SYMBOLS:,} (each symbol is a column of the transition table)"
                    )
                members.update(chr(k) for k in range(a, b + 1))
            else:
                members |= lo
            if len(members) > MAX_SYMBOLS:
                raise LimitExceededError(
                    f"regex {self.shown}: a class of more than {MAX_SYMBOLS:,} symbols, over the limit "
                    "(each symbol is a column of the transition table)"
                )
        if not members:
            raise self.fail("an empty class", open_at)
        return frozenset(members), negated

    def _class_char(self) -> frozenset[str]:
        c = self.peek()
        if c == "\\":
            return self.escape(in_class=True)
        self.i += 1
        return frozenset(c)


def _size(node: Node) -> Size:
    """The states, moves and accepting states of automata-lib's Thompson NFA of ``node`` (its regex builder:
    a symbol or class 2 states; union +1 state and 2 ε; concatenation an ε per accepting state of the left;
    a repetition of at most n copies n times the part; ``&`` and ``^`` products)."""
    k = node.kind
    if k == "sym":
        return Size(2, len(node.symbols), 1)
    if k == "eps":
        return Size(1, 0, 1)
    parts = [_size(c) for c in node.children]
    if k == "cat":
        states, moves = sum(p.states for p in parts), sum(p.moves for p in parts)
        return _clip(Size(states, moves + sum(p.finals for p in parts[:-1]), parts[-1].finals))
    if k == "alt":
        n = len(parts) - 1
        return _clip(Size(sum(p.states for p in parts) + n, sum(p.moves for p in parts) + 2 * n,
                          sum(p.finals for p in parts)))  # fmt: skip
    if k in ("and", "shuffle"):
        a, b = parts
        moves = a.moves * b.states + a.states * b.moves + (a.moves * b.moves if k == "and" else 0)
        return _clip(Size(a.states * b.states, moves, a.finals * b.finals))
    (a,) = parts
    n = max(1, node.hi if node.hi is not None else node.lo)
    loop = a.finals if node.hi is None else 0
    return _clip(Size(n * a.states + 1, n * a.moves + 1 + (n - 1) * a.finals + loop, n * a.finals + 1))


def _clip(s: Size) -> Size:
    return Size(min(s.states, _HUGE), min(s.moves, _HUGE), min(s.finals, _HUGE))


def _count(n: int) -> str:
    return f"{n:,}" if n < _HUGE else "more than 10^30"


def _node(kind: str, children: list[Node], **kw) -> Node:
    depth = 1 + max((c.depth for c in children), default=0)
    return Node(kind, tuple(children), depth=depth, **kw)


class _Parser(_Reader):
    """Recursive descent with automata-lib's precedences: ``|``, ``&``, ``^`` (left to right, all equal) below
    concatenation below the postfix operators."""

    def parse(self) -> Node:
        tree = self.infix(0)
        if self.peek() is not None:  # only a ')' stops infix() early
            raise self.fail("an unbalanced ')'")
        return tree

    def infix(self, nesting: int) -> Node:
        if nesting > MAX_DEPTH:
            raise self.fail(f"groups nested deeper than {MAX_DEPTH}")
        left = self.concat(nesting)
        while self.peek() in _INFIX:
            kind = _INFIX[self.peek()]
            self.i += 1
            right = self.concat(nesting)
            if kind == left.kind and kind == "alt":
                left = _node("alt", [*left.children, right])
            else:
                left = _node(kind, [left, right])
            self._check_depth(left)
        return left

    def concat(self, nesting: int) -> Node:
        start = self.i
        items: list[Node] = []
        while (c := self.peek()) is not None and c not in _INFIX and c != ")":
            items.append(self.postfix(nesting))
        if len(items) > 1:
            node = _node("cat", items)
            self._check_depth(node)
            return node
        if not items:
            c = self.peek()
            if c == "^":
                raise self.fail("'^' is the shuffle operator (a^b); a pattern matches whole words, it has no anchors")
            if c in _INFIX or c == ")" or (c is None and start > 0):
                raise self.fail("an empty alternative or operand (write () for the empty word)")
            raise self.fail("the pattern is empty")
        return items[0]

    def postfix(self, nesting: int) -> Node:
        node = self.atom(nesting)
        while (c := self.peek()) is not None and (c in _POSTFIX or c == "{"):
            if c == "{":
                lo, hi = self.count()
            else:
                self.i += 1
                lo, hi = _POSTFIX[c]
            node = _node("eps" if hi == 0 else "rep", [node], lo=lo, hi=hi)  # a{0}: the empty word over a
            self._check_depth(node)
        return node

    def count(self) -> tuple[int, int | None]:
        """``{m}``, ``{m,}``, ``{m,n}`` or ``{,n}`` at the cursor."""
        start = self.i
        close = self.text.find("}", start)
        body = self.text[start + 1 : close] if close > 0 else ""
        form = _COUNT.fullmatch(body)
        if close < 0 or form is None or not (form[1] or form[3]):
            raise self.fail("'{' starts a count {m}, {m,}, {m,n} or {,n} (write \\{ for the symbol)", start)
        for part in (form[1], form[3]):
            if part and len(part) > MAX_COUNT_DIGITS:
                raise LimitExceededError(
                    f"regex {self.shown}: the count {part[:12]}… has {len(part):,} digits, over the limit of "
                    f"{MAX_COUNT_DIGITS} (its expansion is beyond any limit)"
                )
        lo = int(form[1]) if form[1] else 0
        hi = lo if form[2] is None else (int(form[3]) if form[3] else None)
        if hi is not None and hi < lo:
            raise self.fail(f"the count {{{body}}} has its upper bound below its lower bound", start)
        self.i = close + 1
        return lo, hi

    def atom(self, nesting: int) -> Node:
        start = self.i
        c = self.peek()
        self.i += 1
        if c == "(":
            if self.peek() == "?":
                raise self.fail("'(?' (a group with options or a lookaround) is not supported", start)
            if self.peek() == ")":
                self.i += 1
                return Node("eps")
            inner = self.infix(nesting + 1)
            if self.peek() != ")":
                raise self.fail("a group '(' is never closed", start)
            self.i += 1
            return inner
        if c == "[":
            members, negated = self.class_body()
            if negated:
                members = self.complement(members, "a negated class [^…]", start)
            return Node("sym", symbols=self._known(members, start))
        if c == ".":
            return Node("sym", symbols=self.complement(frozenset(), "'.'", start))
        if c == "\\":
            self.i = start
            return Node("sym", symbols=self._known(self.escape(in_class=False), start))
        if c == "$":
            raise self.fail("'$' would be an anchor, and a pattern matches whole words (write \\$ for the symbol)",
                            start)  # fmt: skip
        if c in _POSTFIX or c == "{":
            raise self.fail(f"{c!r} has nothing to repeat", start)
        if c == "]" or c == "}":
            raise self.fail(f"an unbalanced {c!r} (write \\{c} for the symbol)", start)
        return Node("sym", symbols=self._known(frozenset(c), start))

    def _known(self, members: frozenset[str], at: int) -> frozenset[str]:
        """Symbols of the pattern, checked against a stated alphabet."""
        if self.alphabet is not None and not members <= self.alphabet:
            missing = sorted(members - self.alphabet)
            raise self.fail(f"the symbol {missing[0]!r} is not in the stated alphabet", at)
        return members

    def _check_depth(self, node: Node) -> None:
        if node.depth > MAX_DEPTH:
            raise self.fail(f"operators nested deeper than {MAX_DEPTH}")


def split_spec(spec: str) -> tuple[frozenset[str] | None, str]:
    """``regex:PATTERN`` → (None, PATTERN); ``regex[ABC]:PATTERN`` → (the stated alphabet, PATTERN)."""
    if spec.startswith("regex:"):
        return None, spec[len("regex:") :]
    if not spec.startswith("regex["):
        raise SpecError(f"not a regex spec: {_show(spec)}")
    reader = _Reader(spec, None, _show(spec))
    reader.i = len("regex[")
    members, negated = reader.class_body()
    if negated:
        raise reader.fail("a stated alphabet lists its symbols; it cannot be negated", len("regex["))
    if reader.peek() != ":":
        raise reader.fail("the alphabet's ']' must be followed by ':' and the pattern, as in regex[abc]:a*b")
    return members, spec[reader.i + 1 :]


def parse(spec: str) -> Pattern:
    """The tree, alphabet and expansion of a ``regex:`` or ``regex[…]:`` spec string; SpecError for what is not a
    pattern here, LimitExceededError for an alphabet or expansion beyond the limits (nothing is built)."""
    stated, text = split_spec(spec)
    parser = _Parser(text, stated, _show(text))
    if stated is not None and len(stated) > MAX_SYMBOLS:
        raise LimitExceededError(f"regex {_show(spec)}: {len(stated):,} symbols, over the limit of {MAX_SYMBOLS:,}")
    if not text:
        raise SpecError(f"bad regex {_show(text)}: the pattern is empty")
    tree = parser.parse()
    alphabet = sorted(stated) if stated is not None else sorted(_symbols(tree))
    if not alphabet:
        raise SpecError(f"bad regex {_show(text)}: the pattern has no symbols")
    if len(alphabet) > MAX_SYMBOLS:
        raise LimitExceededError(
            f"regex {_show(text)}: its alphabet has {len(alphabet):,} symbols, over the limit of {MAX_SYMBOLS:,}"
        )
    size = _size(tree)
    if size.states > MAX_NFA_STATES or size.moves > MAX_NFA_MOVES:
        raise LimitExceededError(
            f"regex {_show(text)} expands to an NFA of {_count(size.states)} states and {_count(size.moves)} moves "
            f"(counted repetitions and & or ^ multiply), over the limit of {MAX_NFA_STATES:,} states and "
            f"{MAX_NFA_MOVES:,} moves"
        )
    return Pattern(tree, tuple(alphabet), size, spec, stated is not None)


def _symbols(node: Node) -> set[str]:
    out = set(node.symbols)
    for c in node.children:
        out |= _symbols(c)
    return out


def _in_class(c: str) -> str:
    return "\\" + c if c in "\\^" else c


def canonical(node: Node, alphabet: tuple[str, ...]) -> str:
    """``node`` in automata-lib's syntax, read by it as meant: a symbol set as a class of its members (``]``
    apart, as an escaped literal; ``-`` last, so that it is no range), the empty set as x & xx, every operator
    parenthesized."""
    k = node.kind
    if k == "sym":
        members = sorted(node.symbols - {"]", "-"}) + (["-"] if "-" in node.symbols else [])
        parts = (["[" + "".join(_in_class(c) for c in members) + "]"] if members else []) + (
            ["\\]"] if "]" in node.symbols else []
        )
        if not parts:
            x = canonical(Node("sym", symbols=frozenset(alphabet[:1])), alphabet)
            return f"({x}&({x}{x}))"
        return parts[0] if len(parts) == 1 else f"({parts[0]}|{parts[1]})"
    if k == "eps":
        return "()"
    inner = [canonical(c, alphabet) for c in node.children]
    if k == "cat":
        return "(" + "".join(inner) + ")"
    if k in ("alt", "and", "shuffle"):
        op = {"alt": "|", "and": "&", "shuffle": "^"}[k]
        return "(" + op.join(inner) + ")"
    count = f"{{{node.lo}}}" if node.hi == node.lo else f"{{{node.lo},{'' if node.hi is None else node.hi}}}"
    return f"({inner[0]}){count}"
