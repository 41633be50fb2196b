"""Training checkpoints: one safetensors file (never pickle) holding the model's weights, the optimizer's moments and
a JSON header, written atomically (fsa2rnn.fsa.io.atomic_write: a temporary file renamed into place), so that the
last checkpoint is always readable, even after a SIGKILL.

The header (metadata key ``"fsa2rnn"``) holds ``format`` "fsa2rnn.checkpoint/1", the model config (``model``),
the task's name, symbols and classes, the training ``step`` reached, ``finished``, the scheduler and early-stop
state, and ``sha256``: the SHA-256 of the header without it and of every tensor (name, dtype, shape, bytes), so that
a flipped byte or an edited header is refused. Weights keep their ``state_dict`` names; optimizer state is stored
under ``optim/<parameter name>/<key>``.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import torch

from fsa2rnn.fsa.errors import ModelFileError
from fsa2rnn.fsa.io import atomic_write, safetensors_problem

FORMAT = "fsa2rnn.checkpoint/1"
OPTIM = "optim/"


def digest(header: dict[str, Any], tensors: dict[str, torch.Tensor]) -> str:
    h = hashlib.sha256(json.dumps(header, sort_keys=True, separators=(",", ":")).encode())
    for name in sorted(tensors):
        t = tensors[name].detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{list(t.shape)}|".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


def save_checkpoint(
    path: str | Path,
    model: torch.nn.Module,
    header: dict[str, Any],
    optimizer: torch.optim.Optimizer | None = None,
) -> None:
    """Write weights (+ optimizer state) and ``header`` to ``path`` atomically."""
    from safetensors.torch import save_file

    tensors = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    if optimizer is not None:
        names = {id(p): n for n, p in model.named_parameters()}
        for group in optimizer.param_groups:
            for p in group["params"]:
                for key, value in optimizer.state.get(p, {}).items():
                    value = torch.as_tensor(value)
                    tensors[f"{OPTIM}{names[id(p)]}/{key}"] = value.detach().cpu().contiguous().reshape(value.shape)
    header = {"format": FORMAT, **header}
    header["sha256"] = digest(header, tensors)
    meta = {"fsa2rnn": json.dumps(header)}
    atomic_write(path, lambda p: save_file(tensors, str(p), metadata=meta))


def load_checkpoint(path: str | Path) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """(header, tensors) of a checkpoint; ModelFileError for anything unreadable, malformed or altered.

    The file is read once, as bytes, and parsed from memory: safetensors' ``safe_open`` may open the path again for
    the tensors, and a trainer that replaces the checkpoint in between (atomically, by rename) would then pair one
    file's header with the next file's tensors."""
    from safetensors.torch import load

    p = Path(path)
    if not p.is_file():
        raise ModelFileError(f"no checkpoint at {str(p)!r}")
    problem = safetensors_problem(p)
    if problem:
        raise ModelFileError(f"checkpoint {str(p)!r} {problem}")
    try:
        data = p.read_bytes()
        n = int.from_bytes(data[:8], "little")
        meta = json.loads(data[8 : 8 + n]).get("__metadata__") or {}
        tensors = load(data)
    except Exception as exc:  # safetensors raises several types for corrupt files
        raise ModelFileError(f"cannot read checkpoint {str(p)!r}: {' '.join(str(exc).split())}") from None
    try:
        header = json.loads(meta["fsa2rnn"])
    except (KeyError, json.JSONDecodeError, RecursionError):
        raise ModelFileError(f"{str(p)!r} is not an fsa2rnn checkpoint (no valid 'fsa2rnn' header)") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise ModelFileError(f"{str(p)!r}: not an fsa2rnn checkpoint (format {FORMAT!r})")
    stored = header.pop("sha256", None)
    if stored != digest(header, tensors):
        raise ModelFileError(f"checkpoint {str(p)!r} is corrupted (its sha256 does not match its contents)")
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
