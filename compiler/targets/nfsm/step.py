"""The recurrent step of compiled NFSMs in numpy, at float64 or float32: the numpy twin of the torch module's
recurrent form (nn/compiled/nfsm.py ``NFSMModel.step``), which builds it from its tables and attractors at its dtype
(``numpy_step``) for the fused η-trajectories of realize/trajectory.py.

The hidden state is flat, (N, D): one block per head holding the attractor vector a_{h_t}. A step first *restores*
(rounds every head to its nearest attractor, argmax_k ⟨u, a_k⟩ − ½‖a_k‖²: the restoring organ, so that a
perturbation added to a_{h_t} is undone by the next step's rounding), then applies every layer's table of its key
(x_t, the indices of the heads above at t − 1: the cascade wiring, compiler/wiring.py) and returns the new attractor
vectors (length-independent-state-tracking §6).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...keys import HIGH_FIRST, KeyLookup, encode
from ...program import half_norms
from ...wiring import layer_keys


class NFSMStep:
    """``initial(n)``, ``decode(h)`` (the restored head indices (N, heads)), ``step(h, x, decoded)`` and
    ``read(h, decoded)`` on flat vectors (N, D) at ``dtype``.

    ``attractors``: one (d_i, d_i) array per head (global head order); ``banks``: per layer the flat table
    ``bank[((key·r + head)·d_max + k)]`` of its r heads (the argmax tables at the dtype, padded to ``d_max``);
    ``layers``: per layer (key radices, the global indices of its upper heads, of its own heads); ``initial``: the
    start indices; ``dims`` the head sizes and ``readout`` the configuration code → state lookup."""

    def __init__(
        self,
        attractors: list[np.ndarray],
        banks: list[np.ndarray],
        layers: list[tuple[list[int], list[int], list[int]]],
        initial: np.ndarray,
        dims: list[int],
        readout: KeyLookup,
        d_max: int,
        dtype: Any,
    ) -> None:
        self.dtype = np.dtype(dtype)
        self.attractors = [np.ascontiguousarray(a, dtype=self.dtype) for a in attractors]
        self.half = [half_norms(a).astype(self.dtype) for a in self.attractors]
        self.heads = len(self.attractors)
        widths = [len(a) for a in self.attractors]
        self.stacked = np.stack(self.attractors) if len(set(widths)) == 1 else None
        self.onehot = self.stacked is not None and bool((self.stacked == np.eye(widths[0], dtype=self.dtype)).all())
        self.head_range = np.arange(self.heads)
        edges = np.cumsum([0, *widths])
        self.bounds = [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]
        self.banks = banks
        self.layers = [(list(r), list(up), np.arange(len(own)), np.asarray(own)) for r, up, own in layers]
        self.d_max = int(d_max)
        self.initial_config = np.asarray(initial, dtype=np.int64)
        self.dims = list(dims)
        self.readout = readout

    def vectors(self, idx: np.ndarray) -> np.ndarray:
        """The attractor vectors (N, D) of head indices (N, heads)."""
        if self.stacked is not None:
            return self.stacked[self.head_range, idx].reshape(len(idx), -1)
        return np.concatenate([a[idx[:, g]] for g, a in enumerate(self.attractors)], axis=-1)

    def initial(self, n: int) -> np.ndarray:
        return self.vectors(np.broadcast_to(self.initial_config, (n, self.heads)))

    def decode(self, h: np.ndarray) -> np.ndarray:
        """The index of the nearest attractor of every head (N, heads) (one-hot attractors: the largest coordinate,
        the first on ties)."""
        if self.onehot:
            return h.reshape(len(h), self.heads, -1).argmax(-1)
        cols = []
        for a, half, (lo, hi) in zip(self.attractors, self.half, self.bounds):
            cols.append((h[:, lo:hi] @ a.T - half).argmax(-1))
        return np.stack(cols, axis=-1)

    def step(self, h: np.ndarray, x: np.ndarray, decoded: Any = None) -> np.ndarray:
        idx = self.decode(h) if decoded is None else decoded
        new = np.empty_like(idx)
        single = len(self.layers) == 1
        for (radices, upper, local, glob), bank in zip(self.layers, self.banks):
            key = layer_keys(x, [idx[:, g] for g in upper], radices, HIGH_FIRST)
            own = idx if single else idx[:, glob]
            got = bank[(key[:, None] * len(local) + local) * self.d_max + own]
            if single:
                return self.vectors(got)
            new[:, glob] = got
        return self.vectors(new)

    def read(self, h: np.ndarray, decoded: Any = None) -> np.ndarray:
        idx = self.decode(h) if decoded is None else decoded
        return self.readout(encode(idx, self.dims, HIGH_FIRST))


__all__ = ["NFSMStep"]
