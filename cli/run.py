"""`fsa2rnn run MODEL`: read words from stdin (one JSON array of symbol names per line), print the states.

stdin is read in batches — whatever it has ready, up to BATCH_BYTES of complete lines, so that an interactive
producer gets each answer as soon as its line is complete. A batch is parsed at once (cli/words.py), its words are
grouped by length and each group is run through the model in one ``predict_states`` call (Householder and
diagonal models with ``scan="parallel"``: the chunked scans of nn/ops/lrnn_scan, see docs/architecture.md), and the
output lines are written in input order. Every input line gives exactly one output line (an empty line gives
``[]``); a state outside the model's readout is an error (nn/readout.py), never a ``null``.
"""

from __future__ import annotations

import os
import select
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO

import click
import numpy as np

from .words import StateWriter, SymbolCodec, parse_lines

DTYPES = ("float64", "float32", "bfloat16", "float16")
#: complete lines gathered into one batch at most (a single longer line is one batch)
BATCH_BYTES = 1 << 24
_READ = 1 << 20


@click.command("run")
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.option("--dtype", type=click.Choice(DTYPES), default="float64", show_default=True)
def run_command(model_path: str, dtype: str) -> None:
    """Run MODEL on words read from stdin; print a JSON array of state names after each symbol, one line per word."""
    import torch

    from fsa2rnn.nn import load_model

    if "OMP_NUM_THREADS" not in os.environ:
        # the scans are sequences of small vectorized steps: a second thread costs more than it gives, and on a
        # busy machine its synchronization stalls every step (OMP_NUM_THREADS overrides)
        torch.set_num_threads(1)
    net = load_model(model_path).to(getattr(torch, dtype))
    model = net.compiled
    codec = SymbolCodec(model.symbols)
    writer = StateWriter(model.states)
    options = {"scan": "parallel"} if model.target in ("householder", "diagonal") else {}
    out = sys.stdout
    for first_line, data in _batches(sys.stdin.buffer):
        ids, lengths, error = parse_lines(data, codec, first_line)
        states = _predict(net, ids, lengths, options)
        bad = _first_bad_word(states, lengths, len(model.states))
        good = len(lengths) if bad is None else bad
        n_good = int(lengths[:good].sum())
        if good:
            out.write(writer.lines(states[:n_good], lengths[:good]))
            out.flush()
        if bad is not None:
            from fsa2rnn.nn.readout import state_names

            state_names(
                states[n_good : n_good + lengths[bad]],
                model.states,
                labels=[f"stdin line {first_line + bad}"],
                dtype=dtype,
            )
        if error is not None:
            raise error


def _predict(net: Any, ids: np.ndarray, lengths: np.ndarray, options: dict[str, str]) -> np.ndarray:
    """States after each symbol of every word, concatenated: one predict call per word length."""
    import torch

    states = np.empty(ids.size, dtype=np.int64)
    starts = np.cumsum(lengths) - lengths
    order = np.argsort(lengths, kind="stable")
    sizes, first = np.unique(lengths[order], return_index=True)
    for size, lo, hi in zip(sizes.tolist(), first, [*first[1:], len(order)]):
        if size == 0:
            continue
        index = starts[order[lo:hi], None] + np.arange(size)[None, :]
        got = net.predict_states(torch.from_numpy(ids[index]), **options)
        states[index] = got.numpy()
    return states


def _first_bad_word(states: np.ndarray, lengths: np.ndarray, n_states: int) -> int | None:
    """Index of the first word with a state outside the readout (−1), or None."""
    bad = np.flatnonzero((states < 0) | (states >= n_states))
    if bad.size == 0:
        return None
    return int(np.searchsorted(np.cumsum(lengths), bad[0], side="right"))


def _batches(stream: BinaryIO) -> Iterator[tuple[int, bytes]]:
    """(number of the first line, complete lines ending in a newline) of what stdin has ready."""
    buf = bytearray()
    line = 1
    eof = False
    while not eof:
        chunk = _read_some(stream)
        eof = not chunk
        buf += chunk
        while not eof and len(buf) < BATCH_BYTES and _ready(stream):
            chunk = _read_some(stream)
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


def _read_some(stream: BinaryIO) -> bytes:
    read1 = getattr(stream, "read1", None)
    return read1(_READ) if read1 is not None else stream.read(_READ)


def _ready(stream: BinaryIO) -> bool:
    """Whether reading would not block (streams without a file descriptor never block)."""
    try:
        return bool(select.select([stream], [], [], 0)[0])
    except (OSError, ValueError, TypeError, AttributeError):
        return True
