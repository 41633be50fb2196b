"""Logits for NFSM tables, laid out the way a trained NFSM computes them: key embedding → linear map.

For a layer with heads of d_1, …, d_r indices, the linear map produces P = Σ d_i² logits per key, head i's block
read row-major as θ[k, j] (row k: the logits of the index that k goes to). Its table is σ(k) = argmax_j θ[k, j]
(THEORY.md, NFSM; first index on ties, as numpy and torch do). The compiler chooses

    θ_key[k, j] = offset + margin·[j = σ_key(k)],

realized as embedding E = I_K (one-hot keys), weight W (P, K) with W[:, key] = margin·(one-hot blocks), bias
b = offset·1, so logits(key) = W·E[key] + b. ``offset`` is the common logit level a trained model also has; with it
the gap ``margin`` must survive rounding of offset + margin at the model's dtype (realize/certificate.py).

``embedding="dense"`` uses instead a seeded random orthogonal embedding Q (K, K) and W' = W·Q, so that
W'·Q[key] = W[:, key] as before but every logit is now a K-term dot product: rounding at the dtype acts on the
matrix product as it does in a trained model with dense embeddings.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from fsa2rnn.fsa.errors import LimitExceededError, SpecError

#: Default margin (best minus second-best logit) and common logit level of compiled models.
DEFAULT_MARGIN = 1.0
DEFAULT_OFFSET = 1.0
#: Largest number of weights (keys × logits per key) a compiled layer may have.
MAX_WEIGHTS = 2**25


def n_logits(heads: Sequence[int]) -> int:
    """Logits per step of a layer: Σ d_i²."""
    return int(sum(int(d) ** 2 for d in heads))


EMBEDDINGS = ("onehot", "dense")


def compile_logits(
    bank: np.ndarray,
    heads: Sequence[int],
    *,
    margin: float = DEFAULT_MARGIN,
    offset: float = DEFAULT_OFFSET,
    embedding: str = "onehot",
    seed: int = 0,
) -> dict[str, np.ndarray]:
    """Embedding, weight and bias (float64) whose logits have argmax tables ``bank`` (K, r, d_max)."""
    if embedding not in EMBEDDINGS:
        raise SpecError(f"embedding must be one of {', '.join(EMBEDDINGS)}, got {embedding!r}")
    margin, offset = float(margin), float(offset)
    if not np.isfinite(margin) or margin <= 0:
        raise SpecError(f"margin must be a positive finite number, got {margin}")
    if not np.isfinite(offset):
        raise SpecError(f"offset must be finite, got {offset}")
    n_keys = bank.shape[0]
    p = n_logits(heads)
    if max(p, n_keys) * n_keys > MAX_WEIGHTS:
        raise LimitExceededError(
            f"the NFSM layer needs {max(p, n_keys) * n_keys} weights ({n_keys} keys, {p} logits per key), "
            f"over the limit of {MAX_WEIGHTS}"
        )
    weight = np.zeros((p, n_keys), dtype=np.float64)
    keys = np.arange(n_keys)
    start = 0
    for h, d in enumerate(heads):
        rows = np.arange(d)
        # logit index of entry (k, σ(k)) in head h's block, for every key
        idx = start + rows[None, :] * d + bank[:, h, :d]
        weight[idx, keys[:, None]] = margin
        start += d * d
    emb = np.eye(n_keys, dtype=np.float64)
    if embedding == "dense":
        q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((n_keys, n_keys)))
        emb = q * np.sign(np.diag(r))[None, :]  # Haar-distributed orthogonal matrix: Q·Qᵀ = I
        weight = weight @ emb
    return {"embedding": emb, "weight": weight, "bias": np.full(p, offset, dtype=np.float64)}


def logits_numpy(embedding: np.ndarray, weight: np.ndarray, bias: np.ndarray) -> np.ndarray:
    """(K, P) logits of every key in float64: E @ Wᵀ + b."""
    return embedding @ weight.T + bias[None, :]


def tables_from_logits(logits: np.ndarray, heads: Sequence[int]) -> np.ndarray:
    """Argmax tables (K, r, d_max) from logits (K, P); entries past a head's d are the identity (never used)."""
    n_keys = logits.shape[0]
    d_max = max(int(d) for d in heads)
    bank = np.broadcast_to(np.arange(d_max), (n_keys, len(heads), d_max)).copy()
    start = 0
    for h, d in enumerate(heads):
        block = logits[:, start : start + d * d].reshape(n_keys, d, d)
        bank[:, h, :d] = np.argmax(block, axis=-1)
        start += d * d
    return bank
