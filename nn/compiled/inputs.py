"""Symbol-id inputs of the compiled modules: compiler/inputs.py's one check, answered as torch tensors."""

from __future__ import annotations

from typing import Any

import torch

from fsa2rnn.compiler.inputs import SymbolIds, check_symbol_ids
from fsa2rnn.compiler.program import Program


def symbol_id_tensor(symbol_ids: Any, n_symbols: int, lengths: Any = None) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``(ids, lengths)`` as int64 tensors, (B, T) or (T,) as given, on the input's device, checked by
    :func:`~fsa2rnn.compiler.inputs.check_symbol_ids` (SymbolIdError); padding past a length reads as symbol 0."""
    ids, lens, x = checked_ids(symbol_ids, n_symbols, lengths)
    return (ids[0] if x.single else ids), lens


def checked_ids(
    symbol_ids: Any, n_symbols: int, lengths: Any = None
) -> tuple[torch.Tensor, torch.Tensor | None, SymbolIds]:
    """The checked batch (B, T) and lengths (B,) as tensors on the input's device, and the check's result."""
    x = check_symbol_ids(symbol_ids, n_symbols, lengths)
    device = symbol_ids.device if torch.is_tensor(symbol_ids) else None
    ids = torch.from_numpy(x.ids).to(device)
    lens = None if x.lengths is None else torch.from_numpy(x.lengths).to(device)
    return ids, lens, x


def finish(x: SymbolIds, out: torch.Tensor, fill: Any = -1) -> torch.Tensor:
    """``out`` (B, T) with ``fill`` past each word's length, (T,) for a single word (as SymbolIds.finish)."""
    if x.lengths is not None:
        lens = torch.as_tensor(x.lengths, device=out.device)
        pad = torch.arange(out.shape[1], device=out.device)[None, :] >= lens[:, None]
        out = out.masked_fill(pad, fill)
    return out[0] if x.single else out


def causal_shift(column: torch.Tensor, start: Any) -> torch.Tensor:
    """(B, T) values one step earlier: out[:, 0] = start, out[:, t] = column[:, t − 1] — how a cascade's lower layer
    sees the upper layers (docs/theory.md, "The timing of cascades"; runtime/executor.py's in numpy)."""
    first = start.expand(column.shape[0], 1) if torch.is_tensor(start) else column.new_full((column.shape[0], 1), start)
    return torch.cat([first.to(column.dtype), column[:, :-1]], dim=1)


def accepting_tensor(program: Program) -> torch.Tensor:
    """The program's accepting mask as a bool tensor (all False when the automaton has no accepting set)."""
    if program.accepting is None:
        return torch.zeros(program.n_states, dtype=torch.bool)
    return torch.from_numpy(program.accepting.copy())


def accepted(states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Whether each state is accepting, False for −1 (past a length, or outside the readout)."""
    return (states >= 0) & mask.to(states.device)[states.clamp(min=0)]


__all__ = ["accepted", "accepting_tensor", "causal_shift", "checked_ids", "finish", "symbol_id_tensor"]
