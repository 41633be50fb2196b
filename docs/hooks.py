"""MkDocs hook: the API reference reads the package from this checkout, whatever the checkout's folder is called.

The repository root is the ``fsa2rnn`` package itself (setup.py maps ``fsa2rnn`` to ``.``), so the hook links it as
``fsa2rnn`` in a temporary folder and gives that folder to mkdocstrings' Python handler (griffe reads the source;
nothing is imported)."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def on_config(config: Any) -> Any:
    folder = Path(tempfile.mkdtemp(prefix="fsa2rnn-docs-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    (folder / "fsa2rnn").symlink_to(ROOT, target_is_directory=True)
    handlers = config["plugins"]["mkdocstrings"].config.setdefault("handlers", {})
    python = handlers.setdefault("python", {})
    python["paths"] = [str(folder)]
    return config
