"""Options shared by several commands: numeric options checked by their stated limit (:class:`Checked`, a row of
fsa2rnn.nn.limits.LIMITS), the regex DFA-state limit of SPEC, and output files checked before work."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import click

from fsa2rnn.fsa.determinize import MAX_DFA_STATES
from fsa2rnn.fsa.errors import LimitExceededError, SpecError
from fsa2rnn.fsa.io import output_target
from fsa2rnn.fsa.progress import set_quiet
from fsa2rnn.nn.limits import LIMITS, check, limit_help
from fsa2rnn.nn.lmax import DEFAULT_CAP


class Checked(click.ParamType):
    """A click parameter type for one row of :data:`~fsa2rnn.nn.limits.LIMITS`: refused while the command line is
    parsed."""

    def __init__(self, name: str) -> None:
        self.row = name
        self.name = "integer" if LIMITS[name].kind is int else "float"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        option = param.opts[0] if param is not None and param.opts else None
        try:
            return check(self.row, value, option)
        except (SpecError, LimitExceededError) as exc:
            self.fail(str(exc).removeprefix(f"{option} ") if option else str(exc), param, ctx)


def checked(name: str) -> Checked:
    """``type=checked("cap")``: the click type of a row of :data:`~fsa2rnn.nn.limits.LIMITS`."""
    return Checked(name)


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


def limited(name: str, *decls: str, help: str, **kw: Any) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A numeric option checked by its row ``name`` of fsa2rnn.nn.limits.LIMITS while the command line is parsed
    (before any work); its help ends with the accepted range. The option is ``--name`` unless ``decls`` are given."""
    decls = decls or ("--" + name.replace("_", "-"),)
    return click.option(*decls, type=checked(name), help=help + limit_help(name), **kw)


def cap_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--cap N``: the longest length an L_max search tries (one default for every command)."""
    return limited("cap", help="Longest length the L_max search tries.", default=DEFAULT_CAP, show_default=True)(fn)


def samples_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--samples N``: words per evaluation length and per L_max step."""
    return limited("samples", help="Words per evaluation length and for L_max.", default=512, show_default=True)(fn)


def seed_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--seed S``: the seed of the sampled words (64-bit)."""
    return limited("seed", help="Seed of the sampled words.", default=0, show_default=True)(fn)


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
