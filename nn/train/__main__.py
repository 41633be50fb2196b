"""``python -m fsa2rnn.nn.train ARGS`` (and ``torchrun --nproc-per-node N -m fsa2rnn.nn.train ARGS``): the same
arguments as ``fsa2rnn train``; bad input prints one line ``error: …`` and exits with status 2."""

from __future__ import annotations

import sys

import click

from fsa2rnn.fsa.errors import FsaError

from .args import TRAIN_HELP, given_args, train_options


@click.command("fsa2rnn train", help=TRAIN_HELP)
@train_options
@click.pass_context
def main(ctx: click.Context, **params) -> None:
    from .run import run_from_cli

    run_from_cli(params, given_args(ctx))


def entry() -> None:
    try:
        main(standalone_mode=False)
    except FsaError as exc:
        click.echo(f"error: {' '.join(str(exc).split())}", err=True)
        sys.exit(2)
    except click.ClickException as exc:
        click.echo(f"error: {' '.join(exc.format_message().split())}", err=True)
        sys.exit(2)


if __name__ == "__main__":
    entry()
