"""The margin certificate of an NFSM model at a dtype (our reading of Prop. G.3, THEORY.md).

Setting. Layer ℓ computes the logits of key x as L = W·e_x + b (embedding row e_x, linear map W, bias b; the model's
weights as stored — float64 for compiled models — are the exact reals). At dtype D (unit roundoff u = 2^{-p},
η = half the smallest subnormal) the model stores Ŵ = fl(W), ê = fl(e_x), b̂ = fl(b) and computes L̂ = fl(Ŵ·ê + b̂).

Bound. With k = the number of nonzero entries of ê (zero terms are exact and add no rounding) and
γ_m = m·u/(1 − m·u), the standard dot-product analysis (Higham, Thm. 3.5, with the bias as one more term and the
absolute error η of an underflowing product) and |fl(w) − w| ≤ u|w| + η for storage give, entrywise,

    |L̂ − L| ≤ γ_{k+1}·(|Ŵ|·|ê| + |b̂|) + 2(k+1)·η                    (computing at D)
            +  (u|W| + η)·|ê| + |W|·(u|e_x| + η·1[e_x ≠ 0]) + u|b| + η   (storing at D)

(storage terms vanish at float64, where the tensors are the exact values). Call the right side β (per logit). Any
evaluation order and any accumulation at least as precise as D (fused multiply-add, wider accumulators) obeys it.

Certificate. In every table row (key, head, k) let m = L̂[j*] − L̂[j'] be the margin of the computed logits
(best minus second best; exact in float64). If m > 2·max_j β_j then L[j*] − L[j] ≥ m − β_{j*} − β_j > 0 for every
j ≠ j*: the exact logits have the same argmax, so the table at D is the table of the exact model, whatever the
arithmetic's order. When, in addition, the tables realize the automaton (extraction, realize/extract.py), the
model tracks the state at every length at dtype D: the scan composes the tables exactly (Prop. G.1) — "length-
independent at dtype D". When the margin is too small, the certificate searches for a word on which the model at D
really errs (a shortest one, exhaustively over reachable (configuration, state) pairs); there may be none (rounding
happened to keep the argmax), and then the statement says so.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from fsa2rnn.fsa.automaton import Automaton

from .extract import as_dtype, as_nfsm_module, dtype_name, extract_and_compare, failing_word, target_automaton


def unit_roundoff(dtype: str | torch.dtype) -> tuple[float, float]:
    """(u, η) of a torch float dtype: u = eps/2, η = half the smallest positive subnormal."""
    fi = torch.finfo(as_dtype(dtype))
    return fi.eps / 2, fi.smallest_normal * fi.eps / 2


def _gamma(m: np.ndarray, u: float) -> np.ndarray:
    mu = m * u
    return np.where(mu < 1, mu / np.maximum(1 - mu, 1e-300), np.inf)


def logit_error_bound(
    embedding: np.ndarray, weight: np.ndarray, bias: np.ndarray, dtype: str | torch.dtype
) -> np.ndarray:
    """β (K, P): a rigorous bound on |L̂ − L| for every key and logit at ``dtype`` (module docstring)."""
    u, eta = unit_roundoff(dtype)
    tdt = as_dtype(dtype)
    e, w, b = (np.asarray(a, dtype=np.float64) for a in (embedding, weight, bias))
    e_hat = torch.from_numpy(e).to(tdt).double().numpy()
    w_hat = torch.from_numpy(w).to(tdt).double().numpy()
    b_hat = torch.from_numpy(b).to(tdt).double().numpy()
    with np.errstate(invalid="ignore", over="ignore"):  # weights overflowing at D give an infinite bound
        k = (e_hat != 0).sum(axis=1).astype(np.float64)  # (K,)
        compute = _gamma(k + 1, u)[:, None] * (np.abs(e_hat) @ np.abs(w_hat).T + np.abs(b_hat)[None, :])
        compute += (2 * (k + 1) * eta)[:, None]
        if tdt == torch.float64:
            store = 0.0
        else:
            nz = (e != 0) | (e_hat != 0)
            store = (
                (u * np.abs(e_hat)) @ np.abs(w).T
                + eta * np.abs(e_hat).sum(axis=1)[:, None]
                + (u * np.abs(e)) @ np.abs(w).T
                + eta * (nz.astype(np.float64) @ np.abs(w).T)
                + (u * np.abs(b) + eta)[None, :]
            )
        total = (compute + store) * (1 + 1e-9)
    # evaluating the bound in float64 rounds too: the relative 1e-9 above is far above (K + 4)·2^-53
    return np.where(np.isnan(total), np.inf, total)


@torch.no_grad()
def margin_certificate(
    model: Any, dtype: str | torch.dtype = "float32", automaton: Automaton | None = None
) -> dict[str, Any]:
    """Certify (or refute) length independence of an NFSM model at ``dtype``.

    Returns {"certified", "margin" (smallest row margin at D), "bound" (largest β), "dtype", "statement",
    "failing_word" (symbol names, or None), "rows_below" (rows whose margin ≤ 2·max β), "tables_match"}.
    """
    module = as_nfsm_module(model)
    automaton = automaton if automaton is not None else target_automaton(module)
    tdt = as_dtype(dtype)
    name = dtype_name(tdt)
    computed = [layer.key_logits(dtype=tdt).double().cpu().numpy() for layer in module.layers]
    margin, bound, below, finite = math.inf, 0.0, 0, True
    for layer, logits in zip(module.layers, computed):
        beta = logit_error_bound(
            layer.embedding.weight.detach().double().cpu().numpy(),
            layer.logits.weight.detach().double().cpu().numpy(),
            layer.logits.bias.detach().double().cpu().numpy(),
            tdt,
        )
        finite &= bool(np.all(np.isfinite(logits)))
        start = 0
        for d in layer.heads:
            blk = logits[:, start : start + d * d].reshape(-1, d, d)
            bb = beta[:, start : start + d * d].reshape(-1, d, d)
            start += d * d
            bound = max(bound, float(bb.max()))
            if d < 2:
                continue
            top2 = np.sort(blk, axis=-1)[..., -2:]
            m = top2[..., 1] - top2[..., 0]
            margin = min(margin, float(m.min()))
            below += int(np.sum(~(m > 2 * bb.max(axis=-1))))
    extraction = extract_and_compare(module, automaton, dtype=tdt)
    word = None if extraction["match"] else failing_word(module, automaton, tdt)
    word_names = None if word is None else [automaton.symbols[x] for x in word]
    certified = finite and below == 0 and extraction["match"]
    shown_margin = margin if math.isfinite(margin) else None
    if certified and not math.isfinite(margin):
        statement = (
            f"length-independent at dtype {name}: every head has a single index, and the tables realize the automaton"
        )
    elif certified:
        statement = (
            f"length-independent at dtype {name}: every table row's logit margin (smallest {margin:.4g}) exceeds "
            f"twice the rounding bound (largest {bound:.4g}), and the tables realize the automaton"
        )
    elif word is not None:
        statement = (
            f"not length-independent at dtype {name}: {below} table rows have a margin ≤ twice the rounding bound "
            f"(smallest margin {margin:.4g}, largest bound {bound:.4g}), and the model errs on a word of length "
            f"{len(word)}"
        )
        if below == 0:
            statement = (
                f"not length-independent at dtype {name}: the margins exceed the rounding bound but the tables do "
                f"not realize the automaton; the model errs on a word of length {len(word)}"
            )
    else:
        statement = (
            f"not certified at dtype {name}: {below} table rows have a margin ≤ twice the rounding bound (smallest "
            f"margin {margin:.4g}, largest bound {bound:.4g}); the tables computed at {name} still realize the "
            f"automaton, but another order of evaluation may not"
        )
        if not finite:
            statement = f"not certified at dtype {name}: some logits overflow"
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
