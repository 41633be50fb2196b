"""The built-in compile targets, one folder each: ``lrnn`` (targets "householder" and "diagonal": linear-RNN layers),
``nfsm`` (Neural Finite-State Machines), ``affine`` (the shift register of definite automata) and ``pdssm`` (one
PD-SSM layer). A folder holds its constructions, its program, its exact interpreter, its numpy executor and numpy
recurrent step, and declares its :class:`~fsa2rnn.compiler.registry.Target` in its ``__init__.py``; pyproject.toml
registers them as entry points of the ``fsa2rnn.targets`` group, as a plug-in registers its own (docs/extending.md).
"""
