"""MkDocs hooks.

- The API reference reads the package from this checkout, whatever the checkout's folder is called: the repository
  root is the ``fsa2rnn`` package itself (pyproject.toml maps ``fsa2rnn`` to ``.``), so the hook links it as ``fsa2rnn``
  in a temporary folder and gives that folder to mkdocstrings' Python handler (griffe reads the source; nothing is
  imported).
- Every page is navigable: a page under docs/ that mkdocs.yml's nav does not list is added under "More pages"
  (:func:`unlisted_pages`), so a new page never drops out of the site."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.plugins import event_priority

ROOT = Path(__file__).resolve().parents[1]


def nav_pages(nav: Any) -> set[str]:
    """The page paths a MkDocs nav lists (nested sections included)."""
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, dict):
        return set().union(*(nav_pages(v) for v in nav.values()))
    if isinstance(nav, list):
        return set().union(*(nav_pages(v) for v in nav)) if nav else set()
    return set()


def unlisted_pages(docs: Path, nav: Any) -> list[str]:
    """The markdown pages under ``docs`` that ``nav`` does not list, sorted."""
    listed = nav_pages(nav)
    pages = (p.relative_to(docs).as_posix() for p in docs.rglob("*.md"))
    return sorted(p for p in pages if p not in listed)


@event_priority(100)  # before mkdocstrings reads its handler options
def on_config(config: Any) -> Any:
    extra = unlisted_pages(Path(config["docs_dir"]), config["nav"])
    if extra:
        config["nav"].append({"More pages": extra})
    folder = Path(tempfile.mkdtemp(prefix="fsa2rnn-docs-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    (folder / "fsa2rnn").symlink_to(ROOT, target_is_directory=True)
    handlers = config["plugins"]["mkdocstrings"].config.setdefault("handlers", {})
    python = handlers.setdefault("python", {})
    python["paths"] = [str(folder)]
    return config
