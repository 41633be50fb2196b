"""η-trajectories of compiled models (length-independent-state-tracking §2, Definition 2.1):
h_t = Φ_{x_t}(h_{t−1}) + e_t with ‖e_t‖₂ ≤ η, and what they do to the state a model reads out.

Perturbations (``perturbation``):

- ``"none"``: e_t = 0 — only the working dtype's own rounding (float64/float32/bfloat16/float16; Householder models
  apply A(x) fused or factor by factor, ``mode``): the negative-eigenvalues paper's sense of finite precision;
- ``"random"``: e_t uniform in the ball of radius η (a Gaussian direction, radius η·U^{1/D}), seeded;
- ``"adversarial"``: e_t = η·n with h = Φ_{x_t}(h_{t−1}) and n the outward normal of the face of h's cell nearest
  to h (realize/steppers.py ``push``): for a nearest-code readout the bisector between h's code point c and the
  code point c' of another cell (another layer state, attractor index or window digit) whose bisector is nearest,
  n = (c' − c)/‖c' − c‖; for a readout that rounds coordinates (the Householder hash readout) the nearest face of
  the rounding cube. This greedy choice pushes h straight toward the nearest wrong cell; when Φ is an isometry on
  the code (permutations, rotations) the pushes add up along one direction, the error grows by η per step and the
  model fails after ⌈r/η⌉ steps (r the cell inradius) — the mechanism of Theorem 4.1 (i).

e_t is computed in float64 and h_t = fl(Φ_{x_t}(h_{t−1}) + e_t) rounded to the working dtype. For an NFSM the state
is the attractor vector a_{h_t}: the perturbation is added to it and the next step first rounds it to the nearest
attractor (the restoring organ), then applies the tables.

:func:`l_max` is the failing length of a model at (η, dtype, perturbation) through
:func:`fsa2rnn.nn.lmax.failing_length` — on random words (the automaton's word problem) or on the periodic word
p·w·w·w… of a witness of Theorem 4.1 (:func:`periodic_words`). :func:`drift` records the distance of h_t to the
nearest code point (NFSM: to the nearest attractor, before rounding) against t; :func:`plot_drift` draws it.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import torch

from ..fsa.automaton import Automaton
from ..fsa.errors import FsaError, SpecError
from ..fsa.plotting import pyplot, save_figure
from ..fsa.progress import counting
from ..nn.lmax import DEFAULT_CAP, Predict, SampleWords, automaton_words, failing_length
from . import trajectory
from .steppers import Stepper, stepper_for
from .trajectory import random_ball

PERTURBATIONS = ("none", "random", "adversarial")
#: how a trajectory is stepped: "auto" (numpy where the dtype allows, realize/trajectory.py), "numpy", "torch"
#: (the step-by-step reference of this module)
ENGINES = ("auto", "numpy", "torch")


def check_eta(eta: float) -> float:
    """η as a float; a negative or non-finite η is bad input."""
    eta = float(eta)
    if not math.isfinite(eta) or eta < 0:
        raise SpecError(f"η must be a finite number ≥ 0, got {eta}")
    return eta


def _check_perturbation(kind: str) -> None:
    if kind not in PERTURBATIONS:
        raise SpecError(f"unknown perturbation {kind!r} (choose from {', '.join(PERTURBATIONS)})")


@contextmanager
def one_thread() -> Iterator[None]:
    """Run step-by-step simulations on one intra-op thread: their tensors are small, and several threads only
    contend (restores the previous setting)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def perturbation(
    stepper: Stepper | trajectory.FastStepper,
    h: torch.Tensor | np.ndarray,
    eta: float,
    kind: str,
    generator: torch.Generator,
) -> torch.Tensor | np.ndarray | None:
    """e_t (N, D) in float64 for the unperturbed next state h = Φ_x(h_{t−1}); None when there is none. Both engines
    call it: a torch ``h`` with a Stepper gives a tensor, a numpy ``h`` with a realize/trajectory.FastStepper an
    array."""
    if eta == 0 or kind == "none":
        return None
    if kind == "random":
        return random_ball(*h.shape, eta, generator, numpy=not torch.is_tensor(h))
    return eta * stepper.push(h)


class TrajectoryState:
    """What an η-trajectory carries between chunks: the hidden vectors, their decoding and the noise generator
    (torch tensors, or numpy arrays when ``fast`` — a realize/trajectory.FastStepper — steps them)."""

    def __init__(self, stepper: Stepper, n: int, seed: int, fast: trajectory.FastStepper | None = None) -> None:
        self.fast = fast
        self.h = stepper.initial(n) if fast is None else fast.initial(n)
        self.decoded = stepper.decode(self.h) if fast is None else fast.decode(self.h)
        self.generator = torch.Generator().manual_seed(int(seed))


def _fast_for(stepper: Stepper, engine: str) -> trajectory.FastStepper | None:
    if engine not in ENGINES:
        raise SpecError(f"unknown engine {engine!r} (choose from {', '.join(ENGINES)})")
    fast = None if engine == "torch" else trajectory.fast_stepper(stepper)
    if engine == "numpy" and fast is None:
        raise SpecError(f"the numpy engine does not step {str(stepper.dtype).replace('torch.', '')}: use torch")
    return fast


@torch.no_grad()
def run(
    stepper: Stepper,
    ids: torch.Tensor | np.ndarray,
    *,
    eta: float = 0.0,
    perturbation_kind: str = "adversarial",
    state: TrajectoryState | None = None,
    seed: int = 0,
    record_drift: bool = False,
    engine: str = "auto",
) -> tuple[torch.Tensor, TrajectoryState, torch.Tensor | None]:
    """Read ``ids`` (N, T) along one η-trajectory per word: (states read out (N, T), the carried state, and with
    ``record_drift`` the distance of every h_t to the nearest code point (N, T), else None). ``engine``
    (:data:`ENGINES`): the fused numpy step of realize/trajectory.py, or this module's torch loop (the reference);
    a carried ``state`` keeps the engine it was made with."""
    eta = check_eta(eta)
    _check_perturbation(perturbation_kind)
    if state is None:
        fast = _fast_for(stepper, engine)
        state = TrajectoryState(stepper, len(ids), seed, fast)
    if state.fast is not None:
        words = (ids.numpy() if torch.is_tensor(ids) else np.asarray(ids)).astype(np.int64)
        got, state.h, state.decoded, far = trajectory.run(
            state.fast, words, eta=eta, perturbation_kind=perturbation_kind, h=state.h, decoded=state.decoded,
            generator=state.generator, perturbation=perturbation, record_drift=record_drift,
        )  # fmt: skip
        return torch.from_numpy(got), state, None if far is None else torch.from_numpy(far)
    ids = torch.as_tensor(np.asarray(ids) if not torch.is_tensor(ids) else ids).long()
    n, length = ids.shape
    out = torch.empty(n, length, dtype=torch.long)
    dist = torch.empty(n, length, dtype=torch.float64) if record_drift else None
    with one_thread():
        h, dec = state.h, state.decoded
        for t in range(length):
            h = stepper.step(h, ids[:, t], dec)
            e = perturbation(stepper, h, eta, perturbation_kind, state.generator)
            if e is not None:
                h = (h.double() + e).to(stepper.dtype)
            dec = stepper.decode(h)
            out[:, t] = stepper.read(h, dec)
            if dist is not None:
                dist[:, t] = stepper.nearest(h)
        state.h, state.decoded = h, dec
    return out, state, dist


def predictor(stepper: Stepper, *, eta: float, perturbation_kind: str, seed: int = 0, engine: str = "auto") -> Predict:
    """The ``predict`` protocol of nn/lmax.py for η-trajectories (the state carried across chunks)."""
    _fast_for(stepper, engine)

    def predict(inputs: np.ndarray, state: Any) -> tuple[np.ndarray, Any]:
        states, state, _ = run(stepper, inputs, eta=eta, perturbation_kind=perturbation_kind, state=state, seed=seed,
                               engine=engine)  # fmt: skip
        return states.numpy(), state

    return predict


def periodic_words(automaton: Automaton, prefix: Sequence[int], cycle: Sequence[int]) -> SampleWords:
    """Every word is p·w·w·w… (p = ``prefix``, w = ``cycle``, symbol ids), targets the automaton's states."""
    if not cycle:
        raise SpecError("periodic_words: the repeated word w must not be empty")
    p, w = np.asarray(prefix, dtype=np.int64), np.asarray(cycle, dtype=np.int64)

    def sample(rng: np.random.Generator, n_words: int, length: int, carry: Any) -> tuple[np.ndarray, np.ndarray, Any]:
        pos, start = (0, np.full(n_words, automaton.initial)) if carry is None else carry
        at = pos + np.arange(length)
        word = w[(at - len(p)) % len(w)]
        if len(p):
            word = np.where(at < len(p), p[np.minimum(at, len(p) - 1)], word)
        ids = np.broadcast_to(word, (n_words, length)).copy()
        states = automaton.run(ids, start=start)
        return ids, states, (pos + length, states[:, -1])

    return sample


def l_max(
    model: Any,
    *,
    eta: float,
    dtype: str = "float64",
    perturbation_kind: str = "adversarial",
    mode: str = "fused",
    automaton: Automaton | None = None,
    witness: tuple[Sequence[int], Sequence[int]] | None = None,
    start: int = 16,
    cap: int = DEFAULT_CAP,
    n_words: int = 64,
    seed: int = 0,
    stepper: Stepper | None = None,
    engine: str = "auto",
    progress: Any = None,
) -> dict[str, Any]:
    """L_max of a compiled model along η-trajectories: ``{l_max, l_max_capped, eta, dtype, perturbation, mode,
    words, n_words, cap}``.

    Words: the automaton's word problem (default: the target stored in the model), or with ``witness = (p, w)`` the
    periodic word p·w·w·… (one word suffices unless the perturbation is random). ``progress``: a bar
    (fsa2rnn.fsa.progress) advanced by the symbols read."""
    eta = check_eta(eta)
    _check_perturbation(perturbation_kind)
    if cap < start:
        raise SpecError(f"the cap {cap} is below the start length {start}")
    stepper = stepper_for(model, dtype, mode) if stepper is None else stepper
    if automaton is None:
        automaton = stepper.net.compiled.target_automaton()
    automaton = automaton.replace(initial=stepper.net.compiled.initial)
    words = automaton_words(automaton) if witness is None else periodic_words(automaton, *witness)
    predict = predictor(stepper, eta=eta, perturbation_kind=perturbation_kind, seed=seed, engine=engine)
    if progress is not None:
        predict = counting(predict, progress)
    try:
        found, capped = failing_length(predict, words, start=start, cap=cap, n_words=n_words, seed=seed)
    except ValueError as exc:
        raise FsaError(str(exc)) from None
    return {
        "l_max": found,
        "l_max_capped": bool(capped),
        "eta": eta,
        "dtype": str(stepper.dtype).replace("torch.", ""),
        "perturbation": perturbation_kind,
        "mode": getattr(stepper, "mode", None),
        "words": "random" if witness is None else "witness",
        "n_words": n_words,
        "cap": cap,
    }


def drift(
    stepper: Stepper,
    ids: torch.Tensor | np.ndarray,
    *,
    eta: float,
    perturbation_kind: str = "adversarial",
    seed: int = 0,
    automaton: Automaton | None = None,
    engine: str = "auto",
) -> dict[str, Any]:
    """Distance of h_t to the nearest code point against t = 1..T: ``{t, max, mean, radius, first_error}`` (max and
    mean over the words; radius the smallest cell inradius; first_error the first t read out wrong, or None, against
    ``automaton`` — default: the model's stored target)."""
    states, _, dist = run(stepper, ids, eta=eta, perturbation_kind=perturbation_kind, seed=seed, record_drift=True,
                          engine=engine)  # fmt: skip
    ids = np.asarray(ids)
    a = stepper.net.compiled.target_automaton() if automaton is None else automaton
    want = a.run(ids, start=np.full(len(ids), stepper.net.compiled.initial))
    bad = np.flatnonzero((states.numpy() != want).any(axis=0))
    return {
        "t": list(range(1, ids.shape[1] + 1)),
        "max": dist.max(dim=0).values.tolist(),
        "mean": dist.mean(dim=0).tolist(),
        "radius": stepper.radius,
        "first_error": None if len(bad) == 0 else int(bad[0]) + 1,
    }


def plot_drift(curves: Sequence[tuple[str, dict[str, Any]]], path: str | Path, *, title: str = "") -> Path:
    """Draw drift curves (label, :func:`drift` result) on log–log axes with each cell inradius as a dashed line;
    writes a PNG (matplotlib, Agg backend) and returns its path."""
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    radii = set()
    # curves that coincide stay visible: the first wide and pale, the next ones narrower, dashed, with markers
    styles = [
        dict(lw=3.0, alpha=0.45, ls="-"),
        dict(lw=1.3, ls="--", marker="o", ms=3),
        dict(lw=1.3, ls=":", marker="s", ms=3),
    ]
    for i, (label, c) in enumerate(curves):
        t, d = np.asarray(c["t"]), np.asarray(c["max"])
        style = styles[i % len(styles)]
        every = max(1, len(t) // 12)
        ax.plot(t, np.maximum(d, 1e-18), label=label, markevery=every, zorder=2 + i, **style)
        radii.add(round(float(c["radius"]), 6))
    for r in sorted(radii):
        if math.isfinite(r):
            ax.axhline(r, ls="--", lw=0.8, color="grey")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("t (symbols read)")
    ax.set_ylabel("distance to the nearest code point (max over words)")
    ax.set_title(title or "drift of η-trajectories (dashed: cell inradius)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)

    save_figure(fig, path, dpi=110)  # the format is the path's extension (png, pdf, svg)
    return path


__all__ = [
    "ENGINES",
    "PERTURBATIONS",
    "TrajectoryState",
    "check_eta",
    "drift",
    "l_max",
    "one_thread",
    "periodic_words",
    "perturbation",
    "plot_drift",
    "predictor",
    "run",
]
