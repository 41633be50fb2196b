"""A toy task, registered as ``toy-count3`` through this package's entry points: the number of 1s read so far,
modulo 3, on words of 0s and 1s (every position judged)."""

from __future__ import annotations

import numpy as np

from fsa2rnn.fsa import Automaton
from fsa2rnn.nn.tasks import AutomatonTask


def count3() -> AutomatonTask:
    """The task: a word problem of Z3 on the symbols 0 (stay) and 1 (add one)."""
    automaton = Automaton(
        np.array([[0, 1, 2], [1, 2, 0]]), states=["0", "1", "2"], symbols=["0", "1"], initial=0, name="count3"
    )
    return AutomatonTask(
        automaton,
        name="toy-count3",
        source="fsa2rnn_toys (a test plug-in)",
        description="the number of 1s read so far, modulo 3",
        default_train_length=(3, 12),
    )
