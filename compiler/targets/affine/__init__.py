"""The shift-register target (Theorem 4.1 (iii)): a definite automaton of degree k as h_t = A h_{t−1} + b(x_t) with
A^k = 0, read through a window table (definite_to_affine.py: the construction, its window check and its certified
radius); its program (program.py), exact interpreter (exact.py), numpy executor (executor.py) and recurrent step
(step.py); the torch module is nn/compiled/affine.py.
"""

from __future__ import annotations

from ...registry import Target

_HERE = "fsa2rnn.compiler.targets.affine"

AFFINE = Target(
    name="affine",
    description="a shift register h_t = A h_{t−1} + b(x_t) with nilpotent A, for definite automata",
    compile=f"{_HERE}.definite_to_affine:compile_affine",
    constructions=("auto", "shift_register"),
    program=f"{_HERE}.program:AffineProgram",
    numpy_executor=f"{_HERE}.executor:AffineExecutor",
    exact_interpreter=f"{_HERE}.exact:ExactAffine",
    torch_module="fsa2rnn.nn.compiled.affine:AffineModel",
    check=f"{_HERE}.definite_to_affine:verify_check",
    robustness="fsa2rnn.realize.conditions:affine_conditions",
    compile_report="fsa2rnn.realize.conditions:affine_compile_report",
    torch_variants=({"mode": "window"}, {"mode": "recurrent"}),
    docs="theory.md",
)

__all__ = ["AFFINE"]
