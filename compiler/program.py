"""What the program of every compiled model shares: the typed, validated, read-only view of a
:class:`CompiledModel`'s header and tensors. Each compile target defines its program class in its folder
(compiler/targets/<name>/program.py, subclassing :class:`Program`, read with :class:`HeaderReader`); the target
registry (compiler/registry.py) maps a model's ``target`` to it, and :func:`~fsa2rnn.compiler.program_of` returns
the parsed program. Programs are the only code that reads a model's header dicts: every executor (numpy, torch,
exact interpreter, recurrent step) builds from one. A malformed model raises ModelFileError naming what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..fsa.errors import ModelFileError, UnknownStateError
from .model import CompiledModel
from .xp import Array, clip_low, on_device_of


def frozen(a: Any, dtype: Any = None) -> np.ndarray:
    """A read-only copy of ``a`` (a program never shares memory with the model's tensors)."""
    out = np.array(a, dtype=dtype)
    out.setflags(write=False)
    return out


def header_int(v: Any, what: str) -> int:
    """A header entry that must be an integer (ModelFileError naming ``what`` otherwise)."""
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise ModelFileError(f"model header: {what} is {v!r}, not an integer")
    return int(v)


class HeaderReader:
    """Header entries and tensors of one model, each missing or malformed one a ModelFileError naming it."""

    def __init__(self, model: CompiledModel) -> None:
        self.header, self.tensors = model.header, model.tensors

    def tensor(self, name: Any, ndim: int | None = None, dtype: Any = None) -> np.ndarray:
        if not isinstance(name, str) or name not in self.tensors:
            raise ModelFileError(f"model file lacks tensor {name!r} named in its header")
        arr = np.asarray(self.tensors[name])
        if ndim is not None and arr.ndim != ndim:
            raise ModelFileError(f"tensor {name!r} has {arr.ndim} dimensions, expected {ndim}")
        if dtype is int and arr.dtype.kind not in "iu":
            raise ModelFileError(f"tensor {name!r} has dtype {arr.dtype}, expected integers")
        return frozen(arr, np.int64 if dtype is int else np.float64 if dtype is float else None)

    @staticmethod
    def entry(d: Any, key: str, where: str) -> Any:
        if not isinstance(d, dict) or key not in d:
            raise ModelFileError(f"model header: {where} lacks {key!r}")
        return d[key]


@dataclass(frozen=True, eq=False)
class Program:
    """What every target shares: the alphabet, the states, the initial state and the accepting mask. A target's
    program subclasses it with its typed views and a ``parse(model)`` classmethod (read through
    :class:`HeaderReader`, the base's ``_common`` giving these fields)."""

    target: str
    symbols: tuple[str, ...]
    states: tuple[str, ...]
    initial: int
    accepting: np.ndarray | None  #: (n_states,) bool, None when the automaton has no accepting set

    @property
    def n_symbols(self) -> int:
        return len(self.symbols)

    @property
    def n_states(self) -> int:
        return len(self.states)

    def accepting_mask(self) -> np.ndarray:
        """The accepting mask; UnknownStateError when the model's automaton has none (as ``Automaton``)."""
        if self.accepting is None:
            raise UnknownStateError("the model's automaton has no accepting set")
        return self.accepting

    @staticmethod
    def _common(model: CompiledModel) -> dict[str, Any]:
        h = model.header
        n = len(h["states"])
        acc = h.get("accepting")
        mask = None
        if acc is not None:
            mask = np.zeros(n, dtype=bool)
            idx = np.asarray(acc, dtype=np.int64)
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                raise ModelFileError("model header: an accepting state index is out of range")
            mask[idx] = True
            mask.setflags(write=False)
        return {
            "target": str(h["target"]),
            "symbols": tuple(h["symbols"]),
            "states": tuple(h["states"]),
            "initial": int(h["initial"]),
            "accepting": mask,
        }

    @classmethod
    def parse(cls, model: CompiledModel) -> Program:  # pragma: no cover - every target's program defines it
        raise NotImplementedError

    def symbol_spectra(self) -> dict[str, np.ndarray] | None:
        """The eigenvalues of A(x) for every symbol x where the target's step is a linear map A(x) (of its first
        layer, for cascades); None for the other targets (``compare`` puts them beside a trained model's)."""
        return None


def half_norms(codes: Array) -> Array:
    """½‖c‖² of every code point c (the rows of ``codes``, numpy or torch): the bias of the nearest-code readout
    argmax_c ⟨c, h⟩ − ½‖c‖² (the nearest code point in Euclidean distance) every target's readout uses."""
    return 0.5 * (codes * codes).sum(-1)


def accepted(states: Array, mask: Array) -> Array:
    """Whether each state (numpy or torch, any shape) is accepting under ``mask`` (n_states,) bool: False for −1 (past
    a word's length, or a state outside the readout)."""
    mask = on_device_of(mask, states)
    return (states >= 0) & mask[clip_low(states, 0)]


__all__ = ["HeaderReader", "Program", "accepted", "frozen", "half_norms", "header_int"]
