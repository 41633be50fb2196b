"""Numeric options checked by their stated limits while the command line is parsed (a row of
:data:`fsa2rnn.nn.limits.LIMITS` each; docs/limits.md): the click type :class:`Checked` and the options several
commands share (``--cap``, ``--samples``, ``--seed``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..fsa.errors import LimitExceededError, SpecError
from ..nn.limits import LIMITS, check, limit_help
from ..nn.lmax import DEFAULT_CAP


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
