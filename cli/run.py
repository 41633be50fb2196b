"""`fsa2rnn run MODEL`: read words from stdin (one JSON array of symbol names per line), print the states."""

from __future__ import annotations

import json
import sys

import click

from fsa2rnn.fsa.errors import SpecError, UnknownSymbolError

DTYPES = ("float64", "float32", "bfloat16", "float16")


@click.command("run")
@click.argument("model_path", metavar="MODEL", type=click.Path(dir_okay=False))
@click.option("--dtype", type=click.Choice(DTYPES), default="float64", show_default=True)
def run_command(model_path: str, dtype: str) -> None:
    """Run MODEL on words read from stdin; print a JSON array of state names after each symbol, one line per word."""
    import torch

    from fsa2rnn.nn import load_model

    net = load_model(model_path).to(getattr(torch, dtype))
    model = net.compiled
    symbols = {s: i for i, s in enumerate(model.symbols)}
    states = model.states
    for lineno, line in enumerate(sys.stdin, start=1):
        if not line.strip():
            continue
        try:
            word = json.loads(line)
        except json.JSONDecodeError as exc:
            raise SpecError(f"stdin line {lineno}: not a JSON array of symbol names ({exc.msg})") from None
        if not isinstance(word, list):
            raise SpecError(f"stdin line {lineno}: expected a JSON array of symbol names, got {type(word).__name__}")
        try:
            ids = [symbols[str(s)] for s in word]
        except KeyError as exc:
            raise UnknownSymbolError(f"stdin line {lineno}: unknown symbol {exc.args[0]!r}") from None
        if not ids:
            click.echo("[]")
            continue
        out = net.predict_states(torch.tensor([ids], dtype=torch.int64))[0].tolist()
        click.echo(json.dumps([states[q] if q >= 0 else None for q in out]))
