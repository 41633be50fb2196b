"""``fsa2rnn reproduce NAME``: a paper's table regenerated from ordinary training runs (docs/reproductions.md).

A reproduction is one module here that defines a :class:`~.base.Reproduction` subclass and one entry in
:data:`REGISTRY` (name → ``module:Class``). The runner (runner.py) does the rest for every reproduction: it expands
the (task, model, arm, seed) grid with :meth:`Reproduction.jobs`, trains each job as an ordinary run under
``DIR/runs/`` (resumable: a finished run is read back, not re-run), and writes ``DIR/table.json``, ``DIR/table.md``
and ``DIR/plot.png`` from :meth:`Reproduction.cell` (the aggregate the paper reports per cell) beside the paper's
values (:attr:`Reproduction.paper`). docs/reproductions.md documents the interface and every registered table.
"""

from __future__ import annotations

import importlib

from fsa2rnn.fsa.errors import SpecError

from .base import Job, Reproduction

#: name → "module:Class" (modules relative to this package); add one line per reproduction
REGISTRY: dict[str, str] = {
    "brandoit-table1": "brandoit_table1:BrandoitTable1",
    "grazzi-table3": "grazzi_table3:GrazziTable3",
    "grazzi-s5": "grazzi_s5:GrazziS5",
    "dlr-atomic": "dlr_atomic:DLRAtomic",
}


def get_reproduction(name: str) -> Reproduction:
    if name not in REGISTRY:
        from fsa2rnn.fsa.registry import unknown_name_message

        raise SpecError(unknown_name_message("reproduction", name, REGISTRY))
    module, cls = REGISTRY[name].split(":")
    return getattr(importlib.import_module(f".{module}", __package__), cls)()


__all__ = ["REGISTRY", "Job", "Reproduction", "get_reproduction"]
