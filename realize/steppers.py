"""One step Φ_x of a compiled model on flat hidden vectors, its readout π and the geometry of its code.

The length-independent paper (§2) writes a recurrence as h_t = Φ_{x_t}(h_{t−1}) with an encoding ι, a readout π and
code points ι(q). realize/robust.py perturbs h_t and needs, for every target, the same three things on a batch of
flat vectors h (N, D) at a working dtype:

- ``initial(n)``: ι(q_0) for n words; ``step(h, x)``: Φ_x(h); ``read(h)``: π(h), the automaton state (−1: none);
  both read h through ``decode(h)`` (what the blocks of h decode to), which a trajectory computes once per step and
  passes to both;
- ``nearest(h)``: the distance from h to the nearest code point (the drift);
- ``push(h)``: the unit direction of the adversarial perturbation: straight toward the nearest point of another
  cell, i.e. along the normal of the nearest face of h's cell;
- ``radius``: the smallest inradius of a cell around a code point — every perturbation of norm < radius of a code
  point reads out as that code point.

Φ, π and ι are the torch module's own recurrent form (nn/compiled/<target>.py: ``initial``, ``step``, ``decode``,
``read``), so that with no perturbation a trajectory equals the model's own sequential run bit for bit; this module
never writes a step. What it adds is the geometry. The state of every target is a concatenation of *blocks*
(the module's ``code_blocks()``), each with a finite code of its own and cells of one of two shapes: *Voronoi* cells
(a nearest-code readout: the face between code points c and c' is their bisector, at distance ‖c − c'‖/2 from c,
with normal (c' − c)/‖c' − c‖) or *rounding cubes* (a readout that rounds every coordinate: faces at ±1/2 along each
axis). The model's code is (a subset of) the product of the blocks' codes, so the nearest face of a cell is the
nearest face of one block's cell. The blocks per target: a linear-RNN layer's code points (or the permutations of
1..n its hash readout knows, in rounding cubes); an NFSM head's attractors (one-hot: the nearest face is read off the
two largest coordinates); a shift register's window digits {0, e_1, …, e_s}; a PD-SSM's one-hot code points.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from ..compiler.model import CompiledModel
from ..compiler.registry import target_of
from ..fsa.errors import LimitExceededError, ModelFileError
from ..fsa.inputs import check_symbol_ids
from ..nn import load_model
from .extract import as_dtype

#: most code points of one block that ``nearest`` compares a state with
MAX_BLOCK_CODES = 1 << 16
#: most code points of a Voronoi block (its pairwise distances are kept)
MAX_PAIRWISE_CODES = 1 << 12
MODES = ("fused", "factors")


@dataclass
class Block:
    """Coordinates [start, stop) of the flat state, their code points (K, stop − start), the label of each, and the
    cell shape: Voronoi cells of the code points (``cube=False``) or the rounding cubes of the integer lattice."""

    start: int
    stop: int
    codes: torch.Tensor  # float64
    labels: torch.Tensor  # int64
    cube: bool = False
    one_hot: bool = False  #: the code points are e_0…e_{d−1} with distinct labels
    _pairwise: torch.Tensor | None = None

    @property
    def pairwise(self) -> torch.Tensor:
        """‖c_i − c_j‖ for every pair of code points (K, K), computed once."""
        if self._pairwise is None:
            if len(self.codes) > MAX_PAIRWISE_CODES:
                raise LimitExceededError(
                    f"a Voronoi readout with {len(self.codes)} code points (limit {MAX_PAIRWISE_CODES})"
                )
            self._pairwise = torch.cdist(self.codes, self.codes, compute_mode="donot_use_mm_for_euclid_dist")
        return self._pairwise

    @property
    def radius(self) -> float:
        """The inradius of the cells: 1/2 for rounding cubes, else half the smallest distance between code points with
        different labels (inf when all share one)."""
        if self.cube:
            return 0.5
        lab = self.labels
        if len(lab) < 2:
            return float("inf")
        d = torch.where(lab[:, None] != lab[None, :], self.pairwise, torch.full_like(self.pairwise, float("inf")))
        return float(d.min()) / 2

    def face(self, u: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """For block vectors u (N, w), float64: the distance to the nearest face of u's cell that leads to another
        label, and that face's outward unit normal (N, w); every array here is 2-D (rows: the N vectors)."""
        if self.cube:
            delta = u - torch.round(u)
            gap = 0.5 - delta.abs()
            d, i = gap.min(1)
            sign = torch.where(delta.gather(1, i[:, None]) >= 0, 1.0, -1.0).to(u.dtype)
            return d, torch.zeros_like(u).scatter_(1, i[:, None], sign)
        d2 = torch.cdist(u, self.codes, compute_mode="donot_use_mm_for_euclid_dist").square()
        d1, n1 = d2.min(1)
        apart = self.pairwise.index_select(0, n1)  # ‖c_k − c_n1‖
        other = (self.labels != self.labels.index_select(0, n1)[:, None]) & (apart > 0)
        # distance from u to the bisector of c_n1 and c_k: (‖u − c_k‖² − ‖u − c_n1‖²) / (2‖c_k − c_n1‖)
        dist = torch.where(other, (d2 - d1[:, None]) / (2 * apart.clamp(min=1e-300)), torch.inf)
        d, k = dist.min(1)
        normal = (self.codes.index_select(0, k) - self.codes.index_select(0, n1)) / apart.gather(1, k[:, None])
        return d, torch.where(torch.isfinite(d)[:, None], normal, torch.zeros_like(normal))


class Stepper:
    """The stepper of a compiled torch module (nn/compiled/base.py's recurrent form) at a working dtype: Φ, π and ι
    are the module's, the blocks its ``code_blocks()``; ``mode`` (the module's ``step_modes``, e.g. a Householder
    model's "fused" or "factors") is how its step applies the transitions (None where there is no choice)."""

    def __init__(self, net: Any, dtype: torch.dtype, mode: str = "fused") -> None:
        self.net = net.to(dtype)
        self.dtype = dtype
        self.target = net.compiled.target
        modes = tuple(getattr(self.net, "step_modes", ()))
        if modes and mode not in MODES:
            raise ModelFileError(f"unknown mode {mode!r} (choose from {', '.join(MODES)})")
        self.mode = (mode if mode in modes else modes[0]) if modes else None
        self._options = {"mode": self.mode} if self.mode is not None else {}
        self.blocks, start = [], 0
        for b in self.net.code_blocks(MAX_BLOCK_CODES):
            self.blocks.append(Block(start, start + b.size, b.codes.double(), b.labels.long(), b.cube, b.one_hot))
            start += b.size
        widths = {blk.stop - blk.start for blk in self.blocks}
        #: every block one-hot and of one width ≥ 2: the nearest face is read off each block's two largest entries
        self.one_hot = all(blk.one_hot for blk in self.blocks) and len(widths) == 1 and min(widths) >= 2

    @property
    def dim(self) -> int:
        return self.blocks[-1].stop

    @property
    def radius(self) -> float:
        """The smallest cell inradius over the blocks (a perturbation can put all its norm in one block)."""
        return min(b.radius for b in self.blocks)

    def initial(self, n: int) -> torch.Tensor:
        return self.net.initial(n)

    def decode(self, h: torch.Tensor) -> Any:
        """What ``step`` and ``read`` need to know of h (decoded layer states, restored indices, …)."""
        return self.net.decode(h)

    def step(self, h: torch.Tensor, x: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        return self.net.step(h, x, decoded, **self._options)

    def read(self, h: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        return self.net.read(h, decoded)

    @torch.no_grad()
    def run(self, ids: Any, h: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """The states π(h_t) after each symbol of ids (N, l), carrying the hidden state: from ``h`` (None: ι(q_0))
        to the returned last one — a long word read in chunks costs its length, never a rerun of its prefix.
        The ids pass the check every executor runs (fsa/inputs.py, SymbolIdError)."""
        symbols = self.net.program.symbols
        ids = torch.from_numpy(check_symbol_ids(ids, self.net.n_symbols, symbols=symbols).ids)
        h = self.initial(ids.shape[0]) if h is None else h
        out = torch.empty(ids.shape, dtype=torch.int64)
        for t in range(ids.shape[1]):
            h = self.step(h, ids[:, t])
            out[:, t] = self.read(h)
        return out, h

    def predict_states(self, symbol_ids: Any, lengths: Any = None) -> np.ndarray:
        """The unperturbed trajectory's states, answering the same inputs as every executor (−1 past a length)."""
        x = check_symbol_ids(symbol_ids, self.net.n_symbols, lengths, symbols=self.net.program.symbols)
        if x.ids.size == 0:
            return x.finish(np.empty(x.ids.shape, dtype=np.int64))  # no elements to fill
        return x.finish(self.run(x.ids)[0].numpy())

    def _top2(self, h: torch.Tensor) -> tuple[torch.Tensor, Any]:
        u = h.double().reshape(h.shape[0], len(self.blocks), -1)
        return u, u.topk(2, dim=-1)

    def nearest(self, h: torch.Tensor) -> torch.Tensor:
        """The distance (N,) from h to the nearest code point of the product code, float64 (one-hot blocks:
        ‖u − e_k‖² = ‖u‖² − 2u_k + 1, smallest at the largest coordinate of each block)."""
        if self.one_hot:
            u, top = self._top2(h)
            return ((u * u).sum(-1) - 2 * top.values[..., 0] + 1).clamp(min=0).sum(-1).sqrt()
        h64, n = h.double(), h.shape[0]
        total = torch.zeros(n, dtype=torch.float64)
        for b in self.blocks:
            u = h64[:, b.start : b.stop]
            total += torch.cdist(u, b.codes, compute_mode="donot_use_mm_for_euclid_dist").min(-1).values.square()
        return total.sqrt()

    def push(self, h: torch.Tensor) -> torch.Tensor:
        """The adversary's unit direction (N, D), float64: the outward normal of the face of h's cell nearest to h
        (over the blocks), so that a perturbation along it moves h straight toward the nearest wrong cell (one-hot
        blocks: the bisector of a block's two largest coordinates k, j, at distance (u_k − u_j)/√2, with normal
        (e_j − e_k)/√2)."""
        if self.one_hot:
            u, top = self._top2(h)
            block = (top.values[..., 0] - top.values[..., 1]).argmin(-1)  # (N,)
            rows = torch.arange(h.shape[0])
            k, j = top.indices[rows, block, 0], top.indices[rows, block, 1]
            out = torch.zeros_like(u)
            out[rows, block, k] = -(0.5**0.5)
            out[rows, block, j] = 0.5**0.5
            return out.reshape(h.shape[0], -1)
        h64 = h.double()
        best = torch.full((h.shape[0],), torch.inf, dtype=torch.float64)
        out = torch.zeros_like(h64)
        for b in self.blocks:
            d, normal = b.face(h64[:, b.start : b.stop])
            take = d < best
            best = torch.where(take, d, best)
            full = torch.zeros_like(h64)
            full[:, b.start : b.stop] = normal
            out = torch.where(take[:, None], full, out)
        return out


def stepper_for(model: CompiledModel | Any, dtype: str | torch.dtype = "float64", mode: str = "fused") -> Stepper:
    """The stepper of a compiled model (a CompiledModel, a model file path or the module ``load_model`` built) at
    ``dtype``: its target's ``stepper`` (the registry; :class:`Stepper` for the built-ins) on a copy of the module;
    ``mode`` (modules with a choice, e.g. Householder): apply A(x) as its fused product or factor by factor."""
    net = copy.deepcopy(model) if isinstance(model, torch.nn.Module) else load_model(model)
    target = target_of(net.compiled)
    return target.load("stepper")(net, as_dtype(dtype), mode)


__all__ = ["Block", "MODES", "Stepper", "stepper_for"]
