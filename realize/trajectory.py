"""η-trajectories in numpy: the fused perturbed step of realize/robust.py.

realize/robust.py's reference loop steps a :class:`~fsa2rnn.realize.steppers.Stepper` in torch, one time step at a
time over all words at once; with state vectors of a few dozen entries its cost is torch's dispatch overhead (about
2 ms a step whatever the number of words). A :class:`FastStepper` runs the target's own numpy step (the torch
module's ``numpy_step``: compiler/targets/<name>/step.py, the same weights and tables at the stepper's dtype, the
same arithmetic — the same products, sums and comparisons in the same order — in a fixed number of numpy calls a
step, the layers of a cascade stacked) with the code geometry of all blocks stacked here, and computes the same
Φ_x, π, decoding, drift and adversarial push, so that it reads out the same states in a fraction of the time
(docs/checks.md); :func:`run` is the loop. The random perturbation draws the same numbers from the same
torch generator as the reference and scales them in numpy (its norm may round differently in the last bit). Float64
and float32 only (numpy has no bfloat16, and its float16 arithmetic differs from torch's): other dtypes, and targets
without a numpy step, keep the reference loop (:func:`fast_stepper` is None).

Where the libraries choose a summation order (the fused A(x)·h of a Householder layer, a nearest-code score ⟨c, h⟩)
the two could round differently; the states read out and the L_max then still agree unless a state sits exactly on
a cell face. tests/realize/test_trajectory.py checks both on T4/S5/Z5/Z7/NFSM/shift-register models.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from ..nn.compiled.base import NUMPY_DTYPES
from .steppers import Block, Stepper

#: torch dtypes with a numpy twin whose arithmetic rounds the same way
FAST_DTYPES = NUMPY_DTYPES
SQRT_HALF = 0.5**0.5


def random_ball(n: int, d: int, eta: float, generator: torch.Generator, *, numpy: bool = False) -> Any:
    """e (n, d) float64 uniform in the ball of radius η: a Gaussian direction, radius η·U^{1/d} (seeded); with
    ``numpy`` the same draws scaled in numpy (a numpy array; the norm may round differently in the last bit)."""
    g = torch.randn(n, d, dtype=torch.float64, generator=generator)
    u = torch.rand(n, 1, dtype=torch.float64, generator=generator)
    if numpy:
        g, r = g.numpy(), eta * u.numpy() ** (1.0 / d)
        return g / np.maximum(np.sqrt(np.square(g).sum(-1, keepdims=True)), 1e-300) * r
    return g / g.norm(dim=-1, keepdim=True).clamp(min=1e-300) * (eta * u ** (1.0 / d))


#: most entries (blocks × K × K × width) of the precomputed table of face normals (c_k − c_n)/‖c_k − c_n‖
MAX_NORMAL_TABLE = 1 << 21


class _Faces:
    """The code geometry of all blocks (steppers.Block) at once, float64: the Voronoi blocks stacked into one array
    of block vectors padded to the widest block (padding coordinates read as 0, padding code points are never
    nearest), the rounding-cube blocks likewise, so that a step's faces cost a fixed number of numpy calls. The
    tables a face needs per nearest code point n (which code points carry another label, 2‖c_k − c_n‖, the unit
    normal (c_k − c_n)/‖c_k − c_n‖) are computed once, by the reference's formulas."""

    def __init__(self, blocks: list[Block]) -> None:
        self.dim = blocks[-1].stop
        self.n_blocks = len(blocks)
        self.vor = [i for i, b in enumerate(blocks) if not b.cube]
        self.cub = [i for i, b in enumerate(blocks) if b.cube]
        self.pos = np.zeros(len(blocks), dtype=np.int64)  # index of a block within its group
        for group in (self.vor, self.cub):
            self.pos[group] = np.arange(len(group))
        self.is_vor = np.isin(np.arange(len(blocks)), self.vor)
        self.cubes = [blocks[i] for i in self.cub]
        self.vidx, self.vmask = self._columns([blocks[i] for i in self.vor])
        self.cidx, self.cmask = self._columns(self.cubes)
        self.grids: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        if self.vor:
            vb = [blocks[i] for i in self.vor]
            k_max, w_max = max(len(b.codes) for b in vb), self.vidx.shape[1]
            self.codes = np.zeros((len(vb), k_max, w_max))
            labels = np.full((len(vb), k_max), -1, dtype=np.int64)
            pairwise = np.ones((len(vb), k_max, k_max))
            self.kvalid = np.zeros((len(vb), k_max), dtype=bool)
            for j, b in enumerate(vb):
                k, w = b.codes.shape
                self.codes[j, :k, :w] = _np(b.codes, np.float64)
                labels[j, :k] = _np(b.labels)
                pairwise[j, :k, :k] = _np(b.pairwise)
                self.kvalid[j, :k] = True
            self.kpad = np.nonzero(~self.kvalid)
            self.pairwise = pairwise
            # per block and nearest code point n: which k lead to another label, and 2·max(‖c_k − c_n‖, 1e-300)
            self.other = (labels[:, None, :] != labels[:, :, None]) & (pairwise > 0) & self.kvalid[:, None, :]
            self.twice = 2 * np.maximum(pairwise, 1e-300)
            self.normals = None
            if self.codes.shape[0] * k_max * k_max * w_max <= MAX_NORMAL_TABLE:
                with np.errstate(divide="ignore", invalid="ignore"):  # k = n: never a face
                    self.normals = (self.codes[:, None, :, :] - self.codes[:, :, None, :]) / pairwise[..., None]

    def _columns(self, blocks: list[Block]) -> tuple[np.ndarray, np.ndarray]:
        """(blocks, widest) column indices into h (padding: column ``dim`` of the output, 0 of the input) and the
        mask of real coordinates."""
        w_max = max((b.stop - b.start for b in blocks), default=0)
        idx = np.full((len(blocks), w_max), self.dim, dtype=np.int64)
        for j, b in enumerate(blocks):
            idx[j, : b.stop - b.start] = np.arange(b.start, b.stop)
        return idx, (idx < self.dim).astype(np.float64)

    def _gather(self, h: np.ndarray, idx: np.ndarray, mask: np.ndarray) -> np.ndarray:
        if len(idx) == 1 and idx.shape[1] == self.dim:  # one block spanning h: no padding
            return h[:, None, :]
        u = h[:, np.minimum(idx, self.dim - 1)]
        u *= mask
        return u

    def _sq_dist(self, u: np.ndarray) -> np.ndarray:
        """‖u − c‖² (N, blocks, K) over the stacked Voronoi blocks, as torch.cdist (direct differences, then the
        root) squared; inf for padding code points."""
        d2 = np.square(np.sqrt(np.square(u[:, :, None, :] - self.codes[None]).sum(-1)))
        if len(self.kpad[0]):
            d2[:, self.kpad[0], self.kpad[1]] = np.inf
        return d2

    def _grid(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if n not in self.grids:
            self.grids[n] = (np.arange(n), np.arange(n)[:, None])
        return self.grids[n]

    def nearest(self, h: np.ndarray) -> np.ndarray:
        """steppers.Stepper.nearest: the distance (N,) to the nearest code point of the product code."""
        best = self._sq_dist(self._gather(h, self.vidx, self.vmask)).min(-1) if self.vor else None
        total = np.zeros(len(h))
        for i in range(self.n_blocks):
            if self.is_vor[i]:
                total += best[:, self.pos[i]]
            else:  # up to MAX_BLOCK_CODES permutations: torch's cdist, as the reference
                b = self.cubes[self.pos[i]]
                u = torch.from_numpy(np.ascontiguousarray(h[:, b.start : b.stop]))
                dist = torch.cdist(u, b.codes, compute_mode="donot_use_mm_for_euclid_dist")
                total += dist.min(-1).values.square().numpy()
        return np.sqrt(total)

    def push(self, h: np.ndarray) -> np.ndarray:
        """steppers.Stepper.push: the outward unit normal (N, D) of the face nearest to h over the blocks (the
        first block on ties; zero where no face leads to another label)."""
        n = len(h)
        rows, col = self._grid(n)
        dist = np.empty((n, self.n_blocks))
        if self.vor:
            bv = np.arange(len(self.vor))[None, :]
            d2 = self._sq_dist(self._gather(h, self.vidx, self.vmask))
            n1 = d2.argmin(-1)  # (N, blocks)
            gap = (d2 - d2[col, bv, n1][..., None]) / self.twice[bv, n1]
            gap[~self.other[bv, n1]] = np.inf
            k = gap.argmin(-1)
            dist[:, self.vor] = gap[col, bv, k]
        if self.cub:
            u = self._gather(h, self.cidx, self.cmask)
            delta = u - np.rint(u)
            room = 0.5 - np.abs(delta)
            room[:, self.cmask == 0] = np.inf
            i = room.argmin(-1)
            dist[:, self.cub] = room[col, np.arange(len(self.cub))[None, :], i]
        choice = dist.argmin(-1) if self.n_blocks > 1 else np.zeros(n, dtype=np.int64)
        hit = np.isfinite(dist[rows, choice])
        out = np.zeros((n, self.dim + 1))
        if self.vor:
            r = rows[hit & self.is_vor[choice]]
            b = self.pos[choice[r]]
            kk, nn = k[r, b], n1[r, b]
            if self.normals is not None:
                normal = self.normals[b, nn, kk]
            else:
                normal = (self.codes[b, kk] - self.codes[b, nn]) / self.pairwise[b, nn, kk][:, None]
            out[r[:, None], self.vidx[b]] = normal
        if self.cub:
            r = rows[hit & ~self.is_vor[choice]]
            b = self.pos[choice[r]]
            ii = i[r, b]
            out[r, self.cidx[b, ii]] = np.where(delta[r, b, ii] >= 0, 1.0, -1.0)
        return out[:, : self.dim]


def _np(t: torch.Tensor, dtype: Any = None) -> np.ndarray:
    a = t.detach().cpu().numpy()
    return np.ascontiguousarray(a if dtype is None else a.astype(dtype))


class FastStepper:
    """The numpy twin of a Stepper: ``initial``, ``decode``, ``step``, ``read`` — the target's numpy step
    (``impl``) — and ``nearest``, ``push`` on (N, D) arrays at the stepper's dtype (steppers.py's module docstring
    defines each)."""

    def __init__(self, stepper: Stepper, impl: Any) -> None:
        self.stepper = stepper
        self.impl = impl
        self.dtype = FAST_DTYPES[stepper.dtype]
        self.blocks = stepper.blocks
        self.one_hot = stepper.one_hot
        self.n_blocks = len(stepper.blocks)
        self.faces = None if self.one_hot else _Faces(stepper.blocks)

    def initial(self, n: int) -> np.ndarray:
        return self.impl.initial(n)

    def decode(self, h: np.ndarray) -> Any:
        return self.impl.decode(h)

    def step(self, h: np.ndarray, x: np.ndarray, decoded: Any = None) -> np.ndarray:
        return self.impl.step(h, x, decoded)

    def read(self, h: np.ndarray, decoded: Any = None) -> np.ndarray:
        return self.impl.read(h, decoded)

    def _top2(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every block's two largest coordinates (values and indices, (N, blocks, 2)) by torch.topk, whose order
        among equal coordinates (a one-hot vector's zeros) decides the adversary's direction in the reference."""
        u = h.astype(np.float64, copy=False).reshape(len(h), self.n_blocks, -1)
        top = torch.from_numpy(u).topk(2, dim=-1)
        return u, top.values.numpy(), top.indices.numpy()

    def nearest(self, h: np.ndarray) -> np.ndarray:
        if self.one_hot:
            u, values, _ = self._top2(h)
            return np.sqrt(np.maximum((u * u).sum(-1) - 2 * values[..., 0] + 1, 0).sum(-1))
        return self.faces.nearest(h.astype(np.float64, copy=False))

    def push(self, h: np.ndarray) -> np.ndarray:
        if self.one_hot:
            u, values, idx = self._top2(h)
            block = (values[..., 0] - values[..., 1]).argmin(-1)
            rows = np.arange(len(h))
            out = np.zeros_like(u)
            out[rows, block, idx[rows, block, 0]] = -SQRT_HALF
            out[rows, block, idx[rows, block, 1]] = SQRT_HALF
            return out.reshape(len(h), -1)
        return self.faces.push(h.astype(np.float64, copy=False))


def fast_stepper(stepper: Stepper) -> FastStepper | None:
    """The numpy twin of ``stepper`` (built once and kept on it), or None for a dtype numpy cannot mirror or a
    target without a numpy step."""
    if stepper.dtype not in FAST_DTYPES:
        return None
    fast = getattr(stepper, "_fast", None)
    if fast is None:
        impl = stepper.net.numpy_step(stepper.mode or "fused")
        if impl is None:
            return None
        fast = FastStepper(stepper, impl)
        stepper._fast = fast  # type: ignore[attr-defined]
    return fast


def run(
    fast: FastStepper,
    ids: np.ndarray,
    *,
    eta: float,
    perturbation_kind: str,
    h: np.ndarray,
    decoded: Any,
    generator: torch.Generator,
    perturbation: Callable[..., Any],
    record_drift: bool = False,
) -> tuple[np.ndarray, np.ndarray, Any, np.ndarray | None]:
    """Read ``ids`` (N, T) from the hidden vectors ``h`` (their decoding ``decoded``) along one η-trajectory per
    word: (states read out (N, T), the last h, its decoding, the drift (N, T) or None) — realize/robust.run's loop:
    h ← Φ_x(h); h ← fl(h + e) with e = ``perturbation(fast, h, eta, kind, generator)`` (realize/robust.py's, on
    numpy arrays) in float64; read."""
    n, length = ids.shape
    out = np.empty((n, length), dtype=np.int64)
    dist = np.empty((n, length)) if record_drift else None
    cast = fast.dtype != np.float64
    for t in range(length):
        h = fast.step(h, ids[:, t], decoded)
        e = perturbation(fast, h, eta, perturbation_kind, generator)
        if e is not None:
            h = (h.astype(np.float64) + e).astype(fast.dtype) if cast else h + e
        decoded = fast.decode(h)
        out[:, t] = fast.read(h, decoded)
        if dist is not None:
            dist[:, t] = fast.nearest(h)
    return out, h, decoded, dist


__all__ = ["FAST_DTYPES", "FastStepper", "fast_stepper", "random_ball", "run"]
