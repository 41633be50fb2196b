"""Input read within bounds (fsa/reader.py, fsa/spec_scan.py, `run`'s line reader): property-based fuzzing of the
spec JSON scan against json.loads and Automaton.from_spec, and of the line reader against splitting the bytes;
devices, pipes and FIFOs read with a limit and a time limit."""

from __future__ import annotations

import io
import json
import os
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fsa2rnn.fsa.automaton as A
import fsa2rnn.fsa.spec_scan as S
from fsa2rnn.fsa import Automaton
from fsa2rnn.fsa.errors import FsaError, LimitExceededError, SpecError
from fsa2rnn.fsa.reader import read_bounded
from fsa2rnn.fsa.spec_scan import check_spec_text

# ---------------------------------------------------------------------------------------------------- spec JSON
NAME = st.text(alphabet=st.sampled_from('ab ,[]{}"\\:\n\u00e9'), min_size=1, max_size=5)


@st.composite
def specs(draw):
    """A valid spec dict: named or counted states, symbols, any table; keys in any order."""
    n = draw(st.integers(1, 6))
    k = draw(st.integers(1, 4))
    states = draw(st.one_of(st.just(n), st.lists(NAME, min_size=n, max_size=n, unique=True)))
    symbols = draw(st.lists(NAME, min_size=k, max_size=k, unique=True))
    table = {x: draw(st.lists(st.integers(0, n - 1), min_size=n, max_size=n)) for x in symbols}
    spec = {"states": states, "symbols": symbols, "transitions": table}
    if draw(st.booleans()):
        spec["initial"] = 0 if isinstance(states, int) else states[0]
        spec["initial"] = str(spec["initial"])
    keys = draw(st.permutations(list(spec)))
    return {key: spec[key] for key in keys}


def _text(spec: dict, style: int) -> str:
    return json.dumps(spec, indent=[None, 1, 4][style % 3], ensure_ascii=style % 2 == 0)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(specs(), st.integers(0, 5), st.integers(1, 30))
def test_the_scan_refuses_exactly_what_from_spec_refuses_by_size(spec, style, limit):
    """With the transition limit set low, a spec is refused by the scan of its text (before parsing) exactly when
    from_spec refuses it by its size (as soon as the counts met so far pass the limit: a list of names, the rows
    read so far); otherwise the text gives the same automaton."""
    text = _text(spec, style)
    old = S.MAX_SPEC_TRANSITIONS
    S.MAX_SPEC_TRANSITIONS = limit
    try:
        try:
            want = Automaton.from_spec(spec)
        except LimitExceededError:
            with pytest.raises(LimitExceededError, match="over the limit of"):
                check_spec_text(text.encode(), A._SPEC_KEYS)
            return
        check_spec_text(text.encode(), A._SPEC_KEYS)
        assert Automaton.from_json(text) == want
    finally:
        S.MAX_SPEC_TRANSITIONS = old


@settings(max_examples=300, deadline=None)
@given(specs(), st.data())
def test_a_damaged_spec_text_is_an_automaton_or_one_fsa_error(spec, data):
    """Fuzzing the scan: a spec text cut, or with bytes inserted or removed, is an automaton or an FsaError."""
    text = json.dumps(spec)
    i = data.draw(st.integers(0, len(text)))
    edit = data.draw(st.sampled_from(["cut", "insert", "delete"]))
    if edit == "cut":
        text = text[:i]
    elif edit == "insert":
        text = text[:i] + data.draw(st.text(alphabet='[]{}",:\\0 9x', min_size=1, max_size=3)) + text[i:]
    else:
        text = text[:i] + text[i + 1 :]
    try:
        Automaton.from_json(text)
    except FsaError as exc:
        assert "\n" not in str(exc)


def test_a_large_malformed_text_is_refused_by_the_scan(monkeypatch):
    """Past PARSE_UNCHECKED_BYTES nothing uncounted is handed to json.loads: an unclosed list is named, with its
    place."""
    import fsa2rnn.fsa.spec_scan as S

    monkeypatch.setattr(S, "PARSE_UNCHECKED_BYTES", 100)
    text = b'{"states": 2, "symbols": ["a"], "transitions": {"a": [1, 0' + b", 0" * 100
    with pytest.raises(SpecError, match="a list that is never closed at line 1 column 54"):
        check_spec_text(text, A._SPEC_KEYS)
    with pytest.raises(SpecError, match="unknown spec key 'bogus'"):
        check_spec_text(b'{"bogus": [' + b"1," * 100 + b"1]}", A._SPEC_KEYS)


# ---------------------------------------------------------------------------------------------------- files
def test_devices_pipes_and_fifos_are_read_within_bounds(tmp_path):
    with pytest.raises(SpecError, match="starts with the byte b'\\\\x00'"):
        read_bounded("/dev/zero", 1 << 20, first=b"{")
    with pytest.raises(LimitExceededError, match="longer than the limit of 4,096 bytes"):
        read_bounded("/dev/zero", 4096)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    start = time.monotonic()
    with pytest.raises(SpecError, match="nothing arrived for 0.3 s"):
        read_bounded(fifo, 1 << 20, timeout=0.3)
    assert time.monotonic() - start < 2

    def writer():
        with open(fifo, "wb") as f:
            f.write(b'  {"a": ')
            f.flush()
            time.sleep(0.1)
            f.write(b"1}")

    t = threading.Thread(target=writer)
    t.start()
    assert bytes(read_bounded(fifo, 1 << 20, first=b"{", timeout=5)) == b'{"a": 1}'  # whitespace before is dropped
    t.join()
    big = tmp_path / "big.json"
    big.write_bytes(b"{" + b" " * 5000)
    with pytest.raises(LimitExceededError, match="has 5,001 bytes, over the limit of 4,096"):
        read_bounded(big, 4096)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(SpecError, match="a loop of symbolic links"):
        read_bounded(loop, 4096)
    with pytest.raises(SpecError, match="it is a directory"):
        read_bounded(tmp_path, 4096)


def test_a_spec_that_is_not_utf8_names_the_byte(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes('{"states": ["\u00e9"], "symbols": ["a"], "transitions": {"a": [0]}}'.encode("latin-1"))
    with pytest.raises(SpecError, match="is not UTF-8 text \\(byte 13 is b'\\\\xe9'\\)"):
        Automaton.load(path)


# ---------------------------------------------------------------------------------------------------- run's lines
class _Chunks(io.RawIOBase):
    """A stream that hands out ``data`` in the given chunk sizes (read1 returns one chunk at a time)."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self.data, self.sizes, self.pos = data, sizes, 0

    def read1(self, n: int = -1) -> bytes:
        size = self.sizes[0] if self.sizes else len(self.data)
        self.sizes = self.sizes[1:]
        out = self.data[self.pos : self.pos + max(1, min(size, n))]
        self.pos += len(out)
        return out

    read = read1


@settings(max_examples=200, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=12).map(lambda b: b.replace(b"\n", b"")), max_size=12),
    newline_at_end=st.booleans(),
    sizes=st.lists(st.integers(1, 20), max_size=30),
)
def test_the_line_reader_gives_every_line_once_in_order(lines, newline_at_end, sizes):
    """Fuzzing `run`'s reader: whatever the chunks, the batches are the lines in order (a last line without a
    newline gets one), numbered from 1; a line longer than the limit is refused naming its number."""
    from fsa2rnn.cli import run as R

    saved = R.BATCH_BYTES, R.MAX_LINE_BYTES, R._READ, R._ready
    R.BATCH_BYTES, R.MAX_LINE_BYTES, R._READ = 16, 10, 7
    R._ready = lambda stream: stream.pos < len(stream.data)
    try:
        data = b"\n".join(lines) + (b"\n" if newline_at_end and lines else b"")
        got, numbers = [], []
        whole = (data if data.endswith(b"\n") else data + b"\n").split(b"\n")[:-1] if data else []
        too_long = next((i + 1 for i, line in enumerate(whole) if len(line) > 10), None)
        try:
            for first, batch in R._batches(_Chunks(data, sizes)):
                assert batch.endswith(b"\n")
                assert first == len(got) + 1  # numbered from 1, on from the lines before
                numbers.append(first)
                got += batch.split(b"\n")[:-1]
        except LimitExceededError as exc:
            assert too_long is not None and f"stdin line {too_long} is longer" in str(exc), (exc, lines)
            assert got == whole[: len(got)] and len(got) < too_long
            return
        assert too_long is None
        assert got == whole
    finally:
        R.BATCH_BYTES, R.MAX_LINE_BYTES, R._READ, R._ready = saved
