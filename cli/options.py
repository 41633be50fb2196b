"""Options shared by several commands: the regex DFA-state limit of SPEC, and output files checked before work."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from fsa2rnn.fsa.determinize import MAX_DFA_STATES
from fsa2rnn.fsa.io import output_target


def max_states_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--max-states N``: the most DFA states the determinization of a regex:PATTERN SPEC may build."""
    return click.option(
        "--max-states",
        type=click.IntRange(min=1),
        default=MAX_DFA_STATES,
        show_default=True,
        help="regex:PATTERN: refuse as soon as determinization reaches more DFA states.",
    )(fn)


def check_output(path: str | None) -> None:
    """Refuse a bad output path (empty, not a regular file, missing or unwritable directory) before any work."""
    if path is not None:
        output_target(path)
