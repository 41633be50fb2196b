"""`fsa2rnn train`: train a model on a task and evaluate its length generalization (the arguments and the work live
in fsa2rnn.nn.train, shared with `torchrun -m fsa2rnn.nn.train`)."""

from __future__ import annotations

import click

from fsa2rnn.nn.train.args import TRAIN_HELP, given_args, train_options


@click.command("train", help=TRAIN_HELP)
@train_options
@click.pass_context
def train_command(ctx: click.Context, **params) -> None:
    from fsa2rnn.nn.train.run import run_from_cli

    run_from_cli(params, given_args(ctx))
