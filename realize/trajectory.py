"""η-trajectories in numpy: the fused perturbed step of realize/robust.py.

realize/robust.py's reference loop steps a :class:`~fsa2rnn.realize.steppers.Stepper` in torch, one time step at a
time over all words at once; with state vectors of a few dozen entries its cost is torch's dispatch overhead (about
2 ms a step whatever the number of words). A :class:`FastStepper` holds the same weights, tables and code geometry
as numpy arrays at the stepper's dtype and computes the same Φ_x, π, decoding, drift and adversarial push with the
same arithmetic (the same products, sums and comparisons in the same order) in a fixed number of numpy calls a step
— the layers of a cascade and the cells of all blocks stacked —, so that it reads out the same states in a fraction
of the time (docs/checks.md); :func:`run` is the loop. The random perturbation draws the same numbers from the same
torch generator as the reference and scales them in numpy (its norm may round differently in the last bit). Float64
and float32 only (numpy has no bfloat16, and its float16 arithmetic differs from torch's): other dtypes keep the
reference loop (:func:`fast_stepper` is None).

Where the libraries choose a summation order (the fused A(x)·h of a Householder layer, a nearest-code score ⟨c, h⟩)
the two could round differently; the states read out and the L_max then still agree unless a state sits exactly on
a cell face. tests/test_trajectory.py checks both on T4/S5/Z5/Z7/NFSM/shift-register models.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from fsa2rnn.runtime.affine import window_digits
from fsa2rnn.runtime.lookup import KeyLookup
from fsa2rnn.runtime.lrnn import half_norms

from .steppers import AffineStepper, Block, LinearRNNStepper, NFSMStepper, Stepper

#: torch dtypes with a numpy twin whose arithmetic rounds the same way
FAST_DTYPES = {torch.float64: np.float64, torch.float32: np.float32}
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


def _np(t: torch.Tensor, dtype: Any = None) -> np.ndarray:
    a = t.detach().cpu().numpy()
    return np.ascontiguousarray(a if dtype is None else a.astype(dtype))


def _lookup(table: Any) -> KeyLookup:
    """The numpy twin of an nn.lrnn.KeyTable."""
    return KeyLookup(_np(table.keys), _np(table.values), table.space)


def _encode(cols: list[np.ndarray], radix: list[int]) -> np.ndarray:
    """Mixed-radix key Σ_i cols[i] · Π_{j<i} radix[j] (nn/lrnn_model.py's _encode)."""
    key, mult = cols[0].astype(np.int64), int(radix[0])
    for c, r in zip(cols[1:], radix[1:]):
        key = key + c * mult
        mult *= int(r)
    return key


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


class FastStepper:
    """The numpy twin of a Stepper: ``initial``, ``decode``, ``step``, ``read``, ``nearest``, ``push`` on (N, D)
    arrays at the stepper's dtype (steppers.py's module docstring defines each)."""

    def __init__(self, stepper: Stepper) -> None:
        self.stepper = stepper
        self.dtype = FAST_DTYPES[stepper.dtype]
        self.blocks = stepper.blocks
        self.faces = _Faces(stepper.blocks)

    def decode(self, h: np.ndarray) -> Any:
        return None

    def nearest(self, h: np.ndarray) -> np.ndarray:
        return self.faces.nearest(h.astype(np.float64, copy=False))

    def push(self, h: np.ndarray) -> np.ndarray:
        return self.faces.push(h.astype(np.float64, copy=False))


class FastLinearRNN(FastStepper):
    """Householder (fused or factor by factor) and diagonal cascades (steppers.LinearRNNStepper). The decoded
    state is (N, layers). When every layer is a fused GH layer with a dense row table (the usual cascade) the
    layers are stacked, padded to the widest one (zero rows and columns, which add exact zeros at the end of each
    sum), and a step is one gather of A(r) for all layers and one batched product; likewise the nearest-code
    readouts are one batched score."""

    def __init__(self, stepper: LinearRNNStepper) -> None:
        super().__init__(stepper)
        dt, net = self.dtype, stepper.net
        self.mode = stepper.mode
        self.layers: list[dict[str, Any]] = []
        for layer, diag, table, radix in zip(net.layers, stepper.diagonal, net.row_tables, net.radices):
            ro = layer.readout
            spec: dict[str, Any] = {"diag": diag, "rows": _lookup(table), "radix": list(radix), "kind": ro.kind}
            spec["dense"] = spec["rows"].dense
            if diag:
                spec.update(lam=_np(layer.lam, dt), b=_np(layer.b, dt))
            else:
                spec.update(A=_np(layer.A_fused, dt), B=_np(layer.B, dt), beta=_np(layer.beta, dt), v=_np(layer.v, dt))
            if ro.kind == "nearest":
                c = _np(ro.codes, dt).reshape(ro.codes.shape[0], -1)
                half = half_norms(c).astype(dt)
                spec.update(c_t=np.ascontiguousarray(c.T), half=half, states=_np(ro.code_states))
            else:
                spec.update(width=ro.width, hash=_lookup(ro.table), powers=_np(ro.powers))
            spec["h0"] = _np(layer.h0, dt).reshape(-1)
            self.layers.append(spec)
        self.final = _lookup(net.final_table)
        self.final_dense = self.final.dense
        self.final_mult = np.cumprod([1, *net.final_radix[:-1]]).astype(np.int64)
        self.bounds = [(b.start, b.stop) for b in self.blocks]
        self.stacked_step = self.mode == "fused" and not any(stepper.diagonal)
        self.stacked_step &= all(sp["dense"] is not None for sp in self.layers)
        self.stacked_decode = all(sp["kind"] == "nearest" for sp in self.layers)
        self._stack()

    def _stack(self) -> None:
        """The padded, stacked tables of the stacked step and readout."""
        n_layers, dim = len(self.layers), self.bounds[-1][1]
        w = max(b - a for a, b in self.bounds)
        self.pidx = np.zeros((n_layers, w), dtype=np.int64)
        self.pmask = np.zeros((n_layers, w), dtype=self.dtype)
        unpad = []
        for i, (a, b) in enumerate(self.bounds):
            self.pidx[i, : b - a] = np.arange(a, b)
            self.pmask[i, : b - a] = 1
            unpad.extend(i * w + np.arange(b - a))
        self.unpad = np.asarray(unpad, dtype=np.int64)
        assert len(self.unpad) == dim
        if self.stacked_step:
            # row r of layer i at row_off[i] + r; key k of layer i at key_off[i] + k (a missing row reads row 0)
            a_cat, b_cat, dense, row_off, key_off = [], [], [], 0, []
            for sp in self.layers:
                r, wi = sp["A"].shape[0], sp["A"].shape[1]
                a_pad = np.zeros((r, w, w), dtype=self.dtype)
                a_pad[:, :wi, :wi] = sp["A"]
                b_pad = np.zeros((r, w), dtype=self.dtype)
                b_pad[:, :wi] = sp["B"]
                a_cat.append(a_pad)
                b_cat.append(b_pad)
                key_off.append(sum(len(d) for d in dense))
                dense.append(np.maximum(sp["dense"][:-1], 0) + row_off)
                row_off += r
            self.a_cat, self.b_cat = np.concatenate(a_cat), np.concatenate(b_cat)
            self.dense_cat, self.key_off = np.concatenate(dense), np.asarray(key_off, dtype=np.int64)
            # key of layer i: x + Σ_{j<i} s_j · Π_{m≤j} radix_i[m]
            self.key_mult = np.zeros((max(n_layers - 1, 1), n_layers), dtype=np.int64)
            for i, sp in enumerate(self.layers):
                for j in range(i):
                    self.key_mult[j, i] = int(np.prod(sp["radix"][: j + 1], dtype=object))
        if self.stacked_decode:
            s_max = max(len(sp["half"]) for sp in self.layers)
            self.c_all = np.zeros((n_layers, w, s_max), dtype=self.dtype)
            self.half_all = np.full((n_layers, s_max), np.inf, dtype=self.dtype)
            self.states_all = np.zeros((n_layers, s_max), dtype=np.int64)
            for i, sp in enumerate(self.layers):
                wi, si = sp["c_t"].shape
                self.c_all[i, :wi, :si] = sp["c_t"]
                self.half_all[i, :si] = sp["half"]
                self.states_all[i, :si] = sp["states"]
            self.layer_range = np.arange(n_layers)

    def _parts(self, h: np.ndarray) -> np.ndarray:
        """h as (N, layers, widest) with zero padding."""
        if len(self.layers) == 1:
            return h[:, None, :]
        p = h[:, self.pidx]
        p *= self.pmask
        return p

    def initial(self, n: int) -> np.ndarray:
        return np.tile(np.concatenate([s["h0"] for s in self.layers]), (n, 1))

    def decode(self, h: np.ndarray) -> np.ndarray:
        """The decoded state of every layer (N, layers), −1 where a hash readout finds no permutation."""
        if self.stacked_decode:
            score = np.matmul(self._parts(h)[:, :, None, :], self.c_all[None])[:, :, 0, :]
            score -= self.half_all
            return self.states_all[self.layer_range, score.argmax(-1)]
        out = np.empty((len(h), len(self.layers)), dtype=np.int64)
        for i, (s, (a, b)) in enumerate(zip(self.layers, self.bounds)):
            part = h[:, a:b]
            if s["kind"] == "nearest":
                score = part @ s["c_t"]
                score -= s["half"]
                out[:, i] = s["states"][score.argmax(-1)]
            else:
                r = np.rint(part)
                ok = (r.min(-1) >= 1) & (r.max(-1) <= s["width"])
                key = (np.clip(r, 1, s["width"]).astype(np.int64) - 1) @ s["powers"]
                out[:, i] = s["hash"](np.where(ok, key, -1))
        return out

    def step(self, h: np.ndarray, x: np.ndarray, decoded: Any = None) -> np.ndarray:
        if decoded is None:
            decoded = self.decode(h)
        upper = np.maximum(decoded[:, :-1], 0)  # a failed decode is wrong already; keep going
        if self.stacked_step:
            keys = x[:, None] + self.key_off
            if upper.shape[1]:
                keys = keys + upper @ self.key_mult
            rows = self.dense_cat[keys]
            new = np.matmul(self.a_cat[rows], self._parts(h)[..., None])[..., 0] + self.b_cat[rows]
            return new[:, 0] if len(self.layers) == 1 else new.reshape(len(h), -1)[:, self.unpad]
        out = np.empty_like(h)
        for i, (s, (a, b)) in enumerate(zip(self.layers, self.bounds)):
            key = _encode([x, *upper.T[:i]], s["radix"])  # in range: symbols and decoded states below their radix
            rows = np.maximum(s["rows"](key) if s["dense"] is None else s["dense"][key], 0)
            part = h[:, a:b]
            if s["diag"]:  # (re, im) pairs, nn/ops/lrnn_scan's cmul
                p = part.reshape(len(h), -1, 2)
                lam, bb = s["lam"][rows], s["b"][rows]
                ar, ai, br, bi = lam[..., 0], lam[..., 1], p[..., 0], p[..., 1]
                new = np.stack([ar * br - ai * bi, ar * bi + ai * br], axis=-1) + bb
                out[:, a:b] = new.reshape(len(h), -1)
            elif self.mode == "fused":
                out[:, a:b] = np.matmul(s["A"][rows], part[:, :, None])[:, :, 0] + s["B"][rows]
            else:  # factor by factor, h ← h − β v (vᵀh)
                bt, vt = s["beta"][rows], s["v"][rows]
                new = part
                for j in range(bt.shape[1]):
                    vj = vt[:, j]
                    new = new - bt[:, j : j + 1] * vj * (vj * new).sum(-1, keepdims=True)
                out[:, a:b] = new + s["B"][rows]
        return out

    def read(self, h: np.ndarray, decoded: Any = None) -> np.ndarray:
        states = self.decode(h) if decoded is None else decoded
        key = np.maximum(states, 0) @ self.final_mult
        out = self.final(key) if self.final_dense is None else self.final_dense[key]
        return np.where((states < 0).any(-1), -1, out)


def _key_weights(net: Any, i: int) -> tuple[list[int], list[int]]:
    """The mixed-radix weights of layer i's key digits (the symbol, then its upper heads) and those heads."""
    if hasattr(net, "key_weights"):  # the compiled module's own weights and program
        return [int(w) for w in net.key_weights[i]], [int(g) for g in net.program.layers[i].upper]
    spec = net.layer_specs[i]
    radices = [int(r) for r in spec["key_radices"]]
    return [math.prod(radices[m + 1 :]) for m in range(len(radices))], [int(g) for g in spec["upper"]]


def _readout(net: Any, space: int) -> KeyLookup:
    """The readout configuration code → automaton state (−1: none) of a compiled NFSM module."""
    table = getattr(net, "readout", None)
    if table is not None and hasattr(table, "keys"):
        return _lookup(table)
    return KeyLookup(_np(net.readout_codes), _np(net.readout_states), space)


class FastNFSM(FastStepper):
    """Compiled NFSMs (steppers.NFSMStepper): restore by rounding to the nearest attractor, then the tables."""

    def __init__(self, stepper: NFSMStepper) -> None:
        super().__init__(stepper)
        dt, net = self.dtype, stepper.net
        self.attractors = [_np(a, dt) for a in stepper.attractors]
        self.half = [half_norms(a).astype(dt) for a in self.attractors]
        self.stacked = None if stepper.stacked is None else _np(stepper.stacked, dt)
        self.onehot = stepper.onehot
        self.heads = len(self.attractors)
        self.head_range = np.arange(self.heads)
        self.banks = [_np(b) for b in stepper.flat_banks]
        self.d_max = stepper.d_max
        # layer i's key: Σ_m w_m · (x, the indices of its upper heads)_m (mixed radix, the symbol most significant)
        self.specs = [
            (*_key_weights(net, i), _np(local), _np(glob)) for i, (local, glob) in enumerate(stepper.layer_index)
        ]
        self.initial_config = _np(stepper.initial_config)
        radices = [int(r) for r in net.radices]  # configuration code: mixed radix, the first head most significant
        self.code_weights = np.asarray([math.prod(radices[i + 1 :]) for i in range(len(radices))], dtype=np.int64)
        self.readout = _readout(net, math.prod(radices))

    def _vectors(self, idx: np.ndarray) -> np.ndarray:
        if self.stacked is not None:
            return self.stacked[self.head_range, idx].reshape(len(idx), -1)
        return np.concatenate([a[idx[:, g]] for g, a in enumerate(self.attractors)], axis=-1)

    def initial(self, n: int) -> np.ndarray:
        return self._vectors(np.broadcast_to(self.initial_config, (n, self.heads)))

    def decode(self, h: np.ndarray) -> np.ndarray:
        """The index of the nearest attractor of every head (N, heads)."""
        if self.onehot:
            return h.reshape(len(h), self.heads, -1).argmax(-1)
        cols = []
        for a, half, b in zip(self.attractors, self.half, self.blocks):
            cols.append((h[:, b.start : b.stop] @ a.T - half).argmax(-1))
        return np.stack(cols, axis=-1)

    def step(self, h: np.ndarray, x: np.ndarray, decoded: Any = None) -> np.ndarray:
        idx = self.decode(h) if decoded is None else decoded
        new = np.empty_like(idx)
        for (weights, upper, local, glob), bank in zip(self.specs, self.banks):
            key = x * weights[0]
            for w, g in zip(weights[1:], upper):
                key = key + idx[:, g] * w
            own = idx if len(self.specs) == 1 else idx[:, glob]
            got = bank[(key[:, None] * len(local) + local) * self.d_max + own]
            if len(self.specs) == 1:
                return self._vectors(got)
            new[:, glob] = got
        return self._vectors(new)

    def read(self, h: np.ndarray, decoded: Any = None) -> np.ndarray:
        idx = self.decode(h) if decoded is None else decoded
        return self.readout(idx @ self.code_weights)

    def _top2(self, h: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Every head's two largest coordinates (values and indices, (N, heads, 2)) by torch.topk, whose order
        among equal coordinates (a one-hot vector's zeros) decides the adversary's direction in the reference."""
        u = h.astype(np.float64, copy=False).reshape(len(h), self.heads, -1)
        top = torch.from_numpy(u).topk(2, dim=-1)
        return u, top.values.numpy(), top.indices.numpy()

    def nearest(self, h: np.ndarray) -> np.ndarray:
        if not self.onehot or self.stacked.shape[-1] < 2:
            return super().nearest(h)
        u, values, _ = self._top2(h)
        return np.sqrt(np.maximum((u * u).sum(-1) - 2 * values[..., 0] + 1, 0).sum(-1))

    def push(self, h: np.ndarray) -> np.ndarray:
        if not self.onehot or self.stacked.shape[-1] < 2:
            return super().push(h)
        u, values, idx = self._top2(h)
        head = (values[..., 0] - values[..., 1]).argmin(-1)
        rows = np.arange(len(h))
        out = np.zeros_like(u)
        out[rows, head, idx[rows, head, 0]] = -SQRT_HALF
        out[rows, head, idx[rows, head, 1]] = SQRT_HALF
        return out.reshape(len(h), -1)


class FastAffine(FastStepper):
    """Compiled shift registers (steppers.AffineStepper): h ← A h + b(x), blocks decoded to window digits."""

    def __init__(self, stepper: AffineStepper) -> None:
        super().__init__(stepper)
        net = stepper.net
        self.a_t, self.b = _np(net.A.T, self.dtype), _np(net.B, self.dtype)
        self.h0 = _np(net.h0, self.dtype).reshape(-1)
        self.window, self.n_symbols, self.table = net.window, net.n_symbols, _np(net.table)
        self.weights = (self.n_symbols + 1) ** np.arange(self.window, dtype=np.int64)

    def initial(self, n: int) -> np.ndarray:
        return np.tile(self.h0, (n, 1))

    def step(self, h: np.ndarray, x: np.ndarray, decoded: Any = None) -> np.ndarray:
        return h @ self.a_t + self.b[x]

    def read(self, h: np.ndarray, decoded: Any = None) -> np.ndarray:
        blocks = h.reshape(len(h), self.window, self.n_symbols).astype(np.float64)
        return self.table[(window_digits(blocks) * self.weights).sum(-1)]


def fast_stepper(stepper: Stepper) -> FastStepper | None:
    """The numpy twin of ``stepper`` (built once and kept on it), or None for a dtype numpy cannot mirror."""
    if stepper.dtype not in FAST_DTYPES:
        return None
    fast = getattr(stepper, "_fast", None)
    if fast is None:
        kinds = ((LinearRNNStepper, FastLinearRNN), (NFSMStepper, FastNFSM), (AffineStepper, FastAffine))
        cls = next((f for s, f in kinds if isinstance(stepper, s)), None)
        if cls is None:
            return None
        fast = cls(stepper)
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
