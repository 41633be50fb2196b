"""pytest plugin for the mutation runs (``-p guard_plugin``): stop at once, exit 4, unless ``fsa2rnn`` is imported
from the mutated copy (``MUTATION_ROOT``) — never from the checkout an editable install points at."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def pytest_sessionstart(session):  # type: ignore[no-untyped-def]
    import fsa2rnn

    root = Path(os.environ["MUTATION_ROOT"]).resolve()
    here = Path(fsa2rnn.__file__).resolve().parent
    if here != root:
        pytest.exit(f"mutation guard: fsa2rnn is imported from {here}, not from the mutated copy {root}", returncode=4)
