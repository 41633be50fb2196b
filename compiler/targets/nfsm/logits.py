"""Logits for NFSM tables, laid out the way a trained NFSM computes them: key embedding → linear map.

For a layer with heads of d_1, …, d_r indices, the linear map produces P = Σ d_i² logits per key, head i's block
read row-major as θ[k, j] (row k: the logits of the index that k goes to). Its table is σ(k) = argmax_j θ[k, j]
(docs/theory.md, "Neural Finite-State Machines"; first index on ties, as numpy and torch do). The compiler chooses

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

from ....fsa.errors import LimitExceededError, SpecError

#: Default margin (best minus second-best logit) and common logit level of compiled models.
DEFAULT_MARGIN = 1.0
DEFAULT_OFFSET = 1.0
#: Largest number of weights (keys × logits per key) a compiled layer may have.
MAX_WEIGHTS = 2**25
#: The largest finite value of each dtype the margin certificate covers (realize/certificate.py): the logits of a
#: compiled layer, and every partial sum of them, must stay below it (with LOGIT_HEADROOM for rounding).
CERTIFIED_DTYPE_MAX = {
    "float32": float(np.finfo(np.float32).max),
    "bfloat16": 3.3895313892515355e38,
    "float16": 65504.0,
}
LOGIT_HEADROOM = 1 + 2**-7


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
    check_logit_range(weight, offset, margin, embedding)
    return {"embedding": emb, "weight": weight, "bias": np.full(p, offset, dtype=np.float64)}


def check_logit_range(weight: np.ndarray, offset: float, margin: float, embedding: str) -> None:
    """SpecError when the logits could overflow a dtype the certificate covers (CERTIFIED_DTYPE_MAX).

    Every partial sum of the logit W_i·e + b is at most reach = ‖W_i‖₂·‖e‖₂ + |b| in magnitude (Cauchy–Schwarz;
    ‖e‖₂ = 1 for one-hot and orthogonal embeddings), and for one-hot keys exactly max|W_i| + |b| = margin + |offset|.
    """
    if embedding == "onehot":
        reach = margin + abs(offset)
    else:
        reach = float(np.sqrt((weight * weight).sum(axis=1)).max(initial=0.0)) + abs(offset)
    for name, top in CERTIFIED_DTYPE_MAX.items():
        if reach * LOGIT_HEADROOM > top:
            covered = ", ".join(CERTIFIED_DTYPE_MAX)
            raise SpecError(
                f"margin {margin:g} is too large: the logits reach {reach:.4g}, above {top:g}, the largest finite "
                f"{name} (the margin certificate covers {covered}); at offset {offset:g} the margin may be at most "
                f"{(top / LOGIT_HEADROOM - abs(offset)) / (reach - abs(offset)) * margin:.5g}"
            )


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
