"""`fsa2rnn run` in batches: the numpy line parser against json.loads, the output writer against json.dumps, and
the command on mixed batches, bad lines, an interactive producer and low precision."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fsa2rnn.cli import words as W
from fsa2rnn.cli.main import main
from fsa2rnn.compiler import compile_diagonal, compile_householder, compile_nfsm
from fsa2rnn.fsa import resolve_spec

NAMES = ["a", "b", "(0 1)", "(0 1 2)(3 4)", "set", "x y", "ü", "[", "],", 'q"', "back\\slash", "", "0", "e"]
CODEC = W.SymbolCodec(NAMES)


def _reference(data: bytes) -> tuple[list[int], list[int], str | None]:
    ids, lengths, error = W._json_parse(data, CODEC, 1)
    return ids.tolist(), lengths.tolist(), None if error is None else str(error)


def _format(word: list[str], style: int, rng: np.random.Generator) -> str:
    if style == 0:
        return json.dumps(word)
    if style == 1:
        return json.dumps(word, separators=(",", ":"))
    if style == 2:
        return json.dumps(word, ensure_ascii=False)
    ws = [" ", "\t", "", "  ", "\r"]
    pieces = [rng.choice(ws) + json.dumps(w) + rng.choice(ws) for w in word]
    return rng.choice(ws) + "[" + ",".join(pieces) + "]" + rng.choice(ws)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    words=st.lists(st.lists(st.sampled_from(NAMES), max_size=6), min_size=1, max_size=12),
    style=st.integers(0, 3),
    blank=st.lists(st.integers(0, 11), max_size=3),
    seed=st.integers(0, 2**16),
)
def test_fast_parser_agrees_with_json(words, style, blank, seed):
    rng = np.random.default_rng(seed)
    lines = [_format(w, style, rng) for w in words]
    for i in blank:
        lines.insert(min(i, len(lines)), rng.choice(["", "  ", "[]", " [ ] "]))
    data = ("\n".join(lines) + "\n").encode()
    fast = W._fast_parse(data, CODEC)
    want = _reference(data)
    assert want[2] is None
    if fast is not None:
        assert (fast[0].tolist(), fast[1].tolist()) == want[:2]
    ids, lengths, error = W.parse_lines(data, CODEC)
    assert (ids.tolist(), lengths.tolist(), error) == (want[0], want[1], None)
    used = sum(words, [])
    plain = used and all(w and w.isascii() and '"' not in w and "\\" not in w for w in used)
    if style == 0 and plain:
        assert fast is not None  # the format `json.dumps` writes takes the numpy path


@settings(max_examples=200, deadline=None)
@given(
    words=st.lists(st.lists(st.sampled_from(["a", "b", "set", "x y"]), max_size=4), min_size=1, max_size=5),
    edits=st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(list('[]", \n\t{}:0ab\\')) | st.none())),
)
def test_fast_parser_never_accepts_what_json_refuses(words, edits):
    """Random edits of valid input (insert a character, or delete one): the numpy path either agrees with the json
    path or leaves the batch to it — it never accepts a line json refuses, nor reads other ids."""
    text = "".join(json.dumps(w) + "\n" for w in words)
    for pos, ch in edits:
        if not text:
            break
        pos %= len(text)
        text = text[:pos] + (ch if ch is not None else "") + text[pos + (ch is None) :]
    data = text.encode() if text.endswith("\n") else (text + "\n").encode()
    fast = W._fast_parse(data, CODEC)
    ids, lengths, error = _reference(data)
    if fast is not None:
        assert error is None, (text, error)
        assert (fast[0].tolist(), fast[1].tolist()) == (ids, lengths)


def test_parser_errors_name_the_line_and_keep_the_lines_before():
    data = b'["a"]\n["b", "a"]\n["nope"]\n["a"]\n'
    ids, lengths, error = W.parse_lines(data, CODEC, first_line=7)
    assert ids.tolist() == [0, 1, 0] and lengths.tolist() == [1, 2]
    assert str(error) == "stdin line 9: unknown symbol 'nope'"
    for bad, message in [
        (b"[1, \n", "not a JSON array of symbol names"),
        (b'{"a": 1}\n', "expected a JSON array of symbol names, got dict"),
        (b"[" * 100000 + b"\n", "nested too deeply"),
        (b"\xff\n", "not UTF-8"),
    ]:
        assert message in str(W.parse_lines(bad, CODEC)[2])


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(0, 5), min_size=1, max_size=10), seed=st.integers(0, 2**16))
def test_state_writer_writes_what_json_dumps_writes(lengths, seed):
    names = ["q0", "état", 'say "hi"', "a\\b", "(0 1)"]
    states = np.random.default_rng(seed).integers(0, len(names), size=sum(lengths))
    want, at = "", 0
    for n in lengths:
        want += json.dumps([names[q] for q in states[at : at + n]]) + "\n"
        at += n
    assert W.StateWriter(names).lines(states, np.array(lengths)) == want


@pytest.fixture(scope="module")
def runner():
    return CliRunner()


def _model(tmp_path, name, compile_fn, spec):
    path = tmp_path / f"{name}.safetensors"
    compile_fn(resolve_spec(spec)).save(path)
    return path


@pytest.mark.parametrize(
    "spec,compile_fn",
    [("T4", compile_householder), ("S5:swaps", compile_householder), ("Z12", compile_diagonal), ("T4", compile_nfsm)],
)
def test_mixed_batch_gives_each_line_its_states(runner, tmp_path, spec, compile_fn):
    a = resolve_spec(spec)
    path = _model(tmp_path, "m", compile_fn, spec)
    rng = np.random.default_rng(1)
    words = [rng.integers(0, a.n_symbols, size=n).tolist() for n in [3, 0, 70, 3, 1, 200, 0, 3, 65]]
    lines = [json.dumps([a.symbols[x] for x in w]) if w else rng.choice(["", "[]", "  "]) for w in words]
    res = runner.invoke(main, ["run", str(path)], input="\n".join(lines) + "\n")
    assert res.exit_code == 0, res.output
    out = res.stdout.splitlines()
    assert len(out) == len(words)
    for w, line in zip(words, out):
        assert json.loads(line) == ([a.states[q] for q in a.run(w)] if w else [])


def test_bad_line_in_a_batch_prints_the_lines_before_it(runner, tmp_path):
    path = _model(tmp_path, "ff", compile_householder, "flipflop")
    res = runner.invoke(main, ["run", str(path)], input='["set"]\n["read", "reset"]\n["jump"]\n["set"]\n')
    assert res.exit_code == 2
    assert res.stdout.splitlines() == ['["1"]', '["0", "0"]']  # each line from the initial state
    assert res.stderr.strip().splitlines() == ["error: stdin line 3: unknown symbol 'jump'"]


def test_a_word_gets_the_same_states_alone_and_in_a_batch(runner, tmp_path):
    """Rotation layers round differently in different bracketings; the chunked scan's chunks depend on the word's
    length only, so in bfloat16 a line prints the same alone and among other lines of its length."""
    a = resolve_spec("Z60")
    path = _model(tmp_path, "z60", compile_householder, "Z60")
    rng = np.random.default_rng(2)
    lines = [json.dumps([a.symbols[x] for x in rng.integers(0, 60, size=300)]) for _ in range(9)]
    batch = runner.invoke(main, ["run", str(path), "--dtype", "bfloat16"], input="\n".join(lines) + "\n")
    alone = runner.invoke(main, ["run", str(path), "--dtype", "bfloat16"], input=lines[4] + "\n")
    assert batch.exit_code == 0 and alone.exit_code == 0
    assert alone.stdout.splitlines() == [batch.stdout.splitlines()[4]]


def test_exact_models_are_exact_in_bfloat16_on_long_words(runner, tmp_path):
    a = resolve_spec("T4")
    path = _model(tmp_path, "t4", compile_householder, "T4")
    word = np.random.default_rng(3).integers(0, a.n_symbols, size=5000).tolist()
    res = runner.invoke(main, ["run", str(path), "--dtype", "bfloat16"], input=json.dumps([a.symbols[x] for x in word]))
    assert res.exit_code == 0 and json.loads(res.stdout) == [a.states[q] for q in a.run(word)]


def test_interactive_producer_gets_each_answer_before_sending_the_next_line(tmp_path):
    path = _model(tmp_path, "par", compile_householder, "parity")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen(
        [sys.executable, "-m", "fsa2rnn.cli", "run", str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        for word, want in [(["1"], ["odd"]), (["1", "1"], ["odd", "even"]), ([], [])]:
            proc.stdin.write(json.dumps(word) + "\n")
            proc.stdin.flush()
            ready, _, _ = select.select([proc.stdout], [], [], 120)  # run must answer before the next line
            assert ready, "no answer to a complete line while stdin stays open"
            assert json.loads(proc.stdout.readline()) == want
        proc.stdin.close()
        assert proc.wait(timeout=60) == 0
    finally:
        proc.kill()
