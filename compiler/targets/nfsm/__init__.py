"""The NFSM target (length-independent-state-tracking §6): layers of heads whose argmax tables of the logits of
every key move attractor indices; the key of a stacked layer adds the indices of the heads above one step earlier.
The plan of heads and layers (heads.py, families.py), the logits (logits.py), the compiler (automaton_to_nfsm.py),
the program (program.py), the machine on configurations — the exact interpreter (exact.py) —, the numpy executor
(executor.py) and recurrent step (step.py); the torch module is nn/compiled/nfsm.py, the margin certificate and the
table extraction realize/certificate.py and realize/extract.py. README.md here: the model format.
"""

from __future__ import annotations

from ...registry import CompileOption, Target

_HERE = "fsa2rnn.compiler.targets.nfsm"

NFSM = Target(
    name="nfsm",
    description="Neural Finite-State Machine: heads of attractor indices moved by argmax tables of logits",
    compile=f"{_HERE}.automaton_to_nfsm:compile_nfsm",
    constructions=("auto",),
    options=(
        CompileOption("heads", "auto|single|multi: one head of |Q| indices, or heads per factor.",
                      choices=("auto", "single", "multi")),
        CompileOption("layers", "auto|single|stacked: stacked = one layer per level of the holonomy cascade.",
                      choices=("auto", "single", "stacked")),
        CompileOption("margin", "the logit margin (default 1.0).", kind=float),
    ),  # fmt: skip
    program=f"{_HERE}.program:NFSMProgram",
    numpy_executor=f"{_HERE}.executor:NFSMExecutor",
    exact_interpreter=f"{_HERE}.exact:NFSMMachine.from_program",
    torch_module="fsa2rnn.nn.compiled.nfsm:NFSMModel",
    check="fsa2rnn.realize.certificate:verify_check",
    check_summary="the margin certificate and the extraction of its tables",
    robustness="fsa2rnn.realize.conditions:nfsm_conditions",
    realized_automaton="fsa2rnn.realize.extract:extracted_automaton",
    extraction="fsa2rnn.realize.extract:compiled_nfsm_machine",
    compile_report="fsa2rnn.realize.certificate:compile_report",
    sequence_model="fsa2rnn.nn.from_compiled:nfsm_sequence_model",
    torch_variants=({"impl": "auto"}, {"impl": "naive"}, {"impl": "chunked"}),
    docs="guide/compile-nfsm.md",
)

__all__ = ["NFSM"]
