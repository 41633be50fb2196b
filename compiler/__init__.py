"""Compilers: Automaton | Cascade → exact weights, as a torch-free :class:`CompiledModel`, and what runs them.

One ``compile_*`` function per target shows the whole path (docs/architecture.md):
``compile_householder`` (Grazzi et al.), ``compile_diagonal``, ``compile_nfsm`` (Brandoit et al.), ``compile_affine``
(definite automata, Theorem 4.1 (iii)), ``compile_pdssm`` (Terzić et al.: any automaton as one PD-SSM layer); every
target is one folder of compiler/targets/ and one :class:`Target` in the registry (compiler/registry.py:
``compile_model(automaton, target, …)``, ``get_target``, ``register_target`` for plug-ins). ``program_of`` reads a
model's program, ``load_executor`` runs it in numpy at float64, ``exact_executor`` in integer arithmetic.
"""

from __future__ import annotations

from ..fsa.lazy import lazy_getattr
from .model import MODEL_FORMAT, CompiledModel
from .registry import (
    TARGETS,
    CompileOption,
    Target,
    compile_model,
    exact_executor,
    get_target,
    load_executor,
    program_of,
    register_target,
    target_names,
    target_of,
)

__all__ = [
    "CompiledModel",
    "CompileOption",
    "MODEL_FORMAT",
    "TARGETS",
    "Target",
    "compile_affine",
    "compile_diagonal",
    "compile_householder",
    "compile_model",
    "compile_nfsm",
    "compile_pdssm",
    "exact_check",
    "exact_executor",
    "get_target",
    "load_executor",
    "program_of",
    "register_target",
    "target_names",
    "target_of",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "compile_householder": ("targets.lrnn.householder", "compile_householder"),
        "compile_diagonal": ("targets.lrnn.diagonal", "compile_diagonal"),
        "compile_nfsm": ("targets.nfsm.automaton_to_nfsm", "compile_nfsm"),
        "compile_affine": ("targets.affine.definite_to_affine", "compile_affine"),
        "compile_pdssm": ("targets.pdssm.automaton_to_pdssm", "compile_pdssm"),
        "exact_check": ("targets.lrnn.exact", "exact_check"),
    },
)
