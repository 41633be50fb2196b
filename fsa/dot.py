"""Graphviz export: DOT source, and SVG/PNG/PDF through Graphviz's ``dot`` binary when it is installed."""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import FsaError, LimitExceededError
from .io import atomic_write

if TYPE_CHECKING:  # the operations build automata with Automaton.replace: no import cycle
    from .automaton import Automaton

#: Automata with more states than this are refused (the drawing would be unreadable and slow to lay out).
MAX_DOT_STATES = 2_000
_MAX_LABEL = 40


def _quote(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def to_dot(a: Automaton, max_states: int = MAX_DOT_STATES) -> str:
    """DOT source: one node per state (accepting states double circles, an arrow into the initial state), one edge
    per (source, target) pair labelled with its symbols (long labels abbreviated)."""
    if a.n_states > max_states:
        raise LimitExceededError(f"DOT export of {a.n_states} states exceeds the limit of {max_states}")
    acc = a.accepting
    lines = ["digraph automaton {", "  rankdir=LR;", '  node [shape=circle, fontname="Helvetica"];']
    if a.name:
        lines.append(f"  label={_quote(a.name)};")
    if a.initial is not None:
        lines.append('  __start [shape=point, label=""];')
        lines.append(f"  __start -> {a.initial};")
    for q, name in enumerate(a.states):
        shape = ", shape=doublecircle" if acc is not None and acc[q] else ""
        lines.append(f"  {q} [label={_quote(name)}{shape}];")
    edges: dict[tuple[int, int], list[str]] = {}
    t = a.transitions
    for x, sym in enumerate(a.symbols):
        for q, r in enumerate(t[x].tolist()):
            edges.setdefault((q, r), []).append(sym)
    for (q, r), syms in edges.items():
        label = ",".join(syms)
        if len(label) > _MAX_LABEL:
            label = label[: _MAX_LABEL - 1] + f"… ({len(syms)})"
        lines.append(f"  {q} -> {r} [label={_quote(label)}];")
    lines.append("}")
    return "\n".join(lines) + "\n"


def graphviz_available() -> bool:
    return shutil.which("dot") is not None


def write_dot(source: str, path: str | Path) -> None:
    """Write DOT source to ``path``; a .svg/.png/.pdf path is rendered with Graphviz's ``dot`` (FsaError when it is
    not installed). The file is written atomically."""
    atomic_write(path, dot_writer(source, path))


def dot_writer(source: str, path: str | Path) -> Callable[[Path], None]:
    """The function that writes ``source`` to a (temporary) path in the format of ``path``'s extension: DOT text,
    or .svg/.png/.pdf rendered by Graphviz's ``dot`` (FsaError at once when it is not installed)."""
    target = Path(path)
    fmt = target.suffix.lower().lstrip(".")
    if fmt in ("svg", "png", "pdf"):
        exe = shutil.which("dot")
        if exe is None:
            raise FsaError(f"cannot write {str(target)!r}: Graphviz's `dot` is not installed (write a .dot file)")

        def render(tmp: Path) -> None:
            subprocess.run([exe, f"-T{fmt}", "-o", str(tmp)], input=source.encode(), check=True, timeout=120)

        return render
    return lambda tmp: tmp.write_text(source)
