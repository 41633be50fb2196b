"""Sample-based extraction: the automaton a model implements, read off its hidden states on sampled words.

1. Sample N words of length L (uniform symbols, seeded) and S continuations of length l. Run the model
   (realize/probe.py): after every prefix, its hidden state, its predicted class and its *signature* — the classes
   it predicts along each continuation.
2. Partition the prefixes: k-means on the hidden states (k-means++ seeded, Lloyd; k the number of distinct
   signatures, at most ``max_clusters``; states projected to ≤ 32 dimensions by a seeded Gaussian map first),
   refined by (class, signature), so that the model's predicted outputs agree on every sampled continuation of
   every prefix in a cluster. The empty prefix is its own cluster, the start, with no output (the model predicts
   after each symbol).
3. Transitions: cluster c —x→ the cluster most prefixes w of c with next symbol x go to (w·x is itself a sampled
   prefix); ``consistency`` is the fraction of sampled transitions that agree with the table. A pair (c, x) the
   sample never shows is probed: the shortest few prefixes of c are continued by x and each is put in the cluster
   of its (class, signature) whose centre is nearest (a nearest-code assignment; ``filled`` counts them).
4. Each cluster is labelled by the class the model predicts there; the Moore machine is then minimized
   (realize/moore.py), so that k-means may split a state into several clusters.

This is sample-based: it describes what the model does on the sampled words and continuations, not a proof about
every word (the agreement on held-out words at L and 10·L measures how far it carries).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..fsa.automaton import Automaton
from .moore import UNOBSERVED, MooreMachine
from .probe import Probe

#: Lloyd iterations at most, and the dimension hidden states are projected to before k-means
KMEANS_ITERATIONS = 30
PROJECTED_DIM = 32
#: prefixes of a cluster continued to probe a transition the sample never shows
PROBES_PER_GAP = 4


def kmeans(x: np.ndarray, k: int, seed: int, iterations: int = KMEANS_ITERATIONS) -> tuple[np.ndarray, np.ndarray]:
    """(labels (M,), centres (k', D)): Lloyd's algorithm from a seeded k-means++ start (k' ≤ k: duplicate points
    give fewer distinct seeds). Vectorized: one (M, k) distance matrix per iteration."""
    rng = np.random.default_rng(seed)
    m = len(x)
    k = max(1, min(k, m))
    sq = (x * x).sum(1)
    centres = [x[int(rng.integers(m))]]
    d2 = np.maximum(sq - 2 * x @ centres[0] + centres[0] @ centres[0], 0)
    for _ in range(1, k):
        if d2.sum() <= 0:
            break
        c = x[int(rng.choice(m, p=d2 / d2.sum()))]
        centres.append(c)
        d2 = np.minimum(d2, np.maximum(sq - 2 * x @ c + c @ c, 0))
    cen = np.stack(centres)
    labels = np.zeros(m, dtype=np.int64)
    for it in range(iterations):
        dist = sq[:, None] - 2 * x @ cen.T + (cen * cen).sum(1)[None, :]
        new = dist.argmin(1)
        if it and np.array_equal(new, labels):
            break
        labels = new
        counts = np.bincount(labels, minlength=len(cen))
        sums = np.zeros_like(cen)
        np.add.at(sums, labels, x)
        keep = counts > 0
        cen[keep] = sums[keep] / counts[keep, None]
    return labels, cen


class _Projection:
    """Centre and scale hidden states like the sample; a seeded Gaussian map to :data:`PROJECTED_DIM` if wider."""

    def __init__(self, x: np.ndarray, seed: int) -> None:
        self.mean = x.mean(0)
        c = x - self.mean
        scale = float(np.sqrt((c * c).sum(1).mean()))
        self.scale = scale if scale > 0 else 1.0
        d = x.shape[1]
        self.map = None
        if d > PROJECTED_DIM:
            self.map = np.random.default_rng(seed).standard_normal((d, PROJECTED_DIM)) / np.sqrt(PROJECTED_DIM)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        y = (x - self.mean) / self.scale
        return y if self.map is None else y @ self.map


def sample_extract(
    probe: Probe,
    symbols: tuple[str, ...],
    classes: tuple[str, ...],
    *,
    length: int,
    words: int = 256,
    suffixes: int = 16,
    suffix_length: int = 8,
    max_clusters: int = 64,
    seed: int = 0,
) -> tuple[MooreMachine, dict[str, Any]]:
    """The cluster machine (a Moore machine, before minimization) and the figures of the extraction (module
    docstring): clusters, k, signatures, consistency, filled transitions and the sample's sizes."""
    k = len(symbols)
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, k, (words, length))
    sufs = rng.integers(0, k, (suffixes, suffix_length))
    hidden, labels, sig = probe.walk(ids, sufs)
    n, L = labels.shape
    flat = hidden.reshape(n * L, -1)
    project = _Projection(flat, seed)
    x = project(flat)
    behaviour_rows = np.concatenate([labels.reshape(-1, 1), sig[:, 1:].reshape(n * L, -1)], axis=1)
    behaviours, beh = np.unique(behaviour_rows, axis=0, return_inverse=True)
    beh = beh.reshape(-1)
    n_kmeans = min(len(behaviours), max_clusters)
    km, _ = kmeans(x, n_kmeans, seed)
    pairs, cluster = np.unique(km * len(behaviours) + beh, return_inverse=True)
    cluster = cluster.reshape(-1)
    n_cl = len(pairs)
    start = n_cl  # the empty prefix
    cl = np.concatenate([np.full((n, 1), start), cluster.reshape(n, L)], axis=1)  # (N, L + 1): prefix length 0..L
    # sampled transitions: prefix of length t (cluster cl[:, t]) read ids[:, t] and went to cl[:, t + 1]
    src, sym, dst = cl[:, :-1].ravel(), ids.ravel(), cl[:, 1:].ravel()
    total = n_cl + 1
    codes, counts = np.unique((src * k + sym) * total + dst, return_counts=True)  # sparse (cluster, x, cluster') counts
    pair, target = codes // total, codes % total
    order = np.lexsort((counts, pair))  # by pair, then count: the last of each pair is its majority
    last = order[np.r_[pair[order][1:] != pair[order][:-1], True]]
    table = np.zeros((k, total), dtype=np.int64)
    table[pair[last] % k, pair[last] // k] = target[last]
    agree = int(counts[last].sum())
    seen = np.zeros((total, k), dtype=bool)
    seen[pair // k, pair % k] = True
    centres = np.zeros((n_cl, x.shape[1]))
    np.add.at(centres, cluster, x)
    centres /= np.bincount(cluster, minlength=n_cl)[:, None]
    cl_beh = pairs % len(behaviours)
    gaps = np.argwhere(~seen)  # (cluster, symbol) never sampled
    filled = 0
    if len(gaps):
        filled = _fill(probe, gaps, table, cl, ids, sufs, behaviours, cl_beh, centres, project, start, seed)
    out_labels = np.append(behaviours[cl_beh, 0], UNOBSERVED)
    names = [f"c{i}" for i in range(n_cl)] + ["start"]
    machine = MooreMachine(Automaton(table, states=names, symbols=symbols, initial=start), out_labels, classes)
    details = {
        "words": int(n),
        "length": int(L),
        "suffixes": int(suffixes),
        "suffix_length": int(suffix_length),
        "kmeans_k": int(n_kmeans),
        "signatures": int(len(behaviours)),
        "clusters": int(n_cl),
        "consistency": agree / max(len(src), 1),
        "filled": int(filled),
    }
    return machine, details


def _fill(
    probe: Probe,
    gaps: np.ndarray,
    table: np.ndarray,
    cl: np.ndarray,
    ids: np.ndarray,
    sufs: np.ndarray,
    behaviours: np.ndarray,
    cl_beh: np.ndarray,
    centres: np.ndarray,
    project: _Projection,
    start: int,
    seed: int,
) -> int:
    """Probe the transitions (cluster, x) the sample never shows (module docstring, step 3); fills ``table``."""
    rng = np.random.default_rng(seed + 1)
    words, owners = [], []
    for g, (c, x) in enumerate(gaps.tolist()):
        if c == start:
            members = [(0, 0)]
        else:  # its shortest prefixes (few distinct lengths: the probes run in few batches)
            rows, cols = np.nonzero(cl == c)
            shuffle = rng.permutation(len(rows))
            pick = shuffle[np.argsort(cols[shuffle], kind="stable")][:PROBES_PER_GAP]
            members = list(zip(rows[pick].tolist(), cols[pick].tolist()))
        for i, t in members:
            words.append(ids[i, :t].tolist() + [x])
            owners.append(g)
    hidden, labels, sig = probe.describe(words, sufs)
    points = project(hidden)
    index = {row.tobytes(): b for b, row in enumerate(behaviours)}
    votes: dict[int, list[int]] = {}
    for p, lab, s, g in zip(points, labels, sig, owners):
        b = index.get(np.concatenate([[lab], s]).astype(behaviours.dtype).tobytes())
        cands = np.flatnonzero(cl_beh == b) if b is not None else np.flatnonzero(behaviours[cl_beh, 0] == lab)
        if not len(cands):
            cands = np.arange(len(cl_beh))
        best = cands[np.argmin(((centres[cands] - p) ** 2).sum(1))]
        votes.setdefault(g, []).append(int(best))
    for g, vs in votes.items():
        c, x = gaps[g]
        table[x, c] = np.bincount(vs).argmax()
    return len(votes)
