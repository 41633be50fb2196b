"""A JSON spec's sizes counted from its text, before the text is parsed.

``json.loads`` of a spec builds every list at once — a Python object per transition — so a spec that declares
6,000,000 states over two symbols would spend a gigabyte before ``Automaton.from_spec`` could count its 12,000,000
transitions. :func:`check_spec_text` walks the bytes of the top-level object member by member without building
the large values (nor even the text: the bytes as read are scanned, so a refusal costs the file once): a flat
array is measured by the C methods of bytes (its extent is the first ``]`` outside strings, found by the parity of
the quotes before it; its size the commas, or the quotes of its strings), short values are decoded and read with
``raw_decode``, names with escapes one by one with ``scanstring`` (each string built and dropped).
The counts are checked against the limit as each member is met, so an oversized spec is refused before anything
of its size exists. A spec that passes is parsed by ``json.loads`` as before. Where the text is not what a spec
looks like (a syntax error, nested arrays, an unclosed array), a small text is left to ``json.loads`` to report
precisely; a text over :data:`PARSE_UNCHECKED_BYTES` is refused by the scan, naming the line and column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from json.decoder import scanstring

from .errors import LimitExceededError, SpecError

#: Largest transition table a JSON spec may declare (states × symbols; 80 MB of int64 entries), checked before
#: anything of that size is allocated.
MAX_SPEC_TRANSITIONS = 10_000_000


def check_spec_size(n_states: int, n_symbols: int) -> None:
    """LimitExceededError when a spec declares more than MAX_SPEC_TRANSITIONS transitions (states × symbols)."""
    if n_states * n_symbols > MAX_SPEC_TRANSITIONS:
        raise LimitExceededError(
            f"the spec declares {n_states:,} states × {n_symbols:,} symbols = {n_states * n_symbols:,} transitions, "
            f"over the limit of {MAX_SPEC_TRANSITIONS:,}"
        )

#: the largest text json.loads parses without the counts (its objects stay below about 100 MB whatever it holds)
PARSE_UNCHECKED_BYTES = 4 << 20

_WS = re.compile(rb"[ \t\n\r]*")
#: a scalar other than a string: a number, true, false or null
_SCALAR = re.compile(rb"[-+0-9.eE]+|true|false|null")
#: top-level keys whose value is a list of names (or a count, for states and symbols)
_NAME_LISTS = ("states", "symbols", "accepting")


class _Stop(Exception):
    """The scan met something that is not a spec's shape, at ``at``."""

    def __init__(self, why: str, at: int) -> None:
        super().__init__(why)
        self.why, self.at = why, at


def check_spec_text(text: bytes | bytearray, allowed_keys: set[str]) -> None:
    """Refuse (LimitExceededError, SpecError) a spec text whose counts exceed MAX_SPEC_TRANSITIONS — states ×
    symbols (:func:`check_spec_size`), a row of ``transitions`` times their number, any list of names — or
    that has a key outside ``allowed_keys``, before it is parsed."""
    try:
        _Scan(text, allowed_keys).run()
    except _Stop as stop:
        if len(text) <= PARSE_UNCHECKED_BYTES:
            return  # json.loads says precisely what is wrong, at a bounded cost
        line = text.count(b"\n", 0, stop.at) + 1
        column = stop.at - (text.rfind(b"\n", 0, stop.at) + 1) + 1
        raise SpecError(f"malformed JSON spec: {stop.why} at line {line} column {column}") from None


class _Scan:
    def __init__(self, text: bytes | bytearray, allowed: set[str]) -> None:
        self.text, self.allowed = text, allowed
        self.counts: dict[str, int] = {}
        self.rows, self.longest_row = 0, 0

    def run(self) -> None:
        end = self.object(self.ws(0), self.member)
        if self.ws(end) != len(self.text):
            raise _Stop("text after the spec's object", self.ws(end))

    # ------------------------------------------------------------------ the walk
    def ws(self, i: int) -> int:
        return _WS.match(self.text, i).end()  # type: ignore[union-attr]

    def expect(self, i: int, char: bytes) -> int:
        i = self.ws(i)
        if not self.text.startswith(char, i):
            raise _Stop(f"expected {char.decode()!r}", i)
        return i + 1

    def string(self, i: int) -> tuple[str, int]:
        """The string whose opening quote is before ``i``, and the index after its closing quote."""
        end = i - 1
        while True:
            end = self.text.find(b'"', end + 1)
            if end < 0:
                raise _Stop("a string that is never closed", i)
            if not _escaped(self.text, end):
                break
        try:
            value, after = scanstring(bytes(self.text[i - 1 : end + 1]).decode("utf-8"), 1)
        except (ValueError, UnicodeDecodeError):
            raise _Stop("a malformed string", i) from None
        return value, end + 1

    def scalar(self, i: int) -> tuple[object, int]:
        """A number, true, false, null or string at ``i`` (decoded), and the index after it."""
        if self.text.startswith(b'"', i):
            return self.string(i + 1)
        match = _SCALAR.match(self.text, i)
        if match is None:
            raise _Stop("expected a name or a number", i)
        try:
            return json.loads(match.group()), match.end()
        except ValueError:
            raise _Stop("a malformed value", i) from None

    def object(self, i: int, visit: Callable[[str, int], int]) -> int:
        """Call ``visit(key, index of its value) -> index after the value`` for each member of the object at
        ``i``; the index after its ``}``."""
        i = self.ws(self.expect(i, b"{"))
        if self.text.startswith(b"}", i):
            return i + 1
        while True:
            key, i = self.string(self.expect(i, b'"'))
            i = self.ws(self.expect(i, b":"))
            i = self.ws(visit(key, i))
            if self.text.startswith(b"}", i):
                return i + 1
            i = self.expect(i, b",")

    def array(self, i: int) -> tuple[int, int]:
        """(index after the ``]``, number of elements — at least) of a flat array of numbers or names at ``i``,
        counted without building it."""
        text = self.text
        if not text.startswith(b"[", i):
            raise _Stop("expected a list", i)
        j = i + 1
        while True:
            end = text.find(b"]", j)
            if end < 0:
                raise _Stop("a list that is never closed", i)
            if text.find(b"\\", i, end) >= 0:  # an escape (an escaped quote would upset the count of quotes)
                return self.strings(i)
            quotes = text.count(b'"', i, end)
            if quotes % 2 == 0:
                break
            j = end + 1  # that ']' is inside a string
        if quotes == 0:
            if text.find(b"[", i + 1, end) >= 0 or text.find(b"{", i + 1, end) >= 0:
                raise _Stop("a list inside a list", i)
            return end + 1, text.count(b",", i, end) + (1 if self.ws(i + 1) < end else 0)
        return end + 1, quotes // 2  # the names; numbers among them are not counted (a lower bound)

    def strings(self, i: int) -> tuple[int, int]:
        """The same for an array whose strings have escapes: element by element, each dropped once read."""
        text, n = self.text, 0
        i = self.ws(i + 1)
        if text.startswith(b"]", i):
            return i + 1, 0
        while True:
            _, i = self.scalar(i)
            n += 1
            i = self.ws(i)
            if text.startswith(b"]", i):
                return i + 1, n
            i = self.ws(self.expect(i, b","))

    # ------------------------------------------------------------------ the members
    def member(self, key: str, at: int) -> int:
        if key not in self.allowed:
            raise SpecError(f"unknown spec key {key!r} (allowed: {', '.join(sorted(self.allowed))})")
        if key == "transitions":
            return self.object(at, self.row)
        if key in _NAME_LISTS and self.text.startswith(b"[", at):
            end, n = self.array(at)
            if n > _max_transitions():  # a list this long would be built by json.loads, whatever else the spec says
                raise LimitExceededError(f"the spec's {key!r} names {n:,}, over the limit of {_max_transitions():,}")
            self.counts[key] = n
            self.check()
            return end
        value, end = self.scalar(at)
        if key in ("states", "symbols") and type(value) is int:
            self.counts[key] = value
            self.check()
        return end

    def row(self, key: str, at: int) -> int:
        end, n = self.array(at)
        self.rows, self.longest_row = self.rows + 1, max(self.longest_row, n)
        self.check()
        return end

    def check(self) -> None:
        """states × symbols (as declared, or as the rows of ``transitions`` show) within the limit."""
        n, k = self.counts.get("states"), self.counts.get("symbols")
        if self.rows:
            k, n = max(k or 0, self.rows), max(n or 0, self.longest_row)
        if n is not None and k is not None:
            check_spec_size(n, k)


def _escaped(text: bytes | bytearray, i: int) -> bool:
    """Whether the quote at ``i`` is escaped: an odd run of backslashes before it."""
    j = i
    while j > 0 and text[j - 1] == 0x5C:
        j -= 1
    return (i - j) % 2 == 1


def _max_transitions() -> int:
    """The limit as it is now (a test lowers it)."""
    return MAX_SPEC_TRANSITIONS
