"""A family of tasks under one prefix: one entry of the task registry (torch-free, so that listing needs no torch)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...fsa.errors import UnknownBuiltinError
from ...fsa.registry import did_you_mean


@dataclass(frozen=True)
class TaskFamily:
    """Tasks under one prefix, registered as one entry of the task registry under ``name``: its tasks are named
    ``name:…`` (``grazzi:parity``, ``brandoit:FF``), so that they never shadow a builtin spec. ``tasks`` maps each
    full name to a function building the task; ``source`` says where the family comes from."""

    name: str
    tasks: dict[str, Any]
    source: str = ""

    def names(self) -> list[str]:
        return list(self.tasks)

    def get(self, name: str) -> Any:
        """The task ``name`` (a key of ``tasks``); UnknownBuiltinError naming the family otherwise."""
        if name not in self.tasks:
            raise UnknownBuiltinError(
                f"unknown task {name!r} (run `fsa2rnn tasks` for the list{did_you_mean(name, self.tasks)})"
            )
        return self.tasks[name]()
