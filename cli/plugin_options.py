"""``--model package.module:Name`` and ``--allow-changed-plugin`` of the commands that read a run (eval, compare): the
plug-in a run records, named again so that it may be imported (nn/plugins.py). Kept apart from cli/options.py so
that the symbolic commands never load fsa2rnn.nn."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..nn.plugins import check_ref


def plugin_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--model package.module:Name`` (the plug-in a run records, named again so that it may be imported: a run
    directory never imports code on its own, nn/plugins.py) and ``--allow-changed-plugin``."""
    fn = click.option("--allow-changed-plugin", is_flag=True,
                      help="Use the run's plug-in even though its source changed since the run was trained.")(fn)
    return click.option("--model", "plugin", default=None, metavar="MODULE:NAME",
                        help="The plug-in the run was trained with (package.module:Name), to import it: a run "
                             "directory alone never makes fsa2rnn import code.")(fn)  # fmt: skip


def checked_plugin(plugin: str | None) -> tuple[str, ...]:
    """The import paths of ``--model`` (checked torch-free: the form package.module:Name)."""
    if plugin is None:
        return ()
    return (check_ref(plugin),)
