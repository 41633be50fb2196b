"""Training checkpoints: one signed safetensors file (fsa2rnn.fsa.signed, the format of model files; never pickle)
holding the model's weights, the optimizer's moments and a JSON header, written atomically (a temporary file renamed
into place), so that the last checkpoint is always readable, even after a SIGKILL.

The header (metadata key ``"fsa2rnn"``) holds ``format`` "fsa2rnn.checkpoint/2", the model config (``model``), the
task's name, symbols and classes, the training ``step`` reached, ``finished``, the scheduler and early-stop state,
and ``sha256``, the signature of model files over the header and every tensor, so that a flipped byte or an edited
header is refused. Checkpoints of format "fsa2rnn.checkpoint/1" (an earlier hash of the same contents) are still
read. Weights keep their ``state_dict`` names; optimizer state is stored under ``optim/<parameter name>/<key>``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load, save, save_file

from ...fsa.errors import ModelFileError
from ...fsa.signed import Entry, check_signature, file_entries, read_signed, signature, write_signed

FORMAT = "fsa2rnn.checkpoint/2"
#: the earlier format, still read: the same contents under another hash (:func:`_signature_v1`)
FORMAT_V1 = "fsa2rnn.checkpoint/1"
OPTIM = "optim/"
#: torch's names of the dtypes, as the earlier hash wrote them
_TORCH_NAMES = {
    "<f8": "torch.float64", "<f4": "torch.float32", "<f2": "torch.float16", "bf16": "torch.bfloat16",
    "<i8": "torch.int64", "<i4": "torch.int32", "<i2": "torch.int16", "|i1": "torch.int8", "|u1": "torch.uint8",
    "|b1": "torch.bool",
}  # fmt: skip


def _signature_v1(header: dict[str, Any], entries: list[Entry]) -> str:
    """The hash of format "fsa2rnn.checkpoint/1": the compact sorted JSON of the header, then every tensor's
    ``name|dtype|shape|`` (torch's dtype name) and bytes in name order."""
    h = hashlib.sha256(json.dumps({k: v for k, v in header.items() if k != "sha256"}, sort_keys=True,
                                  separators=(",", ":")).encode())  # fmt: skip
    for name, dtype, shape, data in sorted(entries):
        h.update(f"{name}|{_TORCH_NAMES.get(dtype, dtype)}|{list(shape)}|".encode())
        h.update(data)
    return h.hexdigest()


def save_checkpoint(
    path: str | Path,
    model: torch.nn.Module,
    header: dict[str, Any],
    optimizer: torch.optim.Optimizer | None = None,
) -> None:
    """Write weights (+ optimizer state) and ``header`` to ``path`` atomically."""
    tensors = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    if optimizer is not None:
        names = {id(p): n for n, p in model.named_parameters()}
        for group in optimizer.param_groups:
            for p in group["params"]:
                for key, value in optimizer.state.get(p, {}).items():
                    value = torch.as_tensor(value)
                    tensors[f"{OPTIM}{names[id(p)]}/{key}"] = value.detach().cpu().contiguous().reshape(value.shape)
    _, entries = file_entries(save(tensors))  # the tensors' bytes exactly as the file will hold them
    write_signed(path, {"format": FORMAT, **header}, entries, lambda p, meta: save_file(tensors, str(p), metadata=meta))


def load_checkpoint(path: str | Path) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """(header, tensors) of a checkpoint; ModelFileError for anything unreadable, malformed or altered.

    The file is read once, as bytes, and parsed from memory: a trainer that replaces the checkpoint meanwhile
    (atomically, by rename) can never pair one file's header with the next file's tensors."""
    header, entries, data = read_signed(path, what="checkpoint")
    p = str(path)
    if header is None:
        raise ModelFileError(f"{p!r} is not an fsa2rnn checkpoint (no valid 'fsa2rnn' header)")
    if header.get("format") not in (FORMAT, FORMAT_V1):
        raise ModelFileError(f"{p!r}: not an fsa2rnn checkpoint (format {FORMAT!r})")
    try:
        tensors = load(data)
    except Exception as exc:  # safetensors raises several types for corrupt files
        raise ModelFileError(f"cannot read checkpoint {p!r}: {' '.join(str(exc).split())}") from None
    sign = _signature_v1 if header["format"] == FORMAT_V1 else signature
    try:
        check_signature(header, entries, what="checkpoint", sign=sign)
    except ModelFileError:
        raise ModelFileError(f"checkpoint {p!r} is corrupted (its sha256 does not match its contents)") from None
    header.pop("sha256", None)
    return header, tensors


def state_mismatch(want: dict[str, torch.Tensor], got: dict[str, torch.Tensor]) -> str | None:
    """What differs between a model's state_dict and a checkpoint's weights, in a few words (the first missing,
    unexpected or misshapen tensor and how many there are), or None."""
    missing = [k for k in want if k not in got]
    extra = [k for k in got if k not in want]
    shapes = [k for k in want if k in got and tuple(want[k].shape) != tuple(got[k].shape)]
    if shapes:
        k = shapes[0]
        more = f" (and {len(shapes) - 1} more)" if len(shapes) > 1 else ""
        return f"tensor {k!r} has shape {list(got[k].shape)}, the model's {list(want[k].shape)}{more}"
    if missing:
        return f"no tensor {missing[0]!r}" + (f" (and {len(missing) - 1} more missing)" if len(missing) > 1 else "")
    if extra:
        return f"unknown tensor {extra[0]!r}" + (f" (and {len(extra) - 1} more)" if len(extra) > 1 else "")
    return None


def restore(
    model: torch.nn.Module, tensors: dict[str, torch.Tensor], optimizer: torch.optim.Optimizer | None = None
) -> None:
    """Load weights (and optimizer state) saved by :func:`save_checkpoint` into ``model`` and ``optimizer``."""
    weights = {k: v for k, v in tensors.items() if not k.startswith(OPTIM)}
    mismatch = state_mismatch(model.state_dict(), weights)
    if mismatch:
        raise ModelFileError(f"checkpoint does not fit the model: {mismatch}")
    model.load_state_dict(weights, strict=True)
    if optimizer is None:
        return
    params = dict(model.named_parameters())
    for key, value in tensors.items():
        if not key.startswith(OPTIM):
            continue
        name, _, slot = key[len(OPTIM) :].rpartition("/")
        if name not in params:
            raise ModelFileError(f"checkpoint holds optimizer state for an unknown parameter {name!r}")
        p = params[name]
        optimizer.state[p][slot] = value.to(p.device) if slot != "step" else value.clone()
