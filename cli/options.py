"""Options shared by several commands: the regex DFA-state limit of SPEC, output files checked before work, progress
and plots. The numeric options checked by their stated limits are cli/limit_options.py."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

from fsa2rnn.fsa.determinize import MAX_DFA_STATES
from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.fsa.io import output_target
from fsa2rnn.fsa.progress import set_quiet


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


def quiet_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--quiet``: no progress on stderr (fsa2rnn.fsa.progress)."""

    def quiet(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
        set_quiet(value)
        return value

    return click.option(
        "--quiet",
        is_flag=True,
        expose_value=False,
        callback=quiet,
        help="No progress on stderr (by default a bar on a terminal, else a line every 30 s).",
    )(fn)


#: the extensions a plot path may have: matplotlib's formats that need nothing beyond matplotlib itself
PLOT_FORMATS = ("png", "pdf", "svg")


def check_plot(path: str | None, option: str = "--plot") -> str | None:
    """The format of a plot path (its extension), refused before work when matplotlib cannot write it; the path
    is checked writable (:func:`check_output`)."""
    if path is None:
        return None
    ext = os.path.splitext(path)[1].lower().lstrip(".")
    if ext not in PLOT_FORMATS:
        raise SpecError(f"{option} {path!r}: the extension chooses the format; use one of "
                        f"{', '.join('.' + f for f in PLOT_FORMATS)}")  # fmt: skip
    check_output(path)
    return ext
