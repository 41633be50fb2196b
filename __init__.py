"""fsa2rnn: compile finite automata into neural networks that provably track their state, and check that they do.

Subpackages: :mod:`fsa2rnn.fsa` (automata, monoids, decompositions), :mod:`fsa2rnn.compiler` (exact weights),
:mod:`fsa2rnn.nn` (torch layers), :mod:`fsa2rnn.realize` (realization checks), :mod:`fsa2rnn.cli` (the CLI).
"""

__version__ = "0.1.0"
