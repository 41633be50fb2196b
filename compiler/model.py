"""The torch-free compiled model: numpy tensors plus a JSON-able header, saved as safetensors.

File format: a safetensors file whose metadata key ``"fsa2rnn"`` holds the header as JSON. The header always
has::

    format        "fsa2rnn.model/2"
    target        "householder" | "diagonal" | "nfsm"
    construction  e.g. "permutation", "rotation", "reflections2", "cascade", "single", "multihead", "stacked"
    states        the automaton's state names (spec order)
    symbols       the automaton's symbol names (spec order)
    initial       index of the initial state
    accepting     list of accepting state indices, or null
    layers        list of per-layer dicts; each has "kind" (which nn layer class runs it) and refers to its
                  tensors by name; targets define the rest (see compiler/targets/lrnn/README.md)
    readout       how hidden states map back to automaton states (target-defined dict)
    summary       the CLI summary (width, layers, factors_per_step or heads, theorem bounds, ...)
    automaton     the target automaton the model was compiled from, as a spec (``Automaton.to_spec``: names,
                  transitions, accepting, name; its initial state is the model's): ``verify`` compares with it
    tensor_shapes every tensor's shape (written by ``save``)
    sha256        the integrity hash (fsa2rnn.fsa.signed.signature, written by ``save`` and by the compilers)

Integrity. ``sha256`` is the SHA-256 of the canonical JSON of the header without ``sha256`` (sorted keys, no
spaces) followed by every tensor's name, dtype, shape and bytes in name order. ``load`` refuses a file whose hash
is missing or wrong, so a flipped byte or an edited header (a renamed state, a changed table) is bad input. The
hash detects corruption and accidental edits, not a deliberate forger, who can recompute it. Files of the earlier
format "fsa2rnn.model/1" (no hash, no stored automaton) are refused: recompile them. In memory, the compilers seal
what they return, ``nn.load_model`` and ``verify_model`` check a model that carries a hash, and ``seal()`` records
a deliberate edit made in Python.

Model files are never unpickled. Loading also checks the header and that every tensor it names is present with
the declared shape; a malformed file raises ModelFileError.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from safetensors import numpy as safetensors_numpy

from ..fsa.automaton import Automaton
from ..fsa.errors import FsaError, LimitExceededError, ModelFileError, UnknownStateError
from ..fsa.io import atomic_write
from ..fsa.signed import HASH_KEY, array_entries, check_signature, read_signed, signature, signed_metadata

MODEL_FORMAT = "fsa2rnn.model/2"
#: formats this version refuses with a hint to recompile
_OLD_FORMATS = ("fsa2rnn.model/1",)
_REQUIRED = ("format", "target", "construction", "states", "symbols", "initial", "layers", "readout", "automaton")
#: the largest header safetensors writes or reads (its JSON: the tensors' entries and the metadata)
MAX_HEADER_BYTES = 100_000_000
#: an upper bound on one tensor's entry in that header (name, dtype, shape, offsets)
_TENSOR_ENTRY_BYTES = 256
_POWERS = 10 ** np.arange(1, 19, dtype=np.int64)


def resolve_initial(automaton: Automaton, initial: int | str | None) -> int:
    """The initial state index: ``initial`` if given, else the automaton's; a spec without one needs --initial."""
    if initial is not None:
        return automaton.state_index(initial)
    if automaton.initial is None:
        raise UnknownStateError("the automaton has no initial state: it needs --initial STATE")
    return automaton.initial


def stored_automaton(automaton: Automaton, initial: int) -> dict[str, Any]:
    """The header's ``automaton`` entry: the target's spec, with the model's initial state."""
    return automaton.replace(initial=int(initial)).to_spec()


def check_header_size(automaton: Automaton) -> None:
    """LimitExceededError, before any compilation, when a model of ``automaton`` cannot be saved: its header
    stores the automaton's spec and its names a second time, which safetensors refuses beyond
    :data:`MAX_HEADER_BYTES`. The count is a lower bound (digits and separators of the transitions, the names
    with their quotes), exact enough that a refusal is certain."""
    t = automaton.transitions
    digits = int(np.searchsorted(_POWERS, t.ravel(), side="right").sum()) + t.size  # digits of each entry
    names = sum(map(len, automaton.states)) + sum(map(len, automaton.symbols))
    count = len(automaton.states) + len(automaton.symbols)
    size = digits + 2 * t.size + 2 * (names + 6 * count)  # ", " after each entry; each name twice, quoted
    if size > MAX_HEADER_BYTES:
        raise LimitExceededError(_header_message(size, automaton))


def _header_message(size: int, automaton: Automaton | None = None) -> str:
    what = "" if automaton is None else f" ({automaton.n_states:,} states × {automaton.n_symbols:,} symbols)"
    return (
        f"the model file's header would hold {size:,} bytes{what}, over the {MAX_HEADER_BYTES:,} that safetensors "
        "stores: the header keeps the automaton's table and names; compile a smaller automaton"
    )


@dataclass(repr=False)
class CompiledModel:
    """Compiled weights: ``header`` (JSON-able dict, see module docstring) and ``tensors`` (name → numpy array)."""

    header: dict[str, Any]
    tensors: dict[str, np.ndarray] = field(default_factory=dict)

    def __repr__(self) -> str:
        """One line: target, construction, the automaton's size, the tensors' — the report is ``.summary``."""
        h = self.header
        name = (h.get("automaton") or {}).get("name")
        nbytes = sum(int(np.asarray(t).nbytes) for t in self.tensors.values())
        return (
            f"<CompiledModel {h.get('target', '?')}/{h.get('construction', '?')}"
            f"{' ' + repr(name) if name else ''}: {len(h.get('states', ()))} states, {len(h.get('symbols', ()))} "
            f"symbols, {_count(len(h.get('layers', ())), 'layer')}, {len(self.tensors)} tensors ({_size(nbytes)}); the "
            f"compile report: .summary (a dict)>"
        )

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

    def target_automaton(self) -> Automaton:
        """The automaton the model was compiled from (header ``automaton``), started at the model's initial state."""
        try:
            a = Automaton.from_spec(self.header["automaton"])
        except KeyError:
            raise ModelFileError("model header is missing 'automaton' (the target automaton)") from None
        except FsaError as exc:
            raise ModelFileError(f"model header: the stored automaton is malformed: {exc}") from None
        h = self.header
        acc = h.get("accepting")
        if (
            list(a.states) != list(h["states"])
            or list(a.symbols) != list(h["symbols"])
            or a.initial != h["initial"]
            or (None if a.accepting is None else list(a.accepting_states)) != (None if acc is None else list(acc))
        ):
            raise ModelFileError("model header: the stored automaton's names, initial or accepting states differ")
        return a

    def seal(self) -> CompiledModel:
        """Record the integrity hash of the header and tensors as they are now (``header["sha256"]``); returns self."""
        self.header[HASH_KEY] = signature(self.header, array_entries(self.tensors))
        return self

    def check_integrity(self, *, required: bool = False) -> None:
        """ModelFileError if the recorded hash does not match the header and tensors (or is missing and
        ``required``: model files always carry one; a model built in memory may not)."""
        if self.header.get(HASH_KEY) is not None or required:
            check_signature(self.header, array_entries(self.tensors), what="model")

    def validate(self) -> CompiledModel:
        """Check the header's required keys, the stored automaton, and that the tensors are finite numeric
        arrays; returns self."""
        h = self.header
        if not isinstance(h, dict):
            raise ModelFileError("model header is not a JSON object")
        if h.get("format") in _OLD_FORMATS:
            raise ModelFileError(
                f"model format {h['format']!r} was written by an earlier fsa2rnn (no integrity hash, no stored "
                f"target automaton); recompile the model (format {MODEL_FORMAT!r})"
            )
        for key in _REQUIRED:
            if key not in h:
                raise ModelFileError(f"model header is missing {key!r}")
        if h["format"] != MODEL_FORMAT:
            raise ModelFileError(f"model format {h['format']!r} is not {MODEL_FORMAT!r}")
        n = len(h["states"])
        if not isinstance(h["initial"], int) or isinstance(h["initial"], bool) or not 0 <= h["initial"] < n:
            raise ModelFileError(f"model header: initial state {h['initial']!r} out of range")
        self.target_automaton()
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
        """Write a signed safetensors file (fsa2rnn.fsa.signed; atomically: a failure leaves no file)."""
        atomic_write(path, self.writer())

    def writer(self) -> Callable[[Path], None]:
        """The function that writes this model to a path (``save``; the CLI stages it with
        ``fsa.io.staged_write`` so that the file appears only once the report is printed). LimitExceededError at
        once when the header exceeds what safetensors stores (:data:`MAX_HEADER_BYTES`)."""
        header = dict(self.header)
        header["tensor_shapes"] = {k: list(v.shape) for k, v in self.tensors.items()}
        tensors = {k: np.ascontiguousarray(v) for k, v in self.tensors.items()}
        meta = signed_metadata(header, array_entries(tensors))
        size = len(json.dumps(meta)) + _TENSOR_ENTRY_BYTES * len(tensors)
        if size > MAX_HEADER_BYTES:
            raise LimitExceededError(_header_message(size))
        return lambda p: safetensors_numpy.save_file(tensors, str(p), metadata=meta)

    @classmethod
    def load(cls, path: str | Path) -> CompiledModel:
        """Read a model file; ModelFileError on anything unreadable, malformed or inconsistent."""
        header, _, data = read_signed(path, what="model file")
        if header is None:
            raise ModelFileError(f"{str(path)!r} is not an fsa2rnn model (no 'fsa2rnn' header)")
        try:
            tensors = safetensors_numpy.load(data)
        except Exception as exc:  # safetensors raises several types for corrupt files
            raise ModelFileError(f"cannot read model file {str(path)!r}: {' '.join(str(exc).split())}") from None
        model = cls(header, tensors)
        if header.get("format") not in _OLD_FORMATS:
            model.check_integrity(required=True)
        return model.validate()


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' * (n != 1)}"


def _size(nbytes: int) -> str:
    for unit in ("bytes", "KiB", "MiB"):
        if nbytes < 1024 or unit == "MiB":
            return f"{nbytes:,} {unit}" if unit == "bytes" else f"{nbytes:.1f} {unit}"
        nbytes /= 1024  # type: ignore[assignment]
    return ""
