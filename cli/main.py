"""Entry point of the ``fsa2rnn`` CLI. Each command lives in its own module and is registered here."""

from __future__ import annotations

import importlib

import click

from .. import __version__
from .errors import FsaGroup

# command name -> module (relative to fsa2rnn.cli) defining a click command of that name
COMMANDS = {
    "list": "show",
    "show": "show",
    "analyze": "analyze",
    "decompose": "decompose",
    "compile": "compile",
    "run": "run",
    "verify": "verify",
    "tasks": "tasks",
    "train": "train",
    "eval": "eval",
    "compare": "compare",
    "theorems": "theorems",
    "reproduce": "reproduce",
}


class _LazyGroup(FsaGroup):
    """Loads each command's module on first use, so `fsa2rnn show` never imports torch."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [n for n in COMMANDS if self._load(n) is not None]

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        return self._load(name)

    def _load(self, name: str) -> click.Command | None:
        module = COMMANDS.get(name)
        if module is None:
            return None
        try:
            mod = importlib.import_module(f".{module}", __package__)
        except ModuleNotFoundError as exc:
            if exc.name and exc.name.startswith("fsa2rnn.cli."):
                return None  # command not built yet
            raise
        return getattr(mod, f"{name}_command", None)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fsa2rnn")
def main() -> None:
    """fsa2rnn: compile finite automata into neural networks that provably track their state, and check it.

    SPEC is a JSON spec file, regex:PATTERN, or a builtin name (see `fsa2rnn list`).
    """


if __name__ == "__main__":  # pragma: no cover
    main()
