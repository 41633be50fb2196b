"""What every torch module of a compiled model shares (nn/compiled/<target>.py): the model it runs and its program,
the symbol-id check of fsa/inputs.py answered as tensors, the accepting readout, and the protocol of the recurrent
form that the steppers of fsa2rnn.realize perturb.

A module implements ``predict_states(symbol_ids, lengths=None, **options)`` and the recurrent form on flat hidden
vectors h (N, D) at its dtype: ``initial(n)`` (ι(q_0) for n words), ``decode(h)`` (what ``step`` and ``read`` need
to know of h: decoded layer states, restored head indices, …), ``step(h, x, decoded=None)`` (Φ_x), ``read(h,
decoded=None)`` (π: the automaton state, −1 for none) and ``code_blocks()`` (the geometry of its code, one
:class:`CodeBlock` per block of h). ``numpy_step()`` gives the numpy twin of the step at float64 and float32 (None
where there is none) and ``run_options(mode)`` the keyword arguments of ``predict_states`` under the scan policy of
``fsa2rnn run`` (nn/compiled/__init__.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from ...compiler.model import CompiledModel
from ...compiler.program import Program, accepted
from ...compiler.registry import program_of, target_of
from ...fsa.errors import PluginError
from ...fsa.inputs import SymbolIds, check_symbol_ids

#: torch dtypes whose numpy twin rounds the same way (the numpy steps run at these)
NUMPY_DTYPES = {torch.float64: np.float64, torch.float32: np.float32}
#: the scan that `fsa2rnn run`, `verify`, `compare` and the probes run linear-RNN models with: the chunked scans of
#: nn/ops/lrnn_scan (``verify`` reports it; rotation and complex diagonal layers round differently from "sequential")
RUN_SCAN = "parallel"


@dataclass
class CodeBlock:
    """Coordinates ``size`` of the flat state (blocks lie side by side), their code points (K, size) float64 with the
    label of each (the layer state, head index or digit it reads as), and the cell shape: Voronoi cells of the code
    points, or (``cube``) the rounding cubes of the integer lattice. ``one_hot``: the code points are the unit
    vectors e_0…e_{d−1} with distinct labels (the steppers then read the nearest face off the two largest
    coordinates)."""

    size: int
    codes: torch.Tensor
    labels: torch.Tensor
    cube: bool = False
    one_hot: bool = False


def checked_ids(
    symbol_ids: Any, n_symbols: int, lengths: Any = None, symbols: Any = None
) -> tuple[torch.Tensor, torch.Tensor | None, SymbolIds]:
    """The checked batch (B, T) and lengths (B,) as tensors on the input's device, and the check's result
    (fsa/inputs.py ``check_symbol_ids``; names are read when the alphabet ``symbols`` is given)."""
    x = check_symbol_ids(symbol_ids, n_symbols, lengths, symbols=symbols)
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


class CompiledModule(nn.Module):
    """The base of the compiled modules: ``compiled``, ``program``, ``n_symbols``, the accepting mask, the checked
    input (:meth:`checked`) and ``predict_accept``; the defaults of the optional protocol members."""

    #: how ``step`` may apply the transitions (``mode=``); empty when there is no choice
    step_modes: tuple[str, ...] = ()

    def __init__(self, compiled: CompiledModel, program: Program | None = None, *, expect: type | None = None) -> None:
        super().__init__()
        self.compiled = compiled
        self.program = program_of(compiled, expect=expect) if program is None else program
        self.n_symbols = self.program.n_symbols
        self.has_accepting = self.program.accepting is not None
        mask = self.program.accepting
        mask = torch.zeros(self.program.n_states, dtype=torch.bool) if mask is None else torch.from_numpy(mask.copy())
        self.register_buffer("accepting_mask", mask)

    def checked(self, symbol_ids: Any, lengths: Any = None) -> tuple[torch.Tensor, torch.Tensor | None, SymbolIds]:
        """The checked batch (B, T) as tensors on the input's device (ids or symbol names), and the check's result."""
        return checked_ids(symbol_ids, self.n_symbols, lengths, self.program.symbols)

    @torch.no_grad()
    def predict_accept(self, symbol_ids: Any, lengths: Any = None, **kw: Any) -> torch.Tensor:
        """Whether each prefix is accepted, (B, T) bool (False past a word's length); UnknownStateError when the
        automaton has no accepting set."""
        self.program.accepting_mask()
        return accepted(self.predict_states(symbol_ids, lengths, **kw), self.accepting_mask)

    def run_options(self, mode: str = "fused") -> dict[str, Any]:
        """The keyword arguments of ``predict_states`` under the scan policy (none unless the module has scans)."""
        return {}

    def numpy_step(self, mode: str = "fused") -> Any:
        """The numpy twin of the recurrent step at the module's dtype (None: there is none)."""
        return None


def load_model(source: str | Path | CompiledModel) -> nn.Module:
    """The torch module of a model file or CompiledModel: its target's ``torch_module`` (the registry,
    compiler/registry.py) built from it; never unpickles anything.

    A file must pass its integrity check (``CompiledModel.load``); a CompiledModel must match its hash if it has one
    (compilers seal what they return; call ``seal()`` after editing a model in Python)."""
    model = source if isinstance(source, CompiledModel) else CompiledModel.load(source)
    model.check_integrity()
    target = target_of(model)
    module = target.load("torch_module")(model)
    if not isinstance(module, nn.Module):
        raise PluginError(f"target {target.name!r} torch_module {target.torch_module!r} built a "
                          f"{type(module).__name__}, not a torch.nn.Module")  # fmt: skip
    return module


def run_options(module: Any, mode: str = "fused") -> dict[str, Any]:
    """The keyword arguments of ``predict_states`` that run ``module`` under the scan policy :data:`RUN_SCAN`
    (``mode="factors"``: Householder factor by factor, the sequential recurrence by definition); empty for modules
    without a choice of scan."""
    options = getattr(module, "run_options", None)
    return options(mode) if callable(options) else {}


__all__ = [
    "NUMPY_DTYPES",
    "RUN_SCAN",
    "CodeBlock",
    "CompiledModule",
    "checked_ids",
    "finish",
    "load_model",
    "run_options",
]
