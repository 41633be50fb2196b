"""Figures for files: matplotlib on its Agg backend (no display needed) and atomic writes, in one place.

matplotlib is imported on first use (it is an extra of the ``nn`` install and slow to import), so importing this
module costs nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .io import atomic_write


def pyplot() -> Any:
    """``matplotlib.pyplot`` drawing on the Agg backend (files only, no display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig: Any, path: str | Path, *, fmt: str | None = None, dpi: int = 90, **savefig: Any) -> None:
    """Write ``fig`` to ``path`` atomically (a temporary file renamed into place: no partial file on failure) in the
    format ``fmt`` (default: the path's extension, else png), then close it."""
    fmt = fmt or Path(path).suffix.lstrip(".").lower() or "png"
    try:
        atomic_write(path, lambda p: fig.savefig(p, format=fmt, dpi=dpi, **savefig))
    finally:
        pyplot().close(fig)


__all__ = ["pyplot", "save_figure"]
