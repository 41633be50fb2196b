"""Shared CLI error handling: every FsaError becomes one line on stderr and exit code 2, never a traceback.

Output that cannot be written (stdout closed, a full disk behind it) is one line and exit code 1; a command that
needs an optional dependency this installation lacks says which extra to install, in one line (exit 2). Text that
comes from the input (state and symbol names, paths) is printed with its control characters escaped
(:func:`printable`), so that a name cannot rewrite the terminal or split a line.
"""

from __future__ import annotations

import errno
import json
import os
import re
import sys
from typing import Any

import click

from ..fsa.errors import FsaError
from ..fsa.registry import EXTRAS, did_you_mean

EXIT_BAD_INPUT = 2
#: the output could not be written (stdout closed or failing)
EXIT_OUTPUT = 1
#: optional dependency (top-level module) → the extra of pyproject.toml that installs it


class FsaGroup(click.Group):
    """A click group whose commands report FsaError and click's usage errors (a bad option value, a missing
    argument, an unknown command) as one line ``error: …`` on stderr with exit code 2."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        try:
            return super().resolve_command(ctx, args)
        except click.UsageError as exc:
            if args and "No such command" in exc.message:
                hint = did_you_mean(args[0], self.list_commands(ctx))
                exc.message = exc.message.rstrip(".") + (f" (d{hint[3:]})" if hint else ".")
            raise

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.ClickException as exc:
            _usage_error(exc)

    def invoke(self, ctx: click.Context) -> Any:
        if STDOUT in claim_closed_streams():
            click.echo("error: stdout is closed: there is nowhere to print the output", err=True)
            ctx.exit(EXIT_OUTPUT)
        try:
            return super().invoke(ctx)
        except FsaError as exc:
            click.echo(f"error: {_one_line(exc)}", err=True)
            ctx.exit(EXIT_BAD_INPUT)
        except MemoryError:
            click.echo("error: out of memory (the request exceeds this machine; see the stated limits)", err=True)
            ctx.exit(EXIT_BAD_INPUT)
        except ModuleNotFoundError as exc:
            extra = EXTRAS.get((exc.name or "").split(".")[0])
            if extra is None:
                raise
            click.echo(f"error: `fsa2rnn {ctx.invoked_subcommand}` needs {exc.name.split('.')[0]}, which this "
                       f"installation lacks: pip install 'fsa2rnn[{extra}]'", err=True)  # fmt: skip
            ctx.exit(EXIT_BAD_INPUT)
        except OSError as exc:
            if exc.errno not in _WRITE_ERRORS:
                raise
            _silence_stdout()
            if not isinstance(exc, BrokenPipeError):  # a reader that went away is no error
                click.echo(f"error: cannot write the output: {exc.strerror or exc}", err=True)
            ctx.exit(EXIT_OUTPUT)
        except click.ClickException as exc:
            _usage_error(exc)


#: errors of writing the output (a full disk, /dev/full, a closed pipe, a file too large, an I/O error)
_WRITE_ERRORS = (errno.ENOSPC, errno.EPIPE, errno.EFBIG, errno.EIO, errno.EDQUOT)


STDIN, STDOUT, STDERR = 0, 1, 2


def claim_closed_streams() -> set[int]:
    """The standard streams (0, 1, 2) that were closed when the process started, each now held open on /dev/null
    so that no file the command opens can take its number (and receive the output meant for stdout)."""
    closed = set()
    for fd in (STDIN, STDOUT, STDERR):
        try:
            os.fstat(fd)
        except OSError:
            closed.add(fd)
            try:
                null = os.open(os.devnull, os.O_RDWR)
                if null != fd:
                    os.dup2(null, fd)
                    os.close(null)
            except OSError:
                pass
    return closed | {fd for fd, stream in ((STDIN, sys.stdin), (STDOUT, sys.stdout)) if stream is None}


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so that the interpreter's last flush of what could not be written fails no more."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


def _usage_error(exc: click.ClickException) -> None:
    """Print a click error as one line (help requested by an empty command line is shown as help) and exit 2."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError):
        raise exc
    ctx = getattr(exc, "ctx", None)
    hint = f" (see `{ctx.command_path} --help`)" if isinstance(exc, click.UsageError) and ctx is not None else ""
    click.echo(f"error: {_one_line_text(exc.format_message() + _suggestion(exc))}{hint}", err=True)
    raise click.exceptions.Exit(EXIT_BAD_INPUT)


def _suggestion(exc: click.ClickException) -> str:
    """`` Did you mean 'x'?`` for a value outside a click.Choice (click suggests for options, not for values)."""
    param = getattr(exc, "param", None)
    if not isinstance(exc, click.BadParameter) or not isinstance(getattr(param, "type", None), click.Choice):
        return ""

    given = re.match(r"^'(.*)' is not one of", exc.message)
    hint = did_you_mean(given.group(1), param.type.choices) if given else ""
    return f" D{hint[3:]}" if hint else ""


def _one_line_text(text: str) -> str:
    return printable(" ".join(text.split()))


def _one_line(exc: BaseException) -> str:
    return printable(" ".join(str(exc).split())) or type(exc).__name__


def printable(text: object) -> str:
    """``text`` with every character that is not printable (control characters, bidirectional overrides, line
    separators) written as its Python escape (``\\x1b``, ``\\n``, ``\\u202e``)."""
    s = str(text)
    if s.isprintable():
        return s
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in s)


def echo_json(obj: Any) -> None:
    """Print one JSON object to stdout (numpy scalars and arrays converted)."""
    click.echo(json.dumps(obj, default=_default))


def _default(o: Any) -> Any:
    import numpy as np

    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.bool_):
        return bool(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


def fail(message: str) -> None:
    """Raise a bad-input error from inside a command."""
    raise FsaError(message)


def echo_report(report: dict[str, Any], indent: int = 0) -> None:
    """Print a (nested) report as readable `key: value` lines; nested dicts are indented under their key."""
    pad = "  " * indent
    for key, value in report.items():
        if isinstance(value, dict) and value:
            click.echo(f"{pad}{key}:")
            echo_report(value, indent + 1)
        else:
            click.echo(f"{pad}{printable(key)}: {printable(value)}")


__all__ = ["FsaGroup", "echo_json", "echo_report", "fail", "printable", "EXIT_BAD_INPUT", "EXIT_OUTPUT", "sys"]
