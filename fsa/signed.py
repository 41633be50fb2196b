"""Signed safetensors files, the one format of model files and training checkpoints.

A signed file is a safetensors file (named tensors, never pickle) whose metadata key ``"fsa2rnn"`` holds a JSON
header; the header's ``sha256`` is :func:`signature` of the header without it and of every tensor, so a flipped
byte or an edited header is refused on reading. The signature is the SHA-256 of the canonical JSON of the header
(sorted keys, no spaces, after a JSON round trip) followed, for each tensor in name order, by
``\\0 JSON([name, dtype, shape]) \\0`` and its little-endian bytes (dtype as numpy writes it: ``<f8``, ``<i8``,
``|b1``, …). It detects corruption and accidental edits, not a deliberate forger, who can recompute it.

This module is torch-free: it reads the file once as bytes and parses the safetensors header itself (8 bytes of
length, then JSON), so the signature is computed on exactly the bytes read; the caller turns the same bytes into
arrays of its framework (``safetensors.numpy.load`` or ``safetensors.torch.load``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ModelFileError
from .io import atomic_write, safetensors_problem
from .reader import describe_os_error

#: the metadata key of the header, and the header key of the signature
METADATA_KEY = "fsa2rnn"
HASH_KEY = "sha256"
#: safetensors' dtype codes, as numpy writes the dtype (bfloat16 has no numpy dtype: its own name)
DTYPES = {
    "F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "bf16",
    "I64": "<i8", "I32": "<i4", "I16": "<i2", "I8": "|i1",
    "U64": "<u8", "U32": "<u4", "U16": "<u2", "U8": "|u1",
    "BOOL": "|b1",
}  # fmt: skip

#: one tensor as the signature reads it: (name, dtype as numpy writes it, shape, little-endian bytes)
Entry = tuple[str, str, tuple[int, ...], bytes]


def _plain(header: Mapping[str, Any]) -> Any:
    """The header without its signature, as JSON reads it back (numpy scalars and arrays become numbers and lists)."""
    return json.loads(json.dumps({k: v for k, v in header.items() if k != HASH_KEY}, default=json_default))


def signature(header: Mapping[str, Any], entries: Iterable[Entry]) -> str:
    """The SHA-256 of ``header`` (without its own ``sha256``) and the tensors ``entries`` (module docstring)."""
    h = hashlib.sha256(json.dumps(_plain(header), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode())
    for name, dtype, shape, data in sorted(entries):
        h.update(b"\0" + json.dumps([name, dtype, list(shape)]).encode() + b"\0")
        h.update(data)
    return h.hexdigest()


def array_entries(arrays: Mapping[str, np.ndarray]) -> list[Entry]:
    """The entries of numpy arrays, little-endian as safetensors stores them."""
    out = []
    for name, a in arrays.items():
        a = np.asarray(a)
        a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<"))
        out.append((name, a.dtype.str, tuple(a.shape), a.tobytes()))
    return out


def file_entries(data: bytes) -> tuple[dict[str, str], list[Entry]]:
    """(metadata, entries) of the bytes of a safetensors file; ValueError if they are not one."""
    n = int.from_bytes(data[:8], "little")
    table = json.loads(data[8 : 8 + n])
    if not isinstance(table, dict):
        raise ValueError("the safetensors header is not a JSON object")
    meta = table.pop("__metadata__", None) or {}
    body = 8 + n
    entries = []
    for name, spec in table.items():
        start, end = spec["data_offsets"]
        if spec["dtype"] not in DTYPES or not 0 <= start <= end <= len(data) - body:
            raise ValueError(f"tensor {name!r} has an unknown dtype or lies outside the file")
        entries.append((name, DTYPES[spec["dtype"]], tuple(spec["shape"]), data[body + start : body + end]))
    return meta, entries


def read_signed(path: str | Path, *, what: str) -> tuple[dict[str, Any] | None, list[Entry], bytes]:
    """(header, entries, bytes) of a signed file, read once; ``header`` is None when the file has no ``fsa2rnn``
    metadata. ModelFileError (naming ``what``, e.g. "model file", and the path) for a file that is missing, is no
    safetensors file or whose header is not a JSON object. The signature is checked by :func:`check_signature`."""
    p = Path(path)
    if not p.is_file():
        try:
            os.stat(p)
            why = "it is not a regular file"
        except OSError as exc:
            why = describe_os_error(exc)
        raise ModelFileError(f"no such {what}: {str(p)!r}" if why == "no such file" else
                             f"no {what} at {str(p)!r}: {why}")  # fmt: skip
    problem = safetensors_problem(p)
    if problem:
        raise ModelFileError(f"{what} {str(p)!r} {problem}")
    try:
        data = p.read_bytes()
        meta, entries = file_entries(data)
    except Exception as exc:  # a corrupt file fails in many ways
        raise ModelFileError(f"cannot read {what} {str(p)!r}: {' '.join(str(exc).split())}") from None
    if METADATA_KEY not in meta:
        return None, entries, data
    try:
        header = json.loads(meta[METADATA_KEY])
    except json.JSONDecodeError:
        raise ModelFileError(f"{str(p)!r}: the fsa2rnn header is not valid JSON") from None
    except RecursionError:
        raise ModelFileError(f"{str(p)!r}: the fsa2rnn header is nested too deeply") from None
    if not isinstance(header, dict):
        raise ModelFileError(f"{str(p)!r}: the fsa2rnn header is not a JSON object")
    return header, entries, data


def check_signature(
    header: dict[str, Any],
    entries: Iterable[Entry],
    *,
    what: str,
    sign: Callable[[dict[str, Any], list[Entry]], str] = signature,
) -> None:
    """ModelFileError unless ``header["sha256"]`` is the signature of the header and ``entries`` (``sign``: the
    scheme of an earlier format that is still read)."""
    want = header.get(HASH_KEY)
    if want is None:
        raise ModelFileError(f"{what} header has no {HASH_KEY!r} integrity hash")
    if sign(header, list(entries)) != want:
        raise ModelFileError(
            f"the {what}'s header and tensors do not match its {HASH_KEY} integrity hash: "
            "the file was modified or corrupted"
        )


def signed_metadata(header: dict[str, Any], entries: Iterable[Entry]) -> dict[str, str]:
    """The safetensors metadata of a signed file: ``header`` with the signature of itself and ``entries``."""
    header = {**header, HASH_KEY: signature(header, entries)}
    return {METADATA_KEY: json.dumps(header, default=json_default)}


def write_signed(
    path: str | Path, header: dict[str, Any], entries: Iterable[Entry], save: Callable[[Path, dict[str, str]], None]
) -> None:
    """Write a signed file atomically (a failure leaves no file): ``save(path, metadata)`` writes the tensors with
    the metadata of :func:`signed_metadata` (``safetensors.*.save_file``)."""
    meta = signed_metadata(header, entries)
    atomic_write(path, lambda p: save(p, meta))


def json_default(o: Any) -> Any:
    """JSON for numpy scalars and arrays in a header."""
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


__all__ = [
    "DTYPES",
    "HASH_KEY",
    "METADATA_KEY",
    "array_entries",
    "check_signature",
    "file_entries",
    "json_default",
    "read_signed",
    "signature",
    "signed_metadata",
    "write_signed",
]
