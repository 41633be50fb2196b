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

The state of every target is a concatenation of *blocks*, each with a finite code of its own and cells of one of
two shapes: *Voronoi* cells (a nearest-code readout: the face between code points c and c' is their bisector, at
distance ‖c − c'‖/2 from c, with normal (c' − c)/‖c' − c‖) or *rounding cubes* (a readout that rounds every
coordinate: faces at ±1/2 along each axis). The model's code is (a subset of) the product of the blocks' codes, so
the nearest face of a cell is the nearest face of one block's cell. The blocks and Φ per target (the same
arithmetic as the nn runtime, so that with no perturbation a trajectory equals the model's own sequential run bit
for bit):

- ``householder`` / ``diagonal`` (nn/compiled/lrnn_model.py, its recurrent form): one block per layer; layer i
  reads the row of (x, the decoded states of layers 0..i−1 of h) and computes A(r) h_i + B(r) — the fused product
  (``mode="fused"``) or factor by factor (``"factors"``); a diagonal layer λ(r) ⊙ h_i + b(r) in complex (re, im)
  pairs. Code: the layer's code points (``nearest`` readout, cells = Voronoi cells, labels = layer states) or the
  permutations of 1..n that its ``hash`` readout knows (cells = the rounding cubes of half-width 1/2).
- ``nfsm`` (nn/compiled/nfsm_model.py): one block per head, holding the attractor vector a_{h_t}. Φ_x first *restores*
  (rounds every head to its nearest attractor: the perturbation is added to a_{h_t} before the next step's rounding),
  then applies the tables σ computed at the working dtype and returns the new attractor vectors.
- ``affine`` (nn/compiled/affine_model.py): one block per window position, code {0, e_1, …, e_s}; Φ_x(h) = A h + b(x).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from fsa2rnn.compiler.inputs import check_symbol_ids
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.fsa.errors import LimitExceededError, ModelFileError
from fsa2rnn.nn import load_model

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
        label, and that face's outward unit normal (N, w)."""
        if self.cube:
            delta = u - torch.round(u)
            gap = 0.5 - delta.abs()
            d, i = gap.min(-1)
            sign = torch.where(delta.gather(1, i[:, None]) >= 0, 1.0, -1.0).to(u.dtype)
            return d, torch.zeros_like(u).scatter_(1, i[:, None], sign)
        d2 = torch.cdist(u, self.codes, compute_mode="donot_use_mm_for_euclid_dist").square()
        d1, n1 = d2.min(-1)
        apart = self.pairwise.index_select(0, n1)  # ‖c_k − c_n1‖
        other = (self.labels != self.labels.index_select(0, n1)[:, None]) & (apart > 0)
        # distance from u to the bisector of c_n1 and c_k: (‖u − c_k‖² − ‖u − c_n1‖²) / (2‖c_k − c_n1‖)
        dist = torch.where(other, (d2 - d1[:, None]) / (2 * apart.clamp(min=1e-300)), torch.inf)
        d, k = dist.min(-1)
        normal = (self.codes.index_select(0, k) - self.codes.index_select(0, n1)) / apart.gather(1, k[:, None])
        return d, torch.where(torch.isfinite(d)[:, None], normal, torch.zeros_like(normal))


class Stepper:
    """Base: blocks, the nearest-code geometry and the working dtype; subclasses define Φ and π."""

    target: str = ""
    blocks: list[Block]
    dtype: torch.dtype

    @property
    def dim(self) -> int:
        return self.blocks[-1].stop

    @property
    def radius(self) -> float:
        """The smallest cell inradius over the blocks (a perturbation can put all its norm in one block)."""
        return min(b.radius for b in self.blocks)

    def initial(self, n: int) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    def decode(self, h: torch.Tensor) -> Any:
        """What ``step`` and ``read`` need to know of h (decoded layer states, restored indices, …)."""
        return None

    def step(self, h: torch.Tensor, x: torch.Tensor, decoded: Any = None) -> torch.Tensor:  # pragma: no cover
        raise NotImplementedError

    def read(self, h: torch.Tensor, decoded: Any = None) -> torch.Tensor:  # pragma: no cover - abstract
        raise NotImplementedError

    @torch.no_grad()
    def run(self, ids: Any, h: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """The states π(h_t) after each symbol of ids (N, l), carrying the hidden state: from ``h`` (None: ι(q_0))
        to the returned last one — a long word read in chunks costs its length, never a rerun of its prefix.
        The ids pass the check every executor runs (compiler/inputs.py, SymbolIdError)."""
        ids = torch.from_numpy(check_symbol_ids(ids, self.net.n_symbols).ids)
        h = self.initial(ids.shape[0]) if h is None else h
        out = torch.empty(ids.shape, dtype=torch.int64)
        for t in range(ids.shape[1]):
            h = self.step(h, ids[:, t])
            out[:, t] = self.read(h)
        return out, h

    def predict_states(self, symbol_ids: Any, lengths: Any = None) -> np.ndarray:
        """The unperturbed trajectory's states, answering the same inputs as every executor (−1 past a length)."""
        x = check_symbol_ids(symbol_ids, self.net.n_symbols, lengths)
        if x.ids.size == 0:
            return x.finish(np.full(x.ids.shape, -1, dtype=np.int64))
        return x.finish(self.run(x.ids)[0].numpy())

    def nearest(self, h: torch.Tensor) -> torch.Tensor:
        """The distance (N,) from h to the nearest code point of the product code, float64."""
        h64, n = h.double(), h.shape[0]
        total = torch.zeros(n, dtype=torch.float64)
        for b in self.blocks:
            u = h64[:, b.start : b.stop]
            total += torch.cdist(u, b.codes, compute_mode="donot_use_mm_for_euclid_dist").min(-1).values.square()
        return total.sqrt()

    def push(self, h: torch.Tensor) -> torch.Tensor:
        """The adversary's unit direction (N, D), float64: the outward normal of the face of h's cell nearest to h
        (over the blocks), so that a perturbation along it moves h straight toward the nearest wrong cell."""
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


# ---------------------------------------------------------------------------------------------------- linear RNNs
def _hash_codes(readout: Any) -> tuple[torch.Tensor, torch.Tensor]:
    """The permutations of 1..n a hash readout (compiler/program.py HashReadout) knows and their layer states."""
    if len(readout.keys) > MAX_BLOCK_CODES:
        raise LimitExceededError(f"a hash readout with {len(readout.keys)} code points (limit {MAX_BLOCK_CODES})")
    return torch.from_numpy(readout.code_points()).double(), torch.from_numpy(readout.values.copy())


class LinearRNNStepper(Stepper):
    """Compiled "householder" and "diagonal" models (nn/lrnn_model.LinearRNNModel) at a dtype and mode."""

    def __init__(self, net: Any, dtype: torch.dtype, mode: str = "fused") -> None:
        if mode not in MODES:
            raise ModelFileError(f"unknown mode {mode!r} (choose from {', '.join(MODES)})")
        self.target = net.compiled.target
        self.net = net.to(dtype)
        self.dtype, self.mode = dtype, mode
        self.diagonal = list(self.net.diagonal)
        self.blocks, start = [], 0
        for layer, spec, diag in zip(self.net.layers, self.net.program.layers, self.diagonal):
            ro = layer.readout
            size = layer.width * (2 if diag else 1)
            if ro.kind == "nearest":
                if len(ro.codes) > MAX_BLOCK_CODES:
                    raise LimitExceededError(f"a layer with {len(ro.codes)} code points (limit {MAX_BLOCK_CODES})")
                codes, labels = ro.codes.double().reshape(len(ro.codes), size), ro.code_states.long()
                cube = False
            else:
                codes, labels = _hash_codes(spec.readout)
                cube = True  # the hash readout rounds every coordinate to an integer
            self.blocks.append(Block(start, start + size, codes, labels, cube))
            start += size

    def _split(self, h: torch.Tensor) -> list[torch.Tensor]:
        parts = []
        for b, diag in zip(self.blocks, self.diagonal):
            part = h[:, b.start : b.stop]
            parts.append(part.reshape(len(h), -1, 2) if diag else part)
        return parts

    def initial(self, n: int) -> torch.Tensor:
        return torch.cat([h.reshape(n, -1) for h in self.net.initial(n)], dim=-1)

    def decode(self, h: torch.Tensor) -> list[torch.Tensor]:
        """The decoded state of every layer (−1 where a hash readout finds no permutation)."""
        return self.net.decode(self._split(h))

    def step(self, h: torch.Tensor, x: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        # a failed decode is wrong already; LinearRNNModel.step reads it as state 0 and keeps going
        new = self.net.step(self._split(h), x, decoded, mode=self.mode)
        return torch.cat([p.reshape(len(h), -1) for p in new], dim=-1)

    def read(self, h: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        return self.net.read(self.decode(h) if decoded is None else decoded)


# ---------------------------------------------------------------------------------------------------- NFSM
class NFSMStepper(Stepper):
    """Compiled "nfsm" models (nn/nfsm_model.NFSMModel): attractor vectors, restored by rounding at every step."""

    target = "nfsm"

    def __init__(self, net: Any, dtype: torch.dtype) -> None:
        self.net = net.to(dtype)
        self.dtype = dtype
        with torch.no_grad():
            self.banks = [layer.key_tables() for layer in self.net.layers]  # (K, r, d_max) at the dtype
        self.attractors: list[torch.Tensor] = []
        self.layer_heads: list[list[tuple[int, int]]] = []  # per layer: (head in the layer, global head index)
        self.blocks, start = [], 0
        for layer in self.net.layers:
            self.layer_heads.append([])
            for hi, d in enumerate(layer.heads):
                a = layer.attractors(hi)
                self.layer_heads[-1].append((hi, len(self.attractors)))
                self.attractors.append(a)
                self.blocks.append(Block(start, start + d, a.double(), torch.arange(d)))
                start += d
        self.initial_config = self.net.initial_config.clone()
        self.d_max = max(int(b.shape[-1]) for b in self.banks)
        self.flat_banks = [  # bank[key, head, k] at ((key·r + head)·d_max + k), one gather per layer and step
            torch.nn.functional.pad(b, (0, self.d_max - b.shape[-1])).reshape(-1) for b in self.banks
        ]
        dims = {len(a) for a in self.attractors}
        # heads of one size (the usual case): every head restored and looked up in one batched operation
        self.stacked = torch.stack(self.attractors) if len(dims) == 1 else None
        self.head_range = torch.arange(len(self.attractors))
        self.onehot = self.stacked is not None and bool(
            (self.stacked == torch.eye(self.stacked.shape[-1], dtype=self.stacked.dtype)).all()
        )
        self.layer_index = [
            (torch.tensor([hi for hi, _ in heads]), torch.tensor([g for _, g in heads])) for heads in self.layer_heads
        ]

    def _vectors(self, idx: torch.Tensor) -> torch.Tensor:
        if self.stacked is not None:
            return self.stacked[self.head_range, idx].reshape(idx.shape[0], -1)
        return torch.cat([a[idx[:, g]] for g, a in enumerate(self.attractors)], dim=-1)

    def decode(self, h: torch.Tensor) -> torch.Tensor:
        return self.restore(h)

    def _top2(self, h: torch.Tensor) -> tuple[torch.Tensor, Any]:
        u = h.double().reshape(h.shape[0], self.stacked.shape[0], -1)
        return u, u.topk(2, dim=-1)

    def nearest(self, h: torch.Tensor) -> torch.Tensor:
        """One-hot attractors: ‖u − e_k‖² = ‖u‖² − 2u_k + 1, smallest at the largest coordinate of each head."""
        if not self.onehot or self.stacked.shape[-1] < 2:
            return super().nearest(h)
        u, top = self._top2(h)
        return ((u * u).sum(-1) - 2 * top.values[..., 0] + 1).clamp(min=0).sum(-1).sqrt()

    def push(self, h: torch.Tensor) -> torch.Tensor:
        """One-hot attractors: the nearest face is the bisector of the head's two largest coordinates k, j, at
        distance (u_k − u_j)/√2, with normal (e_j − e_k)/√2."""
        if not self.onehot or self.stacked.shape[-1] < 2:
            return super().push(h)
        u, top = self._top2(h)
        head = (top.values[..., 0] - top.values[..., 1]).argmin(-1)  # (N,)
        rows = torch.arange(h.shape[0])
        k, j = top.indices[rows, head, 0], top.indices[rows, head, 1]
        out = torch.zeros_like(u)
        out[rows, head, k] = -(0.5**0.5)
        out[rows, head, j] = 0.5**0.5
        return out.reshape(h.shape[0], -1)

    def restore(self, h: torch.Tensor) -> torch.Tensor:
        """The index of the nearest attractor of every head, (N, heads): argmax_k ⟨u, a_k⟩ − ½‖a_k‖²."""
        if self.onehot:  # a_k = e_k: the nearest attractor is the largest coordinate (first on ties, as below)
            return h.reshape(h.shape[0], len(self.attractors), -1).argmax(-1)
        cols = []
        for a, b in zip(self.attractors, self.blocks):
            u = h[:, b.start : b.stop]
            cols.append((u @ a.T - 0.5 * (a * a).sum(-1)).argmax(-1))
        return torch.stack(cols, dim=-1)

    def initial(self, n: int) -> torch.Tensor:
        return self._vectors(self.initial_config.expand(n, -1))

    def step(self, h: torch.Tensor, x: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        idx = self.restore(h) if decoded is None else decoded
        new = torch.empty_like(idx)
        for i, (bank, (local, glob)) in enumerate(zip(self.flat_banks, self.layer_index)):
            key = self.net.layer_key(i, x, idx)  # the symbol, then the upper heads' indices of the previous step
            own = idx if len(self.layer_index) == 1 else idx[:, glob]
            flat = (key[:, None] * len(local) + local) * self.d_max + own
            got = bank.index_select(0, flat.view(-1)).view(own.shape)
            if len(self.layer_index) == 1:
                return self._vectors(got)
            new[:, glob] = got
        return self._vectors(new)

    def read(self, h: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        idx = self.restore(h) if decoded is None else decoded
        return self.net.read(idx)


# ---------------------------------------------------------------------------------------------------- affine
class AffineStepper(Stepper):
    """Compiled "affine" shift registers (nn/affine_model.AffineModel): h ← A h + b(x), blocks decoded to digits."""

    target = "affine"

    def __init__(self, net: Any, dtype: torch.dtype) -> None:
        self.net = net.to(dtype)
        self.dtype = dtype
        k, s = self.net.window, self.net.n_symbols
        digits = torch.cat([torch.zeros(1, s, dtype=torch.float64), torch.eye(s, dtype=torch.float64)])
        self.blocks = [Block(j * s, (j + 1) * s, digits, torch.arange(s + 1)) for j in range(k)]

    def initial(self, n: int) -> torch.Tensor:
        return self.net.initial(n)

    def step(self, h: torch.Tensor, x: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        return self.net.step(h, x)

    def read(self, h: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        return self.net.decode(h)


class PDSSMStepper(Stepper):
    """Compiled PD-SSMs (nn/compiled/pdssm_model.PDSSMModel): h ← P(x) D(x) h, read as the state of the largest
    coordinate; the code points are the one-hot vectors e_i."""

    target = "pdssm"

    def __init__(self, net: Any, dtype: torch.dtype) -> None:
        self.net = net.to(dtype)
        self.dtype = dtype
        n = self.net.h0.numel()
        if n > MAX_BLOCK_CODES:
            raise LimitExceededError(f"a PD-SSM of {n} one-hot code points (limit {MAX_BLOCK_CODES})")
        self.blocks = [Block(0, n, torch.eye(n, dtype=torch.float64), self.net.readout.cpu())]

    def initial(self, n: int) -> torch.Tensor:
        return self.net.initial(n)

    def step(self, h: torch.Tensor, x: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        return self.net.step(h, x)

    def read(self, h: torch.Tensor, decoded: Any = None) -> torch.Tensor:
        return self.net.decode(h)


def stepper_for(model: CompiledModel | Any, dtype: str | torch.dtype = "float64", mode: str = "fused") -> Stepper:
    """The stepper of a compiled model (a CompiledModel, a model file path or the module ``load_model`` built) at
    ``dtype``; ``mode`` (householder only): apply A(x) as its fused product or factor by factor."""
    net = copy.deepcopy(model) if isinstance(model, torch.nn.Module) else load_model(model)
    tdt = as_dtype(dtype)
    target = net.compiled.target
    if target in ("householder", "diagonal"):
        return LinearRNNStepper(net, tdt, mode if target == "householder" else "fused")
    if target == "nfsm":
        return NFSMStepper(net, tdt)
    if target == "affine":
        return AffineStepper(net, tdt)
    if target == "pdssm":
        return PDSSMStepper(net, tdt)
    raise ModelFileError(f"no stepper for target {target!r}")


__all__ = ["Block", "MODES", "Stepper", "stepper_for"]
