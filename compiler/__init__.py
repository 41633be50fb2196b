"""Compilers: Automaton | Cascade → exact weights, as a torch-free :class:`CompiledModel`.

One ``compile_*`` function per target shows the whole path (docs/architecture.md):
``compile_householder`` (Grazzi et al.), ``compile_diagonal``, ``compile_nfsm`` (Brandoit et al.), ``compile_affine``
(definite automata, Theorem 4.1 (iii)), ``compile_pdssm`` (Terzić et al.: any automaton as one PD-SSM layer).
"""

from __future__ import annotations

from fsa2rnn.fsa.lazy import lazy_getattr

from .model import MODEL_FORMAT, CompiledModel

__all__ = [
    "CompiledModel",
    "MODEL_FORMAT",
    "compile_householder",
    "compile_diagonal",
    "compile_nfsm",
    "compile_affine",
    "compile_pdssm",
]

__getattr__ = lazy_getattr(
    __name__,
    {
        "compile_householder": ("householder", "compile_householder"),
        "compile_diagonal": ("diagonal", "compile_diagonal"),
        "compile_nfsm": ("automaton_to_nfsm", "compile_nfsm"),
        "compile_affine": ("definite_to_affine", "compile_affine"),
        "compile_pdssm": ("automaton_to_pdssm", "compile_pdssm"),
    },
)
