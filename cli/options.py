"""Options shared by several commands: the regex DFA-state limit of SPEC, output files checked before work, progress
and plots. The numeric options checked by their stated limits are cli/limit_options.py."""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click

from ..fsa.determinize import MAX_DFA_STATES
from ..fsa.errors import OutputFileError, SpecError
from ..fsa.io import output_target, staged_write
from ..fsa.progress import set_quiet


class FiniteFloatRange(click.FloatRange):
    """click.FloatRange that refuses nan and ±inf (a comparison with nan is false, so a range alone lets it in)."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        rv = super().convert(value, param, ctx)
        if not math.isfinite(rv):
            self.fail(f"must be a finite number, got {value!r}", param, ctx)
        return rv


def max_states_option(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--max-states N``: the most DFA states the determinization of a regex:PATTERN SPEC may build."""
    return click.option(
        "--max-states",
        type=click.IntRange(min=1),
        default=MAX_DFA_STATES,
        show_default=True,
        help="regex:PATTERN: refuse as soon as determinization reaches more DFA states.",
    )(fn)


#: the extensions of a Graphviz output (``--dot``): DOT source, or a picture that Graphviz's ``dot`` renders
DOT_FORMATS = ("dot", "gv", "svg", "png", "pdf")
#: the extension of a model file (``compile -o``)
MODEL_FORMATS = ("safetensors",)


def check_output(
    path: str | None, option: str = "--output", formats: tuple[str, ...] = (), inputs: tuple[str | None, ...] = ()
) -> None:
    """Refuse a bad output path before any work: empty, not a regular file, in a missing or unwritable directory,
    an extension outside ``formats`` (when given), or the same file as one of ``inputs`` (writing it would destroy
    what the command reads)."""
    if path is None:
        return
    target = output_target(path)
    if formats and _extension(path) not in formats:
        raise SpecError(f"{option} {path!r}: the extension chooses the format; use "
                        f"{'one of ' if len(formats) > 1 else ''}{', '.join('.' + f for f in formats)}")  # fmt: skip
    for source in inputs:
        if source is not None and same_file(target, source):
            raise OutputFileError(f"{option} {path!r} is the input {source!r}: writing it would destroy it; choose "
                                  "another path")  # fmt: skip


@contextmanager
def delivered(path: str | None, write: Callable[[Path], None] | None = None) -> Iterator[None]:
    """The output file ``path`` (written by ``write`` to a temporary file first) appears only after the block —
    which prints the command's report — has run and stdout has been flushed; when printing fails (a full disk, a
    closed pipe), the file is not written and the OSError reaches the CLI's handler (one line, exit 1)."""
    if path is None or write is None:
        yield
        sys.stdout.flush()
        return
    with staged_write(path, write):
        yield
        sys.stdout.flush()


def same_file(a: str | os.PathLike[str], b: str | os.PathLike[str]) -> bool:
    """Whether two paths name one file (links followed; a path that does not exist is no file)."""
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


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


def check_plot(path: str | None, option: str = "--plot", inputs: tuple[str | None, ...] = ()) -> str | None:
    """The format of a plot path (its extension), refused before work when matplotlib cannot write it; the path
    is checked writable and not one of ``inputs`` (:func:`check_output`)."""
    if path is None:
        return None
    check_output(path, option, PLOT_FORMATS, inputs)
    return _extension(path)


def _extension(path: str) -> str:
    return os.path.splitext(path)[1].lower().lstrip(".")

