"""The exact interpreters of compiled models, one per target, in integer (or exponent, angle-index) arithmetic:

- linear RNNs (lrnn.py): :class:`ExactLinearRNN` — the weight checks, the configuration graph (one breadth-first
  search, shared by the compiler's exact check, ``verify``, the spectral analysis and ``automaton_from_model``) and
  ``predict_states``;
- NFSMs (nfsm.py): :class:`NFSMMachine` — the machine on head-index configurations given integer tables (from the
  float64 argmax of the compiled logits, or a trained model's tables at a dtype), its exploration and
  ``predict_states``;
- shift registers (affine.py): :class:`ExactAffine` — the window table read on the exact window digits;
- PD-SSMs (pdssm.py): :class:`ExactPDSSM` — the one-hot code point carried as its coordinate.

:func:`exact_executor` gives the one of a compiled model; each answers ``predict_states`` on the same inputs as
the float executors (compiler/inputs.py).
"""

from __future__ import annotations

from typing import Any

from fsa2rnn.fsa.errors import ModelFileError

from ..model import CompiledModel
from ..program import AffineProgram, LinearRNNProgram, NFSMProgram, PDSSMProgram, program_of
from .affine import ExactAffine
from .lrnn import MAX_CONFIGURATIONS, ExactLinearRNN, ExactnessError, exact_check, explore
from .nfsm import NFSMMachine
from .pdssm import ExactPDSSM

#: program class → its exact interpreter (one row per target)
EXACT: dict[type, Any] = {
    LinearRNNProgram: ExactLinearRNN,
    NFSMProgram: NFSMMachine.from_program,
    AffineProgram: ExactAffine,
    PDSSMProgram: ExactPDSSM,
}


def exact_executor(model: CompiledModel) -> Any:
    """The exact interpreter of a compiled model (``predict_states(ids, lengths=None)``)."""
    program = program_of(model)
    if type(program) not in EXACT:
        raise ModelFileError(f"no exact interpreter for target {program.target!r}")
    return EXACT[type(program)](program)


__all__ = [
    "EXACT",
    "MAX_CONFIGURATIONS",
    "ExactAffine",
    "ExactPDSSM",
    "ExactLinearRNN",
    "ExactnessError",
    "NFSMMachine",
    "exact_check",
    "exact_executor",
    "explore",
]
