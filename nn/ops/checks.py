"""Input checks shared by the differentiable ops: a bad tensor raises :class:`OpInputError` naming the tensor, its
shape or dtype, and what was expected — before any memory is spent."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from ...fsa.errors import OpInputError  # noqa: F401 (re-exported: the old import path)


def check_tensor(op: str, name: str, t: object, ndim: int | None = None) -> torch.Tensor:
    """``t`` must be a tensor (of ``ndim`` dimensions, when given)."""
    if not isinstance(t, torch.Tensor):
        raise OpInputError(f"{op}: {name} must be a torch.Tensor, got {type(t).__name__}")
    if ndim is not None and t.dim() != ndim:
        raise OpInputError(f"{op}: {name} has shape {tuple(t.shape)}, expected {ndim} dimensions")
    return t


def check_shape(op: str, name: str, t: torch.Tensor, expected: Sequence[int], what: str) -> None:
    """``t.shape`` must equal ``expected``; ``what`` says in words where the expectation comes from."""
    if tuple(t.shape) != tuple(expected):
        raise OpInputError(f"{op}: {name} has shape {tuple(t.shape)}, expected {tuple(expected)} ({what})")


def check_dtype(op: str, name: str, t: torch.Tensor, expected: torch.dtype | Sequence[torch.dtype], what: str) -> None:
    allowed = (expected,) if isinstance(expected, torch.dtype) else tuple(expected)
    if t.dtype not in allowed:
        names = " or ".join(str(d).removeprefix("torch.") for d in allowed)
        raise OpInputError(f"{op}: {name} has dtype {str(t.dtype).removeprefix('torch.')}, expected {names} ({what})")


def check_lengths(op: str, lengths: torch.Tensor | None, bsz: int, length: int) -> torch.Tensor | None:
    """Optional per-sequence lengths: an integer tensor (B,) with values in [0, T]."""
    if lengths is None:
        return None
    check_tensor(op, "lengths", lengths)
    if lengths.dtype.is_floating_point or lengths.dtype.is_complex or lengths.dtype == torch.bool:
        raise OpInputError(f"{op}: lengths has dtype {str(lengths.dtype).removeprefix('torch.')}, expected an integer")
    check_shape(op, "lengths", lengths, (bsz,), "one length per sequence")
    if lengths.numel() and (int(lengths.min()) < 0 or int(lengths.max()) > length):
        raise OpInputError(f"{op}: lengths must lie in [0, {length}], got [{int(lengths.min())}, {int(lengths.max())}]")
    return lengths


def check_impl(op: str, impl: str, choices: Sequence[str]) -> None:
    if impl not in (*choices, "auto"):
        raise OpInputError(f"{op}: unknown impl {impl!r} (choose from {', '.join(choices)} or auto)")


def length_mask(lengths: torch.Tensor, length: int, device: torch.device) -> torch.Tensor:
    """(B, T, 1) boolean mask of the positions t ≥ lengths[b]."""
    pos = torch.arange(length, device=device)
    return (pos[None, :] >= lengths.to(device)[:, None])[..., None]
