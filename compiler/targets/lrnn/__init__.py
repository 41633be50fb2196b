"""Linear-RNN targets: layers H_t = A(r_t) H_{t−1} + B(r_t) whose row r_t is keyed by the symbol and the decoded
states of the layers above one step earlier (README.md here: the model format).

- ``householder`` (negative-eigenvalues paper): A(r) a product of generalized Householder reflections —
  constructions permutation (Theorem 3), rotation (C.1), reflections2 (Theorem 6) and cascade (Theorem 4,
  holonomy): householder.py;
- ``diagonal``: A(r) = diag(λ), |λ| = 1 or resets — constructions group, cascade and series (abelian and solvable
  groups): diagonal.py.

Both share the program (program.py), the exact interpreter and check (exact.py), the numpy executor (executor.py),
the numpy recurrent step (step.py) and the torch module (nn/compiled/lrnn.py).
"""

from __future__ import annotations

from ...registry import Target

_HERE = "fsa2rnn.compiler.targets.lrnn"
_SCANS = ({"scan": "sequential"}, {"scan": "parallel"}, {"scan": "auto"})
_COMMON = dict(
    program=f"{_HERE}.program:LinearRNNProgram",
    numpy_executor=f"{_HERE}.executor:LinearRNNExecutor",
    exact_interpreter=f"{_HERE}.exact:ExactLinearRNN",
    torch_module="fsa2rnn.nn.compiled.lrnn:LinearRNNModel",
    check=f"{_HERE}.exact:verify_check",
    robustness="fsa2rnn.realize.conditions:linear_rnn_conditions",
    realized_automaton=f"{_HERE}.exact:realized_automaton",
)

HOUSEHOLDER = Target(
    name="householder",
    description="linear-RNN layers whose A(x) is a product of generalized Householder reflections",
    compile=f"{_HERE}.householder:compile_householder",
    constructions=("auto", "permutation", "rotation", "reflections2", "cascade"),
    sequence_model="fsa2rnn.nn.from_compiled:householder_sequence_model",
    torch_variants=tuple({**s, "mode": m} for s in _SCANS for m in ("fused", "factors")),
    docs="guide/compile-householder.md",
    **_COMMON,
)

DIAGONAL = Target(
    name="diagonal",
    description="linear-RNN layers with diagonal A(x) of unit-modulus (complex) entries or resets",
    compile=f"{_HERE}.diagonal:compile_diagonal",
    constructions=("auto", "group", "cascade", "series"),
    sequence_model="fsa2rnn.nn.from_compiled:diagonal_sequence_model",
    torch_variants=_SCANS,
    docs="guide/compile-diagonal.md",
    **_COMMON,
)

__all__ = ["DIAGONAL", "HOUSEHOLDER"]
