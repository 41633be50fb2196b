"""``--jobs``, ``--launcher`` and ``--launcher-args``: where the independent runs of ``reproduce`` go
(fsa2rnn.nn.train.launch; docs/cluster.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..nn.train.launch import LAUNCHERS, parse_launcher
from .limit_options import limited

__all__ = ["launch_options", "parse_launcher"]


def launch_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    for option in reversed(
        [
            limited(
                "jobs",
                help="Runs at once: local processes (default 1, in this process; each run gets max(1, cores // N) "
                "torch threads), SLURM's array parallelism, or the runs in flight on Ray.",
            ),
            click.option(
                "--launcher",
                type=click.Choice(LAUNCHERS),
                default="local",
                show_default=True,
                help="Where the runs train: local processes, a SLURM cluster (submitit; pip install "
                "'fsa2rnn[slurm]') or Ray (pip install 'fsa2rnn[ray]'). See docs/cluster.md.",
            ),
            click.option(
                "--launcher-args",
                metavar="JSON",
                help='The launcher\'s settings as a JSON object, e.g. \'{"partition": "gpu", "time": 120, '
                '"gpus_per_run": 1}\' for slurm or \'{"address": "auto"}\' for ray (docs/cluster.md).',
            ),
        ]
    ):
        fn = option(fn)
    return fn
