"""`compare --method lstar|kv`: the options of the black-box extraction (realize/lstar.py) and its dispatch."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..realize.lstar import DEPTH, MAX_QUERIES, MAX_SECONDS, Limits, compare_lstar, lstar_lines
from .errors import echo_json
from .limit_options import checked

#: --method values: the white-box extraction (realize/extract.py) or AALpy's learners
METHODS = ("whitebox", "lstar", "kv")


def lstar_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--method``, ``--max-queries``, ``--max-seconds``, ``--depth``."""
    options = [
        click.option("--method", type=click.Choice(METHODS), default="whitebox", show_default=True,
                     help="whitebox: read the model's tables or cluster its states; lstar / kv: learn the machine "
                          "black-box with AALpy's L* / KV (extra fsa2rnn[lstar]), the model answering the queries."),
        click.option("--max-queries", type=checked("max_queries"), default=MAX_QUERIES,
                     show_default=True, help="lstar/kv: words run through the model at most."),
        click.option("--max-seconds", type=checked("max_seconds"),
                     default=MAX_SECONDS, show_default=True, help="lstar/kv: wall-clock limit of the learning."),
        click.option("--depth", type=checked("depth"), default=DEPTH, show_default=True,
                     help="lstar/kv: W-method depth (extra symbols between the transition cover and the W set)."),
    ]  # fmt: skip
    for option in reversed(options):
        fn = option(fn)
    return fn


def run_lstar(model: Any, task: Any, target: Any, *, method: str, length: int, words: int, seed: int,
              max_queries: int, max_seconds: float, depth: int, as_json: bool) -> None:  # fmt: skip
    """Learn the model's machine with L* / KV, relate it to the target and the white-box extraction, print."""
    limits = Limits(max_queries=max_queries, max_seconds=max_seconds, depth=depth)
    report = compare_lstar(model, task, target=target, length=length, words=words, seed=seed, algorithm=method,
                           limits=limits)  # fmt: skip
    if as_json:
        echo_json(report)
    else:
        for line in lstar_lines(report):
            click.echo(line)
