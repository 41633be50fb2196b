"""The DLR paper's atomic regression tasks (Gupta et al., "Simplifying and understanding state space models with
diagonal linear RNNs", §4), as ``dlr:<name>``. Inputs are real vectors (B, T, F), targets (B, T, C); the loss is
the MSE on the masked positions and the score R². x is drawn from N(0, 1) and normalized by ‖x‖_∞. As in the paper,
every task's input carries two position features after its own channels: (cos 2πi/T, sin 2πi/T) at position i of
an input of T positions (:func:`position_features`).

====================  =============================================================================================
task                  definition (L = the length passed to ``sample``)
====================  =============================================================================================
``shift``             y_{i,j} = x_{i − jL/C}, j = 0..C−1 (C = 8 uniformly spaced right shifts; x_{<0} = 0)
``cumsum``            y_i = (i + 1)^{−1/2} Σ_{j≤i} x_j
``cummax``            y_i = max_{j≤i} x_j
``reverse``           input x padded by L zeros (length 2L); y_i = x_{L−1−i} on the L rightmost positions
``sort``              as reverse; y_i = the i-th closest element to x_0 (by |x_j − x_0|)
``select``            M = 32 distinct positions of x ∈ R^{L+M} marked by a second channel, M zeros appended
                      (length L + 2M); the M rightmost outputs copy the marked values in order
``mips``              q, k, v ∈ R^{L×D} unit rows (D = 4), input (q, k, v); y_i = v_{i'}, i' = argmax_{j≤i} ⟨q_i, k_j⟩
``context_shift``     x ∈ R^{L−2}, s uniform in 0..L−2, input (cos 2πs/L, sin 2πs/L, x); y_i = x'_{i−s}
``solve``             N the largest with L − N² − N ≥ N; A random orthogonal, X a random unit vector, B = AX; input
                      (a_1, b_1, …, a_N, b_N, 0…) with a_i the rows of A; the N rightmost outputs are X
====================  =============================================================================================
"""

from __future__ import annotations

import math

import torch

from ...fsa.errors import SpecError
from .base import Batch, LengthSpec, Task

DLR_TASKS = ("shift", "cumsum", "cummax", "reverse", "sort", "select", "mips", "context_shift", "solve")
_SOURCE = "Gupta et al. (diagonal linear RNNs), §4 atomic tasks"
#: Select's number of marked positions (the paper's M)
SELECT_M = 32
#: the two input channels appended to every task's features
POSITION_FEATURES = ["pos_cos", "pos_sin"]


def position_features(batch: int, t: int) -> torch.Tensor:
    """(batch, t, 2): (cos 2πi/t, sin 2πi/t) at position i."""
    angle = 2 * math.pi * torch.arange(t, dtype=torch.float64) / t
    return torch.stack([torch.cos(angle), torch.sin(angle)], dim=-1).to(torch.float32).expand(batch, t, 2)


def _normalized(shape: tuple[int, ...], gen: torch.Generator) -> torch.Tensor:
    x = torch.randn(*shape, generator=gen)
    return x / x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-12)


class DLRTask(Task):
    def __init__(self, which: str) -> None:
        if which not in DLR_TASKS:
            raise SpecError(f"unknown DLR task {which!r} (choose from {', '.join(DLR_TASKS)})")
        features = {"select": ["x", "marked"], "mips": [f"{n}{i}" for n in "qkv" for i in range(4)]}.get(which, ["x"])
        outputs = {"shift": [f"shift{j}" for j in range(8)], "mips": [f"v{i}" for i in range(4)]}.get(which, ["y"])
        super().__init__(
            name=f"dlr:{which}",
            vocab=features + POSITION_FEATURES,
            classes=outputs,
            chance=0.0,
            source=_SOURCE,
            description=f"regression ({which}); MSE loss, R² score; fixed length",
            kind="regression",
            default_train_length=(256, 256),
        )
        self.which = which

    def sample(self, batch: int, length: LengthSpec, generator: torch.Generator, *, train: bool = True) -> Batch:
        if not isinstance(length, int):
            lo, hi = length
            if lo != hi:
                raise SpecError(f"{self.name} has a fixed length; got the range {lo}..{hi}")
            length = lo
        if length < 8:
            raise SpecError(f"{self.name} needs a length ≥ 8, got {length}")
        x, y, mask = getattr(self, f"_{self.which}")(batch, length, generator)
        if x.ndim == 2:
            x = x[..., None]
        x = torch.cat([x, position_features(batch, x.shape[1]).to(x.dtype)], dim=-1)
        if y.ndim == 2:
            y = y[..., None]
        return Batch(x, y, mask, torch.full((batch,), x.shape[1], dtype=torch.long))

    # each returns inputs, targets and the judged positions
    @staticmethod
    def _all(batch: int, t: int) -> torch.Tensor:
        return torch.ones((batch, t), dtype=torch.bool)

    def _shift(self, batch, L, gen):
        x, c = _normalized((batch, L), gen), 8
        y = torch.zeros(batch, L, c)
        for j in range(c):
            s = j * L // c
            y[:, s:, j] = x[:, : L - s]
        return x, y, self._all(batch, L)

    def _cumsum(self, batch, L, gen):
        x = _normalized((batch, L), gen)
        return x, x.cumsum(1) / torch.arange(1, L + 1).sqrt(), self._all(batch, L)

    def _cummax(self, batch, L, gen):
        x = _normalized((batch, L), gen)
        return x, x.cummax(1).values, self._all(batch, L)

    def _right_outputs(self, batch, x, out):
        """Pad x with len(out) zeros; the outputs are judged on the len(out) rightmost positions."""
        n = out.shape[1]
        inputs = torch.cat([x, torch.zeros(batch, n, *x.shape[2:])], dim=1)
        t = inputs.shape[1]
        y = torch.zeros(batch, t, *out.shape[2:])
        y[:, t - n :] = out
        mask = torch.zeros(batch, t, dtype=torch.bool)
        mask[:, t - n :] = True
        return inputs, y, mask

    def _reverse(self, batch, L, gen):
        x = _normalized((batch, L), gen)
        return self._right_outputs(batch, x, x.flip(1))

    def _sort(self, batch, L, gen):
        x = _normalized((batch, L), gen)
        order = torch.argsort((x - x[:, :1]).abs(), dim=1, stable=True)
        return self._right_outputs(batch, x, torch.gather(x, 1, order))

    def _select(self, batch, L, gen):
        m = SELECT_M
        x = _normalized((batch, L + m), gen)
        picked = torch.argsort(torch.rand(batch, L + m, generator=gen), dim=1)[:, :m].sort(dim=1).values
        marks = torch.zeros(batch, L + m)
        marks.scatter_(1, picked, 1.0)
        return self._right_outputs(batch, torch.stack([x, marks], dim=-1), torch.gather(x, 1, picked))

    def _mips(self, batch, L, gen):
        d = 4
        q, k, v = (torch.nn.functional.normalize(torch.randn(batch, L, d, generator=gen), dim=-1) for _ in range(3))
        scores = q @ k.transpose(1, 2)  # (B, i, j)
        scores = scores.masked_fill(torch.ones(L, L, dtype=torch.bool).triu(1), -math.inf)
        best = scores.argmax(dim=2)
        y = torch.gather(v, 1, best[..., None].expand(-1, -1, d))
        return torch.cat([q, k, v], dim=-1), y, self._all(batch, L)

    def _context_shift(self, batch, L, gen):
        x = _normalized((batch, L - 2), gen)
        s = torch.randint(0, L - 1, (batch,), generator=gen)
        angle = 2 * math.pi * s.double() / L
        xp = torch.cat([angle.cos().float()[:, None], angle.sin().float()[:, None], x], dim=1)
        idx = torch.arange(L)[None, :] - s[:, None]
        y = torch.where(idx >= 0, torch.gather(xp, 1, idx.clamp_min(0)), torch.zeros(()))
        return xp, y, self._all(batch, L)

    def _solve(self, batch, L, gen):
        n = max(k for k in range(1, L + 1) if L - k * k - k >= k)
        q, r = torch.linalg.qr(torch.randn(batch, n, n, generator=gen, dtype=torch.float64))
        a = q * torch.sign(torch.diagonal(r, dim1=-2, dim2=-1))[:, None, :]  # Haar-distributed (Mezzadri 2007)
        xs = torch.nn.functional.normalize(torch.randn(batch, n, generator=gen, dtype=torch.float64), dim=-1)
        b = (a @ xs[..., None])[..., 0]
        body = torch.cat([a, b[..., None]], dim=2).reshape(batch, n * (n + 1))
        x = torch.cat([body, torch.zeros(batch, L - n * (n + 1) - n, dtype=torch.float64)], dim=1).float()
        return self._right_outputs(batch, x, xs.float())
