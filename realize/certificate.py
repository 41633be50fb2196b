"""The margin certificate of an NFSM model at a dtype (our reading of Prop. G.3).

Setting. Layer ℓ computes the logits of key x as L = W·e_x + b (embedding row e_x, linear map W, bias b; the model's
weights as stored — float64 for compiled models — are the exact reals). At dtype D (unit roundoff u = 2^{-p},
η = half the smallest subnormal, N = the smallest normal) the model stores Ŵ = fl(W), ê = fl(e_x), b̂ = fl(b) and
computes L̂ = fl(Ŵ·ê + b̂).

Arithmetic assumed (what torch's kernels may do). Any evaluation order and blocking of the dot product, fused
multiply-adds, accumulators at least as precise as D, and flush-to-zero: a kernel may read a subnormal input as 0
(CPU bf16 ``F.linear`` does, on larger shapes) and may return 0 for any product, partial sum or result below N.
Each operation then obeys fl(a∘b) = (a∘b)(1 + δ) + ε with |δ| ≤ u, |ε| ≤ N, and ε ≠ 0 only below N.

Bound. With k = the number of nonzero entries of ê, γ_m = m·u/(1 − m·u), sub(y) = 1 when fl(y) is a nonzero
subnormal (the kernel may read it as 0), and |fl(y) − y| ≤ u|y| + η·1[y ≠ 0] for storage, the standard dot-product
analysis (Higham, Thm. 3.5, with the bias as one more term; γ_{k+2} also covers products rounded to D before a
wider accumulation) gives, entrywise,

    |L̂ − L| ≤ γ_{k+2}·(|Ŵ|·|ê| + |b̂|) + 4(k+1)·N·(1 + γ_{k+2})                        (computing at D)
            +  err(W)·|ê| + |W|·err(e_x) + err(b),   err(y) = u|y| + η·1[y ≠ 0] + sub(y)·|y|   (storing at D)

(at float64, where the tensors are the exact values, err(y) = sub(y)·|y|). The term in N counts the operations
that can lose a nonzero value below N: the k products, the ≤ k additions of two nonzero values, one flush on each
of the ≤ 2k + 1 runs of additions of zeros (a flushed value is 0 afterwards), and the final conversion to D; zero
terms are otherwise exact. Call the right side β (per logit); it is infinite where (1 + γ_{k+2})(|Ŵ|·|ê| + |b̂|) + β
could exceed D's largest finite number (a partial sum may overflow in some order). No margin below 8N is ever
certified: logits in the subnormal range may all read as 0.

Certificate. The margin is that of the exact logits. They are computed in float64 (L₆₄, error ≤ β₆₄, the same
bound at float64). In a table row (key, head, k) let j* = argmax L₆₄ and m = L₆₄[j*] − (second best): if
m > 2·max_j (β_D + β₆₄)[j] over the row, then for every j ≠ j*, L[j*] − L[j] > β_D[j*] + β_D[j], so every
evaluation at D allowed above has L̂[j*] > L̂[j]: every kernel computes the argmax of the exact model, whatever its
order. (A margin m̂ computed at D in one order would need m̂ > 4β_D for that: m̂ > 2β_D only shows that this one
evaluation's argmax is the exact one.) When, in addition,
the tables realize the automaton (extraction, realize/extract.py), the model tracks the state at every length at
dtype D: the scan composes the tables exactly (Prop. G.1) — "length-independent at dtype D". When the margin is
too small, the certificate searches for a word on which the model at D (as torch computes it here) really errs (a
shortest one, exhaustively over reachable (configuration, state) pairs); there may be none (rounding happened to
keep the argmax), and then the statement says so.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from ..fsa.automaton import Automaton
from .extract import as_dtype, as_nfsm_module, dtype_name, extract_and_compare, failing_word, target_automaton


def unit_roundoff(dtype: str | torch.dtype) -> tuple[float, float]:
    """(u, η) of a torch float dtype: u = eps/2, η = half the smallest positive subnormal."""
    fi = torch.finfo(as_dtype(dtype))
    return fi.eps / 2, fi.smallest_normal * fi.eps / 2


def smallest_normal(dtype: str | torch.dtype) -> float:
    """N: below it a flush-to-zero kernel may read or return 0."""
    return float(torch.finfo(as_dtype(dtype)).smallest_normal)


def _gamma(m: np.ndarray, u: float) -> np.ndarray:
    mu = m * u
    return np.where(mu < 1, mu / np.maximum(1 - mu, 1e-300), np.inf)


def _stored(a: np.ndarray, tdt: torch.dtype) -> np.ndarray:
    """fl(a) at ``tdt`` (torch's correctly rounded cast), as float64."""
    return torch.from_numpy(a).to(tdt).double().numpy()


def logit_error_bound(
    embedding: np.ndarray, weight: np.ndarray, bias: np.ndarray, dtype: str | torch.dtype
) -> np.ndarray:
    """β (K, P): a rigorous bound on |L̂ − L| for every key and logit at ``dtype``, for every evaluation order and
    for kernels that flush subnormals to zero (module docstring)."""
    u, eta = unit_roundoff(dtype)
    tiny = smallest_normal(dtype)
    big = float(torch.finfo(as_dtype(dtype)).max)
    tdt = as_dtype(dtype)
    e, w, b = (np.asarray(a, dtype=np.float64) for a in (embedding, weight, bias))
    e_hat, w_hat, b_hat = (_stored(a, tdt) for a in (e, w, b))
    stored = tdt != torch.float64

    def err(y: np.ndarray, y_hat: np.ndarray) -> np.ndarray:
        sub = (y_hat != 0) & (np.abs(y_hat) < tiny)
        out = np.where(sub, np.abs(y), 0.0)
        return out + (u * np.abs(y) + eta * (y != 0)) if stored else out

    with np.errstate(invalid="ignore", over="ignore"):  # weights overflowing at D give an infinite bound
        k = (e_hat != 0).sum(axis=1).astype(np.float64)  # (K,)
        g = _gamma(k + 2, u)[:, None]
        mag = np.abs(e_hat) @ np.abs(w_hat).T + np.abs(b_hat)[None, :]
        compute = g * mag + (4 * (k + 1) * tiny)[:, None] * (1 + g)
        store = err(e, e_hat) @ np.abs(w).T + np.abs(e_hat) @ err(w, w_hat).T + err(b, b_hat)[None, :]
        # evaluating the bound in float64 rounds too: the relative 1e-9 is far above (K + 4)·2^-53, and 1e-300
        # covers float64 underflow in the evaluation
        total = (compute + store) * (1 + 1e-9) + 1e-300
        total = np.where((1 + g) * mag + total > big, np.inf, total)
    return np.where(np.isnan(total), np.inf, total)


def row_margins(
    embedding: np.ndarray, weight: np.ndarray, bias: np.ndarray, heads: list[int], dtype: str | torch.dtype
) -> tuple[np.ndarray, np.ndarray]:
    """Per table row of every head with d ≥ 2: the float64 margin m (best minus second best exact-model logit) and
    the row's bound max_j (β_D + β₆₄)[j]; a row is certified when m > 2·bound (module docstring)."""
    e, w, b = (np.asarray(a, dtype=np.float64) for a in (embedding, weight, bias))
    logits = e @ w.T + b[None, :]
    beta = logit_error_bound(e, w, b, dtype) + logit_error_bound(e, w, b, torch.float64)
    margins, bounds, start = [], [], 0
    for d in heads:
        blk = logits[:, start : start + d * d].reshape(-1, d, d)
        bb = beta[:, start : start + d * d].reshape(-1, d, d)
        start += d * d
        if d < 2:
            continue
        top2 = np.sort(blk, axis=-1)[..., -2:]
        margins.append((top2[..., 1] - top2[..., 0]).ravel())
        bounds.append(bb.max(axis=-1).ravel())
    if not margins:
        return np.zeros(0), np.zeros(0)
    return np.concatenate(margins), np.concatenate(bounds)


@torch.no_grad()
def margin_certificate(
    model: Any, dtype: str | torch.dtype = "float32", automaton: Automaton | None = None
) -> dict[str, Any]:
    """Certify (or refute) length independence of an NFSM model at ``dtype``, against ``automaton`` (default: the
    target stored in the model).

    Returns {"certified", "margin" (smallest exact-model row margin, float64), "bound" (largest row bound
    β_D + β₆₄), "dtype", "statement", "failing_word" (symbol names, or None), "rows_below" (rows whose margin is
    ≤ twice their bound), "tables_match"}.
    """
    module = as_nfsm_module(model)
    automaton = automaton if automaton is not None else target_automaton(module)
    tdt = as_dtype(dtype)
    name = dtype_name(tdt)
    margin, bound, below, overflow = math.inf, 0.0, 0, False
    for layer in module.layers:
        m, bb = row_margins(
            layer.embedding.weight.detach().double().cpu().numpy(),
            layer.logits.weight.detach().double().cpu().numpy(),
            layer.logits.bias.detach().double().cpu().numpy(),
            layer.heads,
            tdt,
        )
        if len(m):
            margin = min(margin, float(m.min()))
            bound = max(bound, float(bb.max()))
            below += int(np.sum(~(m > 2 * bb)))
            overflow |= bool(np.any(np.isinf(bb)))
    extraction = extract_and_compare(module, automaton, dtype=tdt)
    word = None if extraction["match"] else failing_word(module, automaton, tdt)
    word_names = None if word is None else [automaton.symbols[x] for x in word]
    certified = below == 0 and extraction["match"]
    shown_margin = margin if math.isfinite(margin) else None
    counts = (
        f"{below} table rows have an exact logit margin ≤ twice their rounding bound (smallest margin "
        f"{margin:.4g}, largest bound {bound:.4g})"
    )
    if certified and not math.isfinite(margin):
        statement = (
            f"length-independent at dtype {name}: every head has a single index, and the tables realize the automaton"
        )
    elif certified:
        statement = (
            f"length-independent at dtype {name}: every table row's exact logit margin (smallest {margin:.4g}) "
            f"exceeds twice its rounding bound (largest {bound:.4g}), for every evaluation order and with "
            f"flush-to-zero, and the tables realize the automaton"
        )
    elif word is not None:
        statement = (
            f"not length-independent at dtype {name}: {counts}, and the model errs on a word of length {len(word)}"
        )
        if below == 0:
            statement = (
                f"not length-independent at dtype {name}: the margins exceed the rounding bound but the tables do "
                f"not realize the automaton; the model errs on a word of length {len(word)}"
            )
    elif overflow:
        statement = f"not certified at dtype {name}: some logits may overflow"
    else:
        statement = (
            f"not certified at dtype {name}: {counts}; the tables computed at {name} here still realize the "
            f"automaton, but another order of evaluation, or a kernel that flushes subnormals to zero, may not"
        )
    return {
        "certified": bool(certified),
        "margin": shown_margin,
        "bound": bound,
        "dtype": name,
        "statement": statement,
        "failing_word": word_names,
        "rows_below": below,
        "tables_match": bool(extraction["match"]),
    }


def certificate_summary(model: Any, dtypes: tuple[str, ...] = ("float32", "bfloat16", "float16")) -> dict[str, Any]:
    """One line per dtype for a compile summary: {dtype: {"certified": bool, "statement": str}}."""
    module = as_nfsm_module(model)
    out = {}
    for dt in dtypes:
        cert = margin_certificate(module, dt)
        out[dt] = {"certified": cert["certified"], "statement": cert["statement"]}
    return out


def verify_check(model: Any, automaton: Automaton, *, dtype: str = "float64") -> tuple[dict[str, Any], bool]:
    """What ``verify`` reports for an NFSM model at ``dtype``: the margin certificate and the extraction of its
    tables (realize/extract.py), both against ``automaton``; ok when both hold (the nfsm target's ``check``)."""
    cert = margin_certificate(model, dtype, automaton)
    ext = extract_and_compare(model, automaton, dtype=dtype)
    return {"certificate": cert, "extraction": ext}, bool(cert["certified"]) and bool(ext["match"])


def compile_report(model: Any) -> dict[str, Any]:
    """What ``fsa2rnn compile`` adds to an NFSM model's summary: its certificate at every lower dtype."""
    return {"certificate": certificate_summary(model)}
