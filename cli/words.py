"""The line protocol of `fsa2rnn run`, in batches: complete stdin lines (bytes) → symbol ids, states → output lines.

Each input line is a JSON array of symbol names; an empty (or blank) line is the empty word. :func:`parse_lines`
turns a batch of lines into one flat id array and the length of each word. Its fast path reads the bytes with
numpy: it accepts the batch only when every line is ``[ "name", … ]`` (JSON whitespace anywhere, no backslash
escapes) and every string is, byte for byte, a symbol name that needs no escaping; anything else — numbers,
escapes, nested values, an unknown symbol, a syntax error — goes through :func:`json.loads` line by line, which
gives the same ids or the error naming the line. :func:`format_states` writes the lines ``json.dumps`` would.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

import numpy as np

from ..fsa.errors import SpecError, UnknownSymbolError

_QUOTE, _NEWLINE = ord('"'), ord("\n")
_WHITESPACE = (ord(" "), ord("\t"), ord("\r"))


#: character classes of the skeleton of a batch (strings replaced by their opening quote, whitespace dropped)
_CLASS = np.full(256, 5, dtype=np.uint8)  # 5: anything else
for _i, _c in enumerate('\n["],'):
    _CLASS[ord(_c)] = _i
#: allowed[prev class · 6 + next class]: the lines ([ (string (, string)*)? ] | nothing) newline — a DFA whose state
#: is the previous character
_ALLOWED = np.zeros(36, dtype=bool)
for _prev, _next in ("\n[", "\n\n", '["', "[]", '",', '"]', ',"', "]\n"):
    _ALLOWED[_CLASS[ord(_prev)] * 6 + _CLASS[ord(_next)]] = True


#: the 8-byte masks of the first l bytes of a word, l = 0..8 (native byte order, like the words they mask)
_MASKS = np.array([(np.arange(8) < n).astype(np.uint8).view(np.uint64)[0] * 255 for n in range(9)], dtype=np.uint64)


class _Bytes:
    """A batch of bytes read as unaligned 8-byte words: the bytes of many short ranges as a few integer arrays."""

    def __init__(self, data: bytes, pad: int) -> None:
        self.array = np.frombuffer(data, dtype=np.uint8)
        padded = np.concatenate([self.array, np.zeros(8 * pad + 8, dtype=np.uint8)])
        self.eight = np.ndarray((self.array.size + 8 * pad,), dtype=np.uint64, buffer=padded, strides=(1,))

    def words(self, starts: np.ndarray, lengths: np.ndarray, count: int) -> list[np.ndarray]:
        """``count`` words per range [starts[i], starts[i] + lengths[i]) (at most 8·count bytes), zero past each
        range's end."""
        per_length = np.arange(8 * count + 1)
        return [
            self.eight[starts + 8 * j] & _MASKS[np.minimum(np.maximum(per_length - 8 * j, 0), 8)][lengths]
            for j in range(count)
        ]


class SymbolCodec:
    """Symbol names as rows of 8-byte words, for matching the strings of a batch without creating Python objects.

    Names that JSON writes with escapes (a quote, a backslash, a control character) are left out: a line that
    uses them takes the json path.
    """

    def __init__(self, symbols: Sequence[str]) -> None:
        self.ids = {s: i for i, s in enumerate(symbols)}
        raw = {i: s.encode() for i, s in enumerate(symbols) if not any(c in s for c in '"\\') and s.isprintable()}
        self.width = max((len(r) for r in raw.values()), default=0)
        self.words = -(-self.width // 8)
        table = np.zeros((len(raw), self.words * 8), dtype=np.uint8)
        for row, r in enumerate(raw.values()):
            table[row, : len(r)] = np.frombuffer(r, dtype=np.uint8)
        self.symbol_ids = np.fromiter(raw.keys(), dtype=np.int64, count=len(raw))
        self.lengths = np.array([len(r) for r in raw.values()], dtype=np.int64)
        self.table = [np.ascontiguousarray(w) for w in table.view(np.uint64).reshape(len(raw), self.words).T]
        # a direct-mapped hash table with one name per slot (the first size that separates them all)
        keys = _hash(self.table, self.lengths)
        self.bits, self.slots, self.usable = 0, np.empty(0, dtype=np.int64), False
        for bits in range(max(1, len(raw).bit_length() + 1), 21):
            slot = (keys >> np.uint64(64 - bits)).astype(np.int64)
            if len(np.unique(slot)) == len(raw):
                self.bits, self.slots = bits, np.full(1 << bits, -1, dtype=np.int64)
                self.slots[slot] = np.arange(len(raw))
                self.usable = len(raw) > 0
                break

    def lookup(self, data: _Bytes, starts: np.ndarray, ends: np.ndarray) -> np.ndarray | None:
        """Ids of the strings data[starts[i]:ends[i]], or None when one of them is not a name in the table."""
        lengths = ends - starts
        if int(lengths.max()) > self.width:
            return None
        words = data.words(starts, lengths, self.words)
        row = self.slots[(_hash(words, lengths) >> np.uint64(64 - self.bits)).astype(np.int64)]
        if bool((row < 0).any()) or not np.array_equal(self.lengths[row], lengths):
            return None
        if not all(np.array_equal(t[row], w) for t, w in zip(self.table, words)):
            return None  # a hash hit that is not the name: compared exactly
        return self.symbol_ids[row]


def _hash(words: list[np.ndarray], lengths: np.ndarray) -> np.ndarray:
    """A multiplicative hash of (length, words): a hint only, every hit is compared exactly."""
    key = lengths.astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    for w in words:
        key = (key ^ w) * np.uint64(0xBF58476D1CE4E5B9)
    return key


_WS = "[ \\t\\r]*"
#: the bytes between two strings of a batch, before the first and after the last (lines of empty words between)
_EMPTY_LINES = f"(?:{_WS}(?:\\[{_WS}\\])?{_WS}\\n)*"
_GAP = re.compile(f"{_WS},{_WS}|{_WS}\\]{_WS}\\n{_EMPTY_LINES}{_WS}\\[{_WS}".encode())
_FIRST = re.compile(f"{_EMPTY_LINES}{_WS}\\[{_WS}".encode())
_LAST = re.compile(f"{_WS}\\]{_WS}\\n{_EMPTY_LINES}".encode())
#: distinct gaps between strings looked at one by one before the byte-wise check takes over
_GAP_KINDS = 8
_GAP_WORDS = 2


def _gap_lines(data: bytes, raw: _Bytes, opening: np.ndarray, closing: np.ndarray) -> np.ndarray | None:
    """Newlines in the gap before each string and after the last one, checking every gap's grammar — or None when
    the gaps are too long or too varied for this check (:func:`_byte_lines` then decides)."""
    starts, ends = closing[:-1] + 1, opening[1:]
    sizes = ends - starts
    edges = (data[: opening[0]], data[closing[-1] + 1 :])
    if not (_FIRST.fullmatch(edges[0]) and _LAST.fullmatch(edges[1])):
        return None
    newlines = np.empty(opening.size + 1, dtype=np.int64)
    newlines[0], newlines[-1] = edges[0].count(b"\n"), edges[1].count(b"\n")
    if sizes.size == 0:
        return newlines
    if int(sizes.max()) > 8 * _GAP_WORDS:
        return None
    words = raw.words(starts, sizes, _GAP_WORDS)
    inner = newlines[1:-1]
    todo = np.ones(sizes.size, dtype=bool)
    for _ in range(_GAP_KINDS):
        j = int(todo.argmax())
        if not todo[j]:
            return newlines
        gap = data[starts[j] : ends[j]]
        if not _GAP.fullmatch(gap):
            return None
        same = (sizes == sizes[j]) & (words[0] == words[0][j]) & (words[1] == words[1][j])
        inner[same] = gap.count(b"\n")
        todo &= ~same
    return None if todo.any() else newlines


def _byte_lines(b: np.ndarray, opening: np.ndarray, closing: np.ndarray) -> np.ndarray | None:
    """The same from every byte outside the strings: the skeleton (each string reduced to its opening quote,
    whitespace dropped) must be a sequence of lines ([ (" (, ")*)? ] | nothing) newline — a DFA whose state is the
    previous character."""
    skeleton = b[_ranges(np.concatenate([[0], closing + 1]), np.concatenate([opening + 1, [b.size]]))]
    skeleton = skeleton[(skeleton != _WHITESPACE[0]) & (skeleton != _WHITESPACE[1]) & (skeleton != _WHITESPACE[2])]
    if skeleton.size == 0 or skeleton[-1] != _NEWLINE:
        return None
    cls = _CLASS[skeleton]
    if not _ALLOWED[np.concatenate([[_CLASS[_NEWLINE]], cls[:-1]]) * np.uint8(6) + cls].all():
        return None
    gap_of_newline = np.cumsum(skeleton == _QUOTE)[skeleton == _NEWLINE]  # strings before each newline
    return np.bincount(gap_of_newline, minlength=opening.size + 1)


def _ranges(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The indices of the ranges [starts[i], ends[i]), concatenated."""
    sizes = ends - starts
    offsets = np.cumsum(sizes) - sizes
    return np.arange(int(sizes.sum())) + np.repeat(starts - offsets, sizes)


def _fast_parse(data: bytes, codec: SymbolCodec) -> tuple[np.ndarray, np.ndarray] | None:
    """(ids, lengths) of complete lines ``data``, or None when the batch needs the json path."""
    if not codec.usable or b"\\" in data:
        return None
    raw = _Bytes(data, max(codec.words, _GAP_WORDS))
    quotes = np.flatnonzero(raw.array == _QUOTE)
    if quotes.size == 0 or quotes.size % 2:
        return None
    opening, closing = quotes[0::2], quotes[1::2]
    newlines = _gap_lines(data, raw, opening, closing)
    if newlines is None:
        newlines = _byte_lines(raw.array, opening, closing)
    if newlines is None or int(newlines.sum()) != data.count(b"\n"):
        return None  # bad structure, or a newline inside a string
    ids = codec.lookup(raw, opening + 1, closing)
    if ids is None:
        return None
    line_of_string = np.cumsum(newlines[:-1])
    return ids, np.bincount(line_of_string, minlength=int(newlines.sum()))


def _json_parse(data: bytes, codec: SymbolCodec, first_line: int) -> tuple[np.ndarray, np.ndarray, Exception | None]:
    """(ids, lengths) of the lines before the first bad one, and the error of that line (None if all are good)."""
    ids: list[int] = []
    lengths: list[int] = []
    error: Exception | None = None
    for lineno, raw in enumerate(data.split(b"\n")[:-1], start=first_line):
        try:
            word = _json_word(raw, codec, lineno)
        except (SpecError, UnknownSymbolError) as exc:
            error = exc
            break
        ids.extend(word)
        lengths.append(len(word))
    return np.asarray(ids, dtype=np.int64), np.asarray(lengths, dtype=np.int64), error


def _json_word(raw: bytes, codec: SymbolCodec, lineno: int) -> list[int]:
    try:
        line = raw.decode()
    except UnicodeDecodeError:
        raise SpecError(f"stdin line {lineno}: not UTF-8 text") from None
    if not line.strip():  # the empty word: every input line gives exactly one output line
        return []
    try:
        word = json.loads(line)
    except json.JSONDecodeError as exc:
        raise SpecError(f"stdin line {lineno}: not a JSON array of symbol names ({exc.msg})") from None
    except RecursionError:
        raise SpecError(f"stdin line {lineno}: the JSON is nested too deeply to parse") from None
    if not isinstance(word, list):
        raise SpecError(f"stdin line {lineno}: expected a JSON array of symbol names, got {type(word).__name__}")
    try:
        return [codec.ids[str(s)] for s in word]
    except KeyError as exc:
        raise UnknownSymbolError(f"stdin line {lineno}: unknown symbol {exc.args[0]!r}") from None


def parse_lines(
    data: bytes, codec: SymbolCodec, first_line: int = 1
) -> tuple[np.ndarray, np.ndarray, Exception | None]:
    """Parse complete lines (``data`` ends with a newline): flat symbol ids, the length of each word, and the error
    of the first bad line (the words before it are returned, so that their output can be printed first)."""
    fast = _fast_parse(data, codec)
    if fast is not None:
        return fast[0], fast[1], None
    return _json_parse(data, codec, first_line)


class StateWriter:
    """Output lines ``["q", "r"]`` (as ``json.dumps`` writes them) from flat state indices and word lengths."""

    def __init__(self, states: Sequence[str]) -> None:
        enc = [json.dumps(s) for s in states]
        # pieces by position in the word: middle, first, last, only
        self.pieces = np.array(
            [f"{e}, " for e in enc] + [f"[{e}, " for e in enc] + [f"{e}]\n" for e in enc] + [f"[{e}]\n" for e in enc],
            dtype=object,
        )
        self.n = len(states)

    def lines(self, states: np.ndarray, lengths: np.ndarray) -> str:
        """The output text of words with these lengths whose states, concatenated, are ``states`` (all valid)."""
        if states.size == 0:
            return "[]\n" * len(lengths)
        ends = np.cumsum(lengths)
        kind = np.zeros(states.size, dtype=np.int64)
        nonempty = lengths > 0
        kind[(ends - lengths)[nonempty]] += 1
        kind[ends[nonempty] - 1] += 2
        pieces = self.pieces[kind * self.n + states]
        empty = np.flatnonzero(~nonempty)
        if empty.size:
            pieces = np.insert(pieces, (ends - lengths)[empty], "[]\n")
        return "".join(pieces.tolist())
