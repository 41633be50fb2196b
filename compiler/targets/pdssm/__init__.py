"""The PD-SSM target (Terzić et al.): any automaton as one layer h_t = P(x_t) D(x_t) h_{t−1} with P(x) = δ_x as index
arrays and D = 1, read out one-hot (automaton_to_pdssm.py: the construction, its exact check and the automaton a
model realizes); its program (program.py), exact interpreter (exact.py) and numpy executor (executor.py); the torch
module is nn/compiled/pdssm.py.
"""

from __future__ import annotations

from ...registry import Target

_HERE = "fsa2rnn.compiler.targets.pdssm"

PDSSM = Target(
    name="pdssm",
    description="one PD-SSM layer h_t = P(x_t) D(x_t) h_{t−1}: a permutation-like P(x) as index arrays, D = 1",
    compile=f"{_HERE}.automaton_to_pdssm:compile_pdssm",
    constructions=("auto", "one_hot"),
    program=f"{_HERE}.program:PDSSMProgram",
    numpy_executor=f"{_HERE}.executor:PDSSMExecutor",
    exact_interpreter=f"{_HERE}.exact:ExactPDSSM",
    torch_module="fsa2rnn.nn.compiled.pdssm:PDSSMModel",
    check=f"{_HERE}.automaton_to_pdssm:verify_check",
    realized_automaton=f"{_HERE}.automaton_to_pdssm:realized_automaton",
    sequence_model="fsa2rnn.nn.pdssm_from_compiled:pdssm_sequence_model",
    docs="layers.md",
)

__all__ = ["PDSSM"]
