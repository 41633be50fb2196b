"""A toy compile target from outside fsa2rnn: the one-hot permutation-matrix RNN of a group automaton.

The state is the one-hot vector e_q of the automaton's state q; symbol x multiplies it by the permutation matrix
M(x) of δ_x (M(x)[δ_x(q), q] = 1), so h_t = M(x_t) h_{t−1} stays one-hot and reads out as the coordinate that is 1.
It exists to show that a target is one folder and one registration: this package's
``fsa2rnn_toys-0.1.dist-info/entry_points.txt`` declares ``onehot = fsa2rnn_toys.onehot:TARGET`` in the
``fsa2rnn.targets`` group, and fsa2rnn's commands (compile, run, verify) and its conformance test run it without a
line of fsa2rnn changed. The folder: the compiler and exact check (compile.py), the program (program.py), the numpy
executor, exact interpreter and numpy step (run.py), the torch module (module.py).
"""

from __future__ import annotations

from fsa2rnn.compiler import Target

_HERE = "fsa2rnn_toys.onehot"

TARGET = Target(
    name="onehot",
    description="toy: a one-hot state multiplied by the permutation matrix of each symbol (group automata)",
    compile=f"{_HERE}.compile:compile_onehot",
    constructions=("auto", "permutation"),
    program=f"{_HERE}.program:OneHotProgram",
    numpy_executor=f"{_HERE}.run:OneHotExecutor",
    exact_interpreter=f"{_HERE}.run:ExactOneHot",
    torch_module=f"{_HERE}.module:OneHotModule",
    check=f"{_HERE}.compile:verify_check",
)
