"""Progress on long work: the stage bar of fsa2rnn.fsa.progress (tqdm on stderr; lines at a lower rate when stderr is
not a terminal; off with --quiet)."""

from __future__ import annotations

from fsa2rnn.fsa.progress import stages

__all__ = ["stages"]
