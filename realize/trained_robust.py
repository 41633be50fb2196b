"""Robustness of trained models (``fsa2rnn verify RUN --eta E``): the theorems realize/conditions.py applies to
compiled models, applied to a trained SequenceModel.

- Affine layers (DeltaNet/DeltaProduct, Mamba-style, DLR): Theorem 4.1's branch from the trained A(x) (realize/
  compare.py ``trained_spectra``' transitions: the short convolutions fed x x x x). ρ(A_w), the spectral radius of
  A_{x_n} ⋯ A_{x_1}, is computed for every word w up to length K (all layers and heads: the recurrence is block
  diagonal). If some ρ(A_w) ≥ 1 − tol, the error along that eigenvector is never damped and (R2) fails at every
  η > 0: ``not_robust`` (Theorem 4.1 (i)), the witness a shortest such w. A DeltaNet head of dimension ≥ 2 always
  has ρ = 1 (A(x) = I − β k kᵀ fixes the complement of k). Otherwise every word up to K contracts: such a model
  realizes at most a definite automaton robustly (Theorem 4.1 (ii)); a non-definite target is ``refused``, a
  definite one is ``not_robust`` in the sense of "not certified" (no radius is computed for trained weights).
- NFSM (one layer): the perturbation is added to the attractor vector a_{h_t} (one-hot per head) before the next
  step's rounding, which restores it iff η < η* = 1/√2 (half the distance of two one-hot attractors); then the model
  is ``robust`` iff its tables realize the automaton (fsa2rnn.nn.train.trained_exact ``nfsm_tables_exact``), else
  ``not_robust`` with the tables' failing word; at η ≥ η* a perturbation reaches the midpoint of two attractors:
  ``not_robust``.
- LSTM and Transformer: no input-determined transition: ``refused``.

With ``lmax``, the failing length of random η-trajectories (e_t uniform in the η-ball of the recurrent state —
every layer's S, h, modal x or one-hot indices, not the convolutions' input caches) on the task's evaluation words
(realize/robust.py's perturbation, nn/lmax.py's search).
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from ..fsa.errors import SpecError
from ..fsa.progress import bar, counting
from ..nn.layers import DLR, LSTM, NFSM, DeltaProduct, SelectiveDiagonal
from ..nn.lmax import failing_length
from ..nn.metrics import accuracy_at_lengths
from ..nn.table_predict import NFSMTablePredictor, table_readable
from ..nn.train.trained_exact import nfsm_tables_exact
from .compare import layer_inputs, symbol_transition
from .conditions import _non_definite
from .extract import as_dtype
from .robust import check_eta, perturbation
from .trajectory import random_ball

#: words up to this length are searched for ρ(A_w) = 1, and at most this many of them
MAX_WORD_LENGTH, MAX_WORDS = 4, 4096
#: ρ ≥ 1 − RHO_TOL counts as 1
RHO_TOL = 1e-6
ETA_STAR_ONE_HOT = 1 / math.sqrt(2)


def _verdict(eta: float, verdict: str, theorem: str, evidence: str, witness: list[str] | None, **extra: Any) -> dict:
    return {"eta": eta, "verdict": verdict, "theorem": theorem, "evidence": evidence, "witness": witness, **extra}


@torch.no_grad()
def symbol_matrices(model: Any, symbols: tuple[str, ...]) -> list[np.ndarray] | None:
    """Per symbol, the block-diagonal linear part of the recurrence as a list of square blocks (k, B, n, n) per
    layer — DeltaProduct heads, diagonal entries as 1×1 blocks — or None when a layer is not affine."""
    k = len(symbols)
    inputs = layer_inputs(model, k)
    blocks = []
    for block, x in zip(model.blocks, inputs):
        a = symbol_transition(block.layer, x)  # the layer's declared transition_kind (nn/capabilities.py)
        if a is None:
            return None
        kind, t = a
        if kind == "matrix":
            blocks.append(t.reshape(k, -1, t.shape[-2], t.shape[-1]).cpu().numpy())  # (k, H, n, n)
        else:
            blocks.append(t.reshape(k, -1, 1, 1).cpu().numpy())  # diagonal entries as 1×1 blocks
    return blocks


def theorem41_trained(blocks: list[np.ndarray], k: int) -> tuple[float, list[int]]:
    """(max ρ(A_w), a shortest word attaining ρ ≥ 1 − tol, or the word of the largest ρ) over words up to
    :data:`MAX_WORD_LENGTH` (at most :data:`MAX_WORDS`), all layers and blocks."""
    best, best_word = -1.0, [0]
    count = 0
    for n in range(1, MAX_WORD_LENGTH + 1):
        for word in itertools.product(range(k), repeat=n):
            count += 1
            if count > MAX_WORDS:
                return best, best_word
            rho = 0.0
            for b in blocks:
                prod = b[word[0]]
                for x in word[1:]:
                    prod = b[x] @ prod
                rho = max(rho, float(np.abs(np.linalg.eigvals(prod)).max()))
            if rho > best + 1e-12:
                best, best_word = rho, list(word)
            if rho >= 1 - RHO_TOL:
                return rho, list(word)
    return best, best_word


def trained_conditions(model: Any, task: Any, eta: float) -> dict[str, Any]:
    """The verdict (module docstring) of a trained SequenceModel on its task's automaton at η."""
    eta = check_eta(eta)
    a = task.automaton
    if a is None:
        raise SpecError(f"task {task.name!r} has no automaton to be robust for")
    symbols = tuple(a.symbols)
    cfg = model.config
    if cfg.layer == "nfsm" and cfg.n_layers == 1:
        ex = nfsm_tables_exact(model, task)
        if not ex.get("exact"):
            why = ex.get("reason") or f"the tables err on {ex.get('witness')}"
            return _verdict(eta, "not_robust", "(R3)", f"the trained tables do not realize the automaton: {why}",
                            ex.get("witness"), radius=ETA_STAR_ONE_HOT)  # fmt: skip
        if eta < ETA_STAR_ONE_HOT:
            return _verdict(eta, "robust", "Theorems 3.1–3.2 (NFSM restoring rounding)",
                            f"η < η* = 1/√2 ≈ {ETA_STAR_ONE_HOT:.4f}: rounding restores every attractor, and the "
                            f"tables realize the automaton ({ex['triples']} reachable triples checked)", None,
                            radius=ETA_STAR_ONE_HOT)  # fmt: skip
        return _verdict(eta, "not_robust", "Theorem 3.2 (R3)",
                        f"η ≥ η* = 1/√2 ≈ {ETA_STAR_ONE_HOT:.4f}: a perturbation reaches the midpoint of two "
                        "attractors of a head, where rounding may pick the wrong one", None,
                        radius=ETA_STAR_ONE_HOT)  # fmt: skip
    blocks = symbol_matrices(model, symbols)
    if blocks is None:
        return _verdict(eta, "refused", "Theorem 4.1",
                        f"a {cfg.layer} layer has no input-determined linear transition A(x): the theorem does not "
                        "apply", None)  # fmt: skip
    rho, word = theorem41_trained(blocks, len(symbols))
    names = [symbols[x] for x in word]
    if rho >= 1 - RHO_TOL:
        return _verdict(eta, "not_robust", "Theorem 4.1 (i)",
                        f"ρ(A_w) = {rho:.6f} on w = {'·'.join(names)} (the trained A(x), every layer and head): the "
                        "error along its eigenvector is never damped, so (R2) fails at every η > 0", names,
                        spectral_radius=rho)  # fmt: skip

    definite, degree, witness = _non_definite(a)
    if not definite:
        return _verdict(eta, "refused", "Theorem 4.1 (ii)",
                        f"ρ(A_w) ≤ {rho:.6f} < 1 on every word up to length {MAX_WORD_LENGTH}: the model forgets, and "
                        "the target is not definite, so no such recurrence realizes it robustly",
                        None if witness is None else [symbols[x] for x in witness], spectral_radius=rho)  # fmt: skip
    return _verdict(eta, "not_robust", "Theorem 4.1 (ii)",
                    f"ρ(A_w) ≤ {rho:.6f} < 1 on every word up to length {MAX_WORD_LENGTH} and the target is definite "
                    f"(degree {degree}): robustness is possible but not certified for trained weights", None,
                    spectral_radius=rho)  # fmt: skip


def _flat_state(model: Any, state: list[dict[str, Any]]) -> tuple[torch.Tensor, list[tuple[int, str]]]:
    """The recurrent state as one float64 vector per word (N, D) — S, h, modal x as (re, im), one-hot NFSM
    indices, the LSTM's h and c — and the (block, key) parts it is made of, in order."""
    keys = {DeltaProduct: ("S",), SelectiveDiagonal: ("h",), DLR: ("x",), NFSM: ("indices",), LSTM: ("h", "c")}
    parts, flat = [], []
    for i, block in enumerate(model.blocks):
        layer = block.layer
        for key in next((names for cls, names in keys.items() if isinstance(layer, cls)), ()):
            v = state[i][key]
            if isinstance(layer, NFSM):
                v = F.one_hot(v, layer.d_max)
            elif isinstance(layer, LSTM):
                v = v[0]  # torch.nn.LSTM's (1, B, hidden)
            elif v.is_complex():
                v = torch.view_as_real(v)
            parts.append((i, key))
            flat.append(v.reshape(v.shape[0], -1).double())
    return torch.cat(flat, dim=1), parts


def _set_flat(model: Any, state: list[dict[str, Any]], parts: list[tuple[int, str]], h: torch.Tensor) -> None:
    """Write a perturbed flat state back (NFSM heads rounded to their nearest attractor)."""
    pos = 0
    for i, key in parts:
        layer, v = model.blocks[i].layer, state[i][key]
        if isinstance(layer, NFSM):
            shape = (*v.shape, layer.d_max)
        elif isinstance(layer, LSTM):
            shape = tuple(v.shape[1:])
        else:
            shape = tuple(torch.view_as_real(v).shape) if v.is_complex() else tuple(v.shape)
        n = int(np.prod(shape[1:]))
        chunk = h[:, pos : pos + n].reshape(shape)
        pos += n
        if isinstance(layer, NFSM):
            state[i][key] = chunk.masked_fill(~layer.valid.to(chunk.device), float("-inf")).argmax(-1)
        elif isinstance(layer, LSTM):
            state[i][key] = chunk.to(v.dtype)[None]
        elif v.is_complex():
            state[i][key] = torch.view_as_complex(chunk.contiguous()).to(v.dtype)
        else:
            state[i][key] = chunk.to(v.dtype)


def perturbed_predictor(model: Any, eta: float, seed: int = 0, *, read: str = "auto") -> Any:
    """``predict(inputs, state)`` of nn/lmax.py along random η-trajectories of a trained model: after every
    symbol, e uniform in the η-ball of the recurrent state (:func:`_flat_state`) is added (NFSM: to the one-hot
    attractors, then every head is rounded to its nearest attractor). ``read="auto"`` steps a one-layer NFSM
    through its tables (:func:`_nfsm_table_predictor`, the same draws and arithmetic), ``"logits"`` runs the
    model's forward at every step (the reference)."""
    if read not in ("auto", "logits"):
        raise SpecError(f"unknown read {read!r} (choose from auto, logits)")
    if read == "auto" and table_readable(model):
        return _nfsm_table_predictor(model, eta, seed)
    gen = torch.Generator().manual_seed(int(seed))
    dev = model.device

    @torch.no_grad()
    def predict(inputs: np.ndarray, state: Any) -> tuple[np.ndarray, Any]:
        ids = torch.as_tensor(np.asarray(inputs), device=dev).long()
        preds = []
        model.eval()
        for t in range(ids.shape[1]):
            logits, state = model(ids[:, t : t + 1], state, True)
            preds.append(logits[:, -1].argmax(-1).cpu())
            if eta > 0:
                h, parts = _flat_state(model, state)
                _set_flat(model, state, parts, h + perturbation(None, h, eta, "random", gen))  # type: ignore[arg-type]
        return torch.stack(preds, dim=1).numpy(), state

    return predict


def _nfsm_table_predictor(model: Any, eta: float, seed: int) -> Any:
    """:func:`perturbed_predictor` of a one-layer NFSM by its tables (nn/table_predict.py): h_t = σ_{x_t}(h'_{t−1}),
    the prediction of (x_t, h'_{t−1}), then h'_t = the nearest attractor (argmax over each head's valid indices) of
    one_hot(h_t) + e_t, e_t drawn as the reference draws it."""
    tables = NFSMTablePredictor(model)
    gen = torch.Generator().manual_seed(int(seed))
    heads, d = tables.heads, tables.d_max
    invalid = ~model.blocks[0].layer.valid.cpu().numpy()
    lanes = np.arange(heads)[None, :]

    def predict(inputs: np.ndarray, state: Any) -> tuple[np.ndarray, Any]:
        ids = np.asarray(inputs, dtype=np.int64)
        tables.check_ids(ids)
        n, length = ids.shape
        prev = np.broadcast_to(tables.start, (n, heads)) if state is None else state[0]["indices"].cpu().numpy()
        before = np.empty((n, length, heads), dtype=np.int64)
        for t in range(length):
            before[:, t] = prev
            idx = tables.tables[ids[:, t, None], lanes, prev]
            if eta > 0:
                v = np.eye(d)[idx] + random_ball(n, heads * d, eta, gen).numpy().reshape(n, heads, d)
                v[:, invalid] = -np.inf
                idx = v.argmax(-1)
            prev = idx
        last = torch.from_numpy(np.ascontiguousarray(prev)).to(tables.device)
        return tables.outputs(ids, before), [{"indices": last}]

    return predict


def trained_robust_report(
    model: Any,
    task: Any,
    *,
    eta: float,
    perturbation_kind: str = "random",
    lmax: bool = False,
    start: int | None = None,
    cap: int = 1024,
    n_words: int = 32,
    seed: int = 0,
) -> dict[str, Any]:
    """What ``fsa2rnn verify RUN --eta E`` reports: ``{eta, verdict, theorem, evidence, witness, l_max,
    l_max_capped, perturbation, …}``. Trained models have no code points, so the perturbation is random."""
    if perturbation_kind != "random":
        raise SpecError("a trained model has no code points to aim an adversarial perturbation at: use random")
    out = trained_conditions(model, task, eta)
    out.update(perturbation=perturbation_kind, l_max=None, l_max_capped=None)
    if lmax:
        start = min(start or 16, cap)
        with bar(n_words * cap, "L_max search", unit="sym", unit_scale=True) as b:
            predict = counting(perturbed_predictor(model, out["eta"], seed), b)
            found, capped = failing_length(predict, task.word_source(), start=start, cap=cap, n_words=n_words,
                                           seed=seed)  # fmt: skip
        out.update(l_max=found, l_max_capped=bool(capped), cap=cap)
    return out


def verify_run(
    run: str,
    loaded: tuple[Any, Any, Any],
    *,
    spec: str | None = None,
    eta: float | None = None,
    perturbation_kind: str = "random",
    dtype: str = "float64",
    length: int = 1000,
    n_words: int = 16,
    seed: int = 0,
    lmax: bool = False,
    cap: int = 1024,
) -> dict[str, Any]:
    """``fsa2rnn verify RUN``: the trained model (at ``dtype``) against its task's automaton on ``n_words`` random
    words of ``length`` (the task's evaluation distribution), and with ``eta`` the robustness verdict
    (:func:`trained_robust_report`). ``ok``: right on every word (and robust at η). ``loaded``: (model, task,
    TrainConfig) of the run, as ``fsa2rnn.nn.train.load_run`` returns them (the caller loads the run: realize does
    not import the trainer)."""
    if spec is not None:
        raise SpecError("verify RUN checks the run's own task; --spec applies to model files")
    model, task, cfg = loaded
    if task.automaton is None or task.kind != "classification":
        raise SpecError(f"task {task.name!r} has no automaton to verify against")
    model = model.to(as_dtype(dtype))
    acc = accuracy_at_lengths(model, task, [length], samples=n_words, seed=seed)
    seq = acc["sequence_accuracy"][0] if acc["sequence_accuracy"] else None
    report: dict[str, Any] = {"run": str(run), "task": task.name, "model": cfg.model, "dtype": dtype,
                              "length": length, "words": n_words, "token_accuracy": acc["token_accuracy"][0],
                              "sequence_accuracy": seq, "ok": seq == 1.0}  # fmt: skip
    if eta is not None:
        start = cfg.train_lengths(task)[1]
        report["robust"] = trained_robust_report(model, task, eta=eta, perturbation_kind=perturbation_kind,
                                                 lmax=lmax, start=start, cap=cap, seed=seed)  # fmt: skip
        report["ok"] = bool(report["ok"]) and report["robust"]["verdict"] == "robust"
    return report
