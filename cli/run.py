"""`fsa2rnn run MODEL`: read words from stdin (one JSON array of symbol names per line), print the states.

stdin is read in batches — whatever it has ready, up to BATCH_BYTES of complete lines, so that an interactive
producer gets each answer as soon as its line is complete. A batch is parsed at once (cli/words.py), its words are
grouped by length and each group is run through the model in one ``predict_states`` call, and the output lines are
written in input order. At float64 the model runs on the torch-free numpy executor of fsa2rnn.compiler (the same
network, started without importing torch); ``--engine torch`` and the other dtypes run the torch modules of
fsa2rnn.nn under the scan policy ``RUN_SCAN`` of nn/compiled (the chunked scans of nn/ops/lrnn_scan), which
``verify`` measures and reports.
Every input line gives exactly one output line (an empty line gives ``[]``); a state outside the model's readout
is an error (cli/readout.py), never a ``null``.
"""

from __future__ import annotations

import os
import select
import sys
from collections.abc import Callable, Iterator
from typing import Any, BinaryIO

import click
import numpy as np

from ..compiler import load_executor
from ..fsa.errors import LimitExceededError, SpecError
from .readout import state_names
from .words import StateWriter, SymbolCodec, parse_lines

DTYPES = ("float64", "float32", "bfloat16", "float16")
ENGINES = ("auto", "numpy", "torch")
#: complete lines gathered into one batch at most (a single longer line is one batch)
BATCH_BYTES = 1 << 24
#: the longest stdin line read (a word of millions of symbols; longer is refused before more is read)
MAX_LINE_BYTES = 1 << 24
_READ = 1 << 20


@click.command("run")
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.option("--dtype", type=click.Choice(DTYPES), default="float64", show_default=True)
@click.option(
    "--engine",
    type=click.Choice(ENGINES),
    default="auto",
    show_default=True,
    help="numpy: the torch-free executor (float64 only); torch: the torch modules; auto: numpy at float64",
)
def run_command(model_path: str, dtype: str, engine: str) -> None:
    """Run MODEL on words read from stdin; print a JSON array of state names after each symbol, one line per word."""
    if engine == "numpy" and dtype != "float64":
        raise click.UsageError(f"--engine numpy runs at float64 only, not --dtype {dtype} (use --engine torch)")
    if sys.stdin is None:
        raise SpecError("stdin is closed: `fsa2rnn run` reads its words from stdin, one JSON array per line")
    predict = _numpy_predictor(model_path) if engine != "torch" and dtype == "float64" else None
    if predict is None:
        predict = _torch_predictor(model_path, dtype)
    model = predict.model
    codec = SymbolCodec(model.symbols)
    writer = StateWriter(model.states)
    out = sys.stdout
    for first_line, data in _batches(sys.stdin.buffer):
        ids, lengths, error = parse_lines(data, codec, first_line)
        states = _predict(predict, ids, lengths)
        bad = _first_bad_word(states, lengths, len(model.states))
        good = len(lengths) if bad is None else bad
        n_good = int(lengths[:good].sum())
        if good:
            out.write(writer.lines(states[:n_good], lengths[:good]))
            out.flush()
        if bad is not None:
            state_names(
                states[n_good : n_good + lengths[bad]],
                model.states,
                labels=[f"stdin line {first_line + bad}"],
                dtype=dtype,
            )
        if error is not None:
            raise error


class _Predictor:
    """``predict(ids (B, T)) -> states (B, T)`` (numpy int64) of one model, and the CompiledModel it runs."""

    def __init__(self, model: Any, predict: Callable[[np.ndarray], np.ndarray]) -> None:
        self.model, self.predict = model, predict


def _numpy_predictor(model_path: str) -> _Predictor:
    executor = load_executor(model_path)
    return _Predictor(executor.compiled, executor.predict_states)


def _torch_predictor(model_path: str, dtype: str) -> _Predictor:
    import torch

    from ..nn.compiled import load_model, run_options

    if "OMP_NUM_THREADS" not in os.environ:
        # the scans are sequences of small vectorized steps: a second thread costs more than it gives, and on a
        # busy machine its synchronization stalls every step (OMP_NUM_THREADS overrides)
        torch.set_num_threads(1)
    net = load_model(model_path).to(getattr(torch, dtype))
    options = run_options(net)

    def predict(ids: np.ndarray) -> np.ndarray:
        return net.predict_states(torch.from_numpy(ids), **options).numpy()

    return _Predictor(net.compiled, predict)


def _predict(predictor: _Predictor, ids: np.ndarray, lengths: np.ndarray) -> np.ndarray:
    """States after each symbol of every word, concatenated: one predict call per word length."""
    states = np.empty(ids.size, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    order = np.argsort(lengths, kind="stable")
    sizes, first = np.unique(lengths[order], return_index=True)
    for size, lo, hi in zip(sizes.tolist(), first, [*first[1:], len(order)]):
        if size == 0:
            continue
        index = starts[order[lo:hi], None] + np.arange(size)[None, :]
        states[index] = predictor.predict(ids[index])
    return states


def _first_bad_word(states: np.ndarray, lengths: np.ndarray, n_states: int) -> int | None:
    """Index of the first word with a state outside the readout (−1), or None."""
    bad = np.flatnonzero((states < 0) | (states >= n_states))
    if bad.size == 0:
        return None
    return int(np.searchsorted(np.cumsum(lengths), bad[0], side="right"))


def _batches(stream: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(number of the first line, complete lines ending in a newline) of what stdin has ready; LimitExceededError
    as soon as a line is longer than :data:`MAX_LINE_BYTES` (before more of it is read)."""
    buf = bytearray()
    line = 1
    eof = False
    limit = _LineLimit()
    while not eof:
        chunk = limit.feed(_read_some(stream))
        eof = not chunk
        buf += chunk
        while not eof and len(buf) < BATCH_BYTES and _ready(stream):
            chunk = limit.feed(_read_some(stream))
            eof = not chunk
            buf += chunk
        if eof and buf and not buf.endswith(b"\n"):
            buf += b"\n"
        cut = buf.rfind(b"\n") + 1
        if cut:
            data = bytes(buf[:cut])
            del buf[:cut]
            yield line, data
            line += data.count(b"\n")


class _LineLimit:
    """The length of every stdin line, counted as its bytes arrive (the newlines of each chunk found at once)."""

    def __init__(self) -> None:
        self.lines = 0  #: complete lines seen
        self.tail = 0  #: bytes of the line under way

    def feed(self, chunk: bytes) -> bytes:
        newlines = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
        if newlines.size == 0:
            lengths = np.array([self.tail + len(chunk)])
        else:
            first, last = self.tail + newlines[0], len(chunk) - newlines[-1] - 1
            lengths = np.concatenate([[first], np.diff(newlines) - 1, [last]])
        over = np.flatnonzero(lengths > MAX_LINE_BYTES)
        if over.size:
            raise LimitExceededError(
                f"stdin line {self.lines + int(over[0]) + 1} is longer than the limit of {MAX_LINE_BYTES:,} bytes"
            )
        self.lines += int(newlines.size)
        self.tail = int(lengths[-1])
        return chunk


def _read_some(stream: BinaryIO) -> bytes:
    read1 = getattr(stream, "read1", None)
    return read1(_READ) if read1 is not None else stream.read(_READ)


def _ready(stream: BinaryIO) -> bool:
    """Whether reading would not block (streams without a file descriptor never block)."""
    try:
        return bool(select.select([stream], [], [], 0)[0])
    except (OSError, ValueError, TypeError, AttributeError):
        return True
