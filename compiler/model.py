"""The torch-free compiled model: numpy tensors plus a JSON-able header, saved as safetensors.

File format (DESIGN.md, "Python API"): a safetensors file whose metadata key ``"fsa2rnn"`` holds the header as
JSON. The header always has::

    format        "fsa2rnn.model/1"
    target        "householder" | "diagonal" | "nfsm"
    construction  e.g. "permutation", "rotation", "reflections2", "cascade", "single", "multihead", "stacked"
    states        the automaton's state names (spec order)
    symbols       the automaton's symbol names (spec order)
    initial       index of the initial state
    accepting     list of accepting state indices, or null
    layers        list of per-layer dicts; each has "kind" (which nn layer class runs it) and refers to its
                  tensors by name; targets define the rest (see compiler/README.md)
    readout       how hidden states map back to automaton states (target-defined dict)
    summary       the CLI summary (width, layers, factors_per_step or heads, theorem bounds, ...)

Model files are never unpickled. Loading checks the header and that every tensor it names is present with the
declared shape; a tampered file raises ModelFileError.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from fsa2rnn.fsa.errors import ModelFileError
from fsa2rnn.fsa.io import atomic_write

MODEL_FORMAT = "fsa2rnn.model/1"
_REQUIRED = ("format", "target", "construction", "states", "symbols", "initial", "layers", "readout")


@dataclass
class CompiledModel:
    """Compiled weights: ``header`` (JSON-able dict, see module docstring) and ``tensors`` (name → numpy array)."""

    header: dict[str, Any]
    tensors: dict[str, np.ndarray] = field(default_factory=dict)

    # convenience views of the header
    @property
    def target(self) -> str:
        return self.header["target"]

    @property
    def construction(self) -> str:
        return self.header["construction"]

    @property
    def states(self) -> list[str]:
        return list(self.header["states"])

    @property
    def symbols(self) -> list[str]:
        return list(self.header["symbols"])

    @property
    def initial(self) -> int:
        return int(self.header["initial"])

    @property
    def layers(self) -> list[dict[str, Any]]:
        return list(self.header["layers"])

    @property
    def summary(self) -> dict[str, Any]:
        return dict(self.header.get("summary", {}))

    def validate(self) -> CompiledModel:
        """Check the header's required keys and that the tensors are finite numeric arrays; returns self."""
        h = self.header
        if not isinstance(h, dict):
            raise ModelFileError("model header is not a JSON object")
        for key in _REQUIRED:
            if key not in h:
                raise ModelFileError(f"model header is missing {key!r}")
        if h["format"] != MODEL_FORMAT:
            raise ModelFileError(f"model format {h['format']!r} is not {MODEL_FORMAT!r}")
        n = len(h["states"])
        if not isinstance(h["initial"], int) or not 0 <= h["initial"] < n:
            raise ModelFileError(f"model header: initial state {h['initial']!r} out of range")
        for name, arr in self.tensors.items():
            if not isinstance(arr, np.ndarray):
                raise ModelFileError(f"tensor {name!r} is not an array")
            if arr.dtype.kind == "f" and not np.all(np.isfinite(arr)):
                raise ModelFileError(f"tensor {name!r} has non-finite entries")
        shapes = h.get("tensor_shapes")
        if shapes is not None:
            for name, shape in shapes.items():
                if name not in self.tensors:
                    raise ModelFileError(f"model file lacks tensor {name!r} named in its header")
                if list(self.tensors[name].shape) != list(shape):
                    raise ModelFileError(
                        f"tensor {name!r} has shape {list(self.tensors[name].shape)}, header says {list(shape)}"
                    )
        return self

    # ------------------------------------------------------------------ files
    def save(self, path: str | Path) -> None:
        """Write a safetensors file (atomically: a failure leaves no file)."""
        from safetensors.numpy import save_file

        header = dict(self.header)
        header["tensor_shapes"] = {k: list(v.shape) for k, v in self.tensors.items()}
        tensors = {k: np.ascontiguousarray(v) for k, v in self.tensors.items()}
        meta = {"fsa2rnn": json.dumps(header, default=_json_default)}
        atomic_write(path, lambda p: save_file(tensors, str(p), metadata=meta))

    @classmethod
    def load(cls, path: str | Path) -> CompiledModel:
        """Read a model file; ModelFileError on anything unreadable, malformed or inconsistent."""
        from safetensors import safe_open

        p = Path(path)
        if not p.is_file():
            raise ModelFileError(f"no such model file: {str(p)!r}")
        try:
            with safe_open(str(p), framework="numpy") as f:
                meta = f.metadata() or {}
                tensors = {k: f.get_tensor(k) for k in f.keys()}
        except Exception as exc:  # safetensors raises several types for corrupt files
            raise ModelFileError(f"cannot read model file {str(p)!r}: {' '.join(str(exc).split())}") from None
        if "fsa2rnn" not in meta:
            raise ModelFileError(f"{str(p)!r} is not an fsa2rnn model (no 'fsa2rnn' header)")
        try:
            header = json.loads(meta["fsa2rnn"])
        except json.JSONDecodeError:
            raise ModelFileError(f"{str(p)!r}: the fsa2rnn header is not valid JSON") from None
        return cls(header, tensors).validate()


def _json_default(o: Any) -> Any:
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")
