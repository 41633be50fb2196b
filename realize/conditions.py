"""Is a compiled model η-robust? A checker of (R1)–(R3) (length-independent-state-tracking Theorems 3.1, 3.2) with
Theorem 4.1 for affine recurrences; the verdict is exactly ``robust``, ``not_robust`` or ``refused``.

(R1) π∘ι = id; (R2) a bounded U with Φ_x(U) ⊕ B̄_η ⊆ U; (R3) π(Φ_x(u) + e) = δ_x(π(u)) for u ∈ U, ‖e‖₂ ≤ η —
equivalently cells U_q with Φ_x(U_q) ⊕ B̄_η ⊆ U_{δ_x(q)} (Theorem 3.2). Per target:

- ``nfsm``: U = ⋃_c B̄_η(a_c) over the reachable configurations c (a_c the attractor vectors). The perturbation is added
  to a_{h_t} before the next step's rounding, so the rounding restores a_c exactly iff η < η* = half the smallest
  distance between two attractors of one head (1/√2 for one-hot attractors); then Φ_x(B̄_η(a_c)) = {a_{σ_x(c)}} (R2)
  and (R1), (R3) hold iff the tables extracted at the dtype realize the automaton (realize/extract.py). At η ≥ η* a
  perturbation reaches the midpoint of two attractors and (R3) fails: the adversarial simulation gives a failing word.
- ``householder`` / ``diagonal``: Theorem 4.1's branch, decided exactly (realize/spectral.py). ρ(A_w) = 1 on a
  cycle w ⇒ (R2) fails at every η > 0 (``not_robust``, witness w); ρ = 0 on every cycle ⇒ the model forgets and
  realizes at most a definite automaton: a definite target is ``robust`` below the radius spectral.py computes, a
  non-definite one is ``refused`` (Theorem 4.1 (ii), witness: a word whose powers never act as a constant map).
- ``affine`` (the shift register): A is nilpotent (ρ = 0, checked exactly), the error after k steps is
  Σ_{j<k} A^j e_{t−j}, so the model is robust for η < r / Σ_{j<k} ‖A^j‖₂ (r = 1/2, the digit cells' inradius) when
  the target is definite; non-definite targets are refused.

At η = 0 there is no perturbation: the verdict is the exact check's ((R1)–(R3) on the finite code). ``not_robust``
above a *sufficient* radius (branch (ii), shift register) means "not certified at this η"; the evidence says so and
gives the failing word when the adversarial simulation finds one.

A ``robust`` verdict that the checker's own adversarial simulation contradicts (a trajectory fails below the
radius it certified) is a bug in the radius, not a property of the model: the verdict is then ``not_robust`` with
``contradiction`` set and the failing length in the evidence, never ``robust``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..compiler.model import CompiledModel
from ..compiler.registry import target_of
from ..compiler.targets.affine.definite_to_affine import check_affine, non_definite_witness
from ..compiler.targets.lrnn.exact import exact_check
from ..fsa.automaton import Automaton
from ..fsa.classify import definite_degree
from ..fsa.errors import ModelFileError, SpecError
from ..fsa.monoid import TransitionMonoid
from ..fsa.progress import bar
from . import spectral
from .extract import extract_and_compare
from .robust import check_eta, drift, l_max, plot_drift, run
from .steppers import Stepper, stepper_for

VERDICTS = ("robust", "not_robust", "refused")
#: default horizon of the simulations the checker runs as evidence
SIMULATION_CAP = 1024


def _names(automaton: Automaton, word: list[int] | None) -> list[str] | None:
    return None if word is None else [automaton.symbols[x] for x in word]


def _verdict(eta: float, verdict: str, theorem: str, evidence: str, witness: list[str] | None, **extra: Any) -> dict:
    assert verdict in VERDICTS
    return {"eta": eta, "verdict": verdict, "theorem": theorem, "evidence": evidence, "witness": witness, **extra}


def trajectory_failing_word(
    stepper: Stepper, automaton: Automaton, *, eta: float, length: int = 64, n_words: int = 64, seed: int = 0
) -> list[int] | None:
    """The shortest prefix (symbol ids), over ``n_words`` seeded random words, on which the adversarial
    η-trajectory reads out a wrong state; None if none does within ``length``."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, automaton.n_symbols, size=(n_words, length))
    got, _, _ = run(stepper, ids, eta=eta, perturbation_kind="adversarial", seed=seed)
    want = automaton.run(ids, start=np.full(n_words, automaton.initial))
    bad = got.numpy() != want
    if not bad.any():
        return None
    first = np.where(bad.any(axis=1), bad.argmax(axis=1), length)
    w = int(first.argmin())
    return ids[w, : first[w] + 1].tolist()


def _non_definite(automaton: Automaton) -> tuple[bool, int | None, list[int] | None]:
    """(definite, degree, witness): the degree of the reachable part, or a word whose powers never become constant."""
    reach = automaton.reachable()
    k = definite_degree(TransitionMonoid(reach))
    if k is not None:
        return True, k, None
    w = non_definite_witness(reach)
    return False, None, w


def _refused(eta: float, automaton: Automaton, witness: list[int] | None, why: str) -> dict[str, Any]:
    n = automaton.reachable().n_states
    return _verdict(
        eta,
        "refused",
        "Theorem 4.1 (ii)",
        f"{why}; the target is not definite: δ_(w^{n}) is not a constant map for the witness w, so an affine "
        "recurrence that forgets (ρ(A_w) < 1 for all words) realizes it at no η > 0",
        _names(automaton, witness),
    )


def _simulate(
    stepper: Stepper, automaton: Automaton, eta: float, cap: int, seed: int, witness=None, n_words: int = 16
) -> dict[str, Any]:
    r = l_max(
        None,
        eta=eta,
        stepper=stepper,
        automaton=automaton,
        witness=witness,
        cap=cap,
        start=min(16, cap),
        n_words=1 if witness is not None else n_words,
        seed=seed,
    )
    return {k: r[k] for k in ("l_max", "l_max_capped", "perturbation", "words", "n_words", "cap")}


def _describe_sim(sim: dict[str, Any] | None) -> str:
    if sim is None:
        return ""
    words = "the witness word repeated" if sim["words"] == "witness" else f"{sim['n_words']} random words"
    if sim["l_max"] is None:
        return f"; {sim['perturbation']} η-trajectories on {words}: no failure up to length {sim['cap']}"
    return f"; {sim['perturbation']} η-trajectories on {words} fail at length {sim['l_max']}"


# ---------------------------------------------------------------------------------------------------- per target
def nfsm_conditions(
    model: CompiledModel,
    automaton: Automaton,
    eta: float,
    *,
    dtype: str,
    mode: str,
    simulate: bool,
    cap: int,
    seed: int,
) -> dict[str, Any]:
    """The verdict for an NFSM (the module docstring; the nfsm target's ``robustness``)."""
    stepper = stepper_for(model, dtype)
    star = stepper.radius
    ext = extract_and_compare(model, automaton, dtype=dtype)
    if not ext["match"]:
        return _verdict(
            eta,
            "not_robust",
            "Theorem 3.1 (R1, R3)",
            f"(R3) fails at η = 0 already: {ext['statement']}",
            ext["failing_word"],
            radius=star,
        )
    if eta < star:
        sim = _simulate(stepper, automaton, eta, cap, seed) if simulate and eta > 0 else None
        return _verdict(
            eta,
            "robust",
            "Theorem 3.2",
            f"η = {eta:.6g} < η* = {star:.6g} (half the smallest distance between attractors): the cells "
            f"B̄_η(a_c) of the {ext['configurations']} configurations lie in the attractors' basins, every step rounds "
            f"back to a_c and the tables move it to a_(σ_x(c)) (R2: U = ⋃ B̄_η(a_c), bounded); {ext['statement']} "
            f"(R1, R3){_describe_sim(sim)}",
            None,
            radius=star,
            simulation=sim,
        )
    word = trajectory_failing_word(stepper, automaton, eta=eta, seed=seed)
    return _verdict(
        eta,
        "not_robust",
        "Theorem 3.1 (R3)",
        f"η = {eta:.6g} ≥ η* = {star:.6g}: a perturbation of norm η reaches the midpoint of two attractors, so the "
        "next rounding can pick the wrong one; "
        + (
            f"the adversarial η-trajectory errs on the witness (length {len(word)})"
            if word
            else "no adversarial trajectory erred on the random words tried"
        ),
        _names(automaton, word),
        radius=star,
    )


def linear_rnn_conditions(
    model: CompiledModel,
    automaton: Automaton,
    eta: float,
    *,
    dtype: str,
    mode: str,
    simulate: bool,
    cap: int,
    seed: int,
) -> dict[str, Any]:
    """The verdict for a linear RNN: Theorem 4.1's branch (the module docstring; the householder and diagonal
    targets' ``robustness``)."""
    ex = exact_check(model, automaton)
    if not ex["ok"]:
        return _verdict(eta, "not_robust", "Theorem 3.1 (R1, R3)", f"the exact check fails: {ex['failure']}", None)
    branch = spectral.theorem41_branch(model)  # through the module: a check of the check may patch it
    stepper = stepper_for(model, dtype, mode)
    radii = [b.radius for b in stepper.blocks]
    rho = branch["spectral_radius"]
    how = "exactly" if branch["exact"] else "numerically"
    if branch["branch"] == "i":
        w = branch["witness"]
        layer = branch["layer"]
        r = radii[layer]
        where = f" after the prefix p = {_names(automaton, w['prefix'])}" if w["prefix"] else ""
        if eta == 0:
            return _verdict(
                0.0,
                "robust",
                "Theorem 3.1 at η = 0",
                "η = 0: the only trajectory is the exact one, and the exact check shows (R1)–(R3) on the reachable "
                f"code points; but ρ(A_w) = 1 for w = {_names(automaton, w['cycle'])}, so no per-step error is ever "
                "damped — not robust at any η > 0, nor under the dtype's own rounding where it is inexact (l_max "
                "at η = 0 measures that)",
                None,
                spectral_radius=rho,
            )
        horizon = math.ceil(r / eta)
        if simulate and horizon <= cap:
            sim = _simulate(stepper, automaton, eta, cap, seed, witness=(w["prefix"], w["cycle"]))
        else:
            sim = None
        return _verdict(
            eta,
            "not_robust",
            "Theorem 4.1 (i)",
            f"ρ(A_w) = {rho:g} ({how}) in layer {layer} along the cycle w{where}: its rows are orthogonal, so an "
            "error along the eigenvector of A_w is never damped and no bounded region absorbs η-perturbations "
            f"((R2) fails at every η > 0); since ‖A(x)‖ ≤ 1 every η-trajectory is right for t < r/η = {horizon} "
            f"(r = {r:.6g}){_describe_sim(sim)}",
            _names(automaton, w["cycle"]),
            witness_prefix=_names(automaton, w["prefix"]),
            spectral_radius=rho,
            horizon=horizon,
            simulation=sim,
        )
    definite, k, nd_witness = _non_definite(automaton)
    if not definite:
        return _refused(eta, automaton, nd_witness, f"ρ(A_w) = {rho:g} on every cycle ({how})")
    if branch["surviving"] is None:
        return _verdict(
            eta,
            "not_robust",
            "Theorem 4.1 (ii)",
            f"ρ(A_w) ≤ {rho:.6g} on the cycles tried (numerically): no "
            "radius is certified for rows that are neither orthogonal nor zero",
            None,
            spectral_radius=rho,
        )
    star = min(r / s for r, s in zip(radii, branch["surviving"]))
    return _certified(
        stepper,
        automaton,
        eta,
        star,
        simulate,
        cap,
        seed,
        rho,
        (
            f"ρ(A_w) = 0 on every cycle ({how}): every cycle meets a reset in every layer and an error survives at "
            f"most {branch['surviving']} steps per layer, so it stays below the cells' inradius {radii} while "
            f"η < η* = min r_i/(ℓ_i + 1) = {star:.6g}; the target is {k}-definite"
        ),
    )


def affine_conditions(
    model: CompiledModel,
    automaton: Automaton,
    eta: float,
    *,
    dtype: str,
    mode: str,
    simulate: bool,
    cap: int,
    seed: int,
) -> dict[str, Any]:
    """The verdict for a shift register (the module docstring; the affine target's ``robustness``)."""
    definite, k, nd_witness = _non_definite(automaton)
    if not definite:
        return _refused(eta, automaton, nd_witness, "the model is a shift register (ρ = 0)")
    ex = check_affine(model, automaton)
    if not ex["ok"]:
        return _verdict(eta, "not_robust", "Theorem 3.1 (R1, R3)", f"the exact check fails: {ex['failure']}", None)
    a = np.asarray(model.tensors["A"], dtype=np.float64)
    nu = int(ex["nilpotent_index"])
    norms = [np.linalg.norm(np.linalg.matrix_power(a, j), 2) for j in range(nu)]
    stepper = stepper_for(model, dtype)
    star = stepper.radius / float(sum(norms))
    return _certified(
        stepper,
        automaton,
        eta,
        star,
        simulate,
        cap,
        seed,
        0.0,
        (
            f"A is nilpotent (A^{nu} = 0 exactly, ρ = 0): the error at step t is Σ_(j<{nu}) A^j e_(t−j), of norm "
            f"≤ η·Σ‖A^j‖₂ = {sum(norms):g}·η, below the digit cells' inradius {stepper.radius:g} while "
            f"η < η* = {star:.6g}; the target is {k}-definite"
        ),
    )


def _certified(
    stepper: Stepper,
    automaton: Automaton,
    eta: float,
    star: float,
    simulate: bool,
    cap: int,
    seed: int,
    rho: float,
    why: str,
) -> dict[str, Any]:
    """Branch (ii) with a definite target: robust below the certified radius η*, not certified above it."""
    if eta < star:
        sim = _simulate(stepper, automaton, eta, cap, seed) if simulate and eta > 0 else None
        return _verdict(
            eta,
            "robust",
            "Theorem 4.1 (ii), Theorem 3.2",
            why + _describe_sim(sim),
            None,
            radius=star,
            spectral_radius=rho,
            simulation=sim,
        )
    word = trajectory_failing_word(stepper, automaton, eta=eta, seed=seed)
    found = (
        f"; the adversarial η-trajectory errs on the witness (length {len(word)})"
        if word
        else ("; no adversarial trajectory erred on the random words tried (the radius is sufficient, not necessary)")
    )
    return _verdict(
        eta,
        "not_robust",
        "Theorem 3.2 (not certified)",
        f"η = {eta:.6g} ≥ the certified radius: " + why + found,
        _names(automaton, word),
        radius=star,
        spectral_radius=rho,
    )


def check_conditions(
    model: CompiledModel | Any,
    eta: float,
    automaton: Automaton | None = None,
    *,
    dtype: str = "float64",
    mode: str = "fused",
    simulate: bool = True,
    cap: int = SIMULATION_CAP,
    seed: int = 0,
) -> dict[str, Any]:
    """The robustness verdict of a compiled model at η against ``automaton`` (default: the target stored in it).

    ``{eta, verdict, theorem, evidence, witness, …}`` with, by target, ``radius`` (η*), ``spectral_radius``,
    ``witness_prefix``, ``horizon`` and ``simulation`` when ``simulate``: the adversarial L_max on 16 random words (or
    the witness word), searched as robust_report's from length LMAX_START = 16 up to ``cap`` (default SIMULATION_CAP
    = 1024)."""
    eta = check_eta(eta)
    if not isinstance(model, CompiledModel) and isinstance(getattr(model, "compiled", None), CompiledModel):
        model = model.compiled
    if not isinstance(model, CompiledModel):
        raise ModelFileError(f"check_conditions takes a compiled model, got {type(model).__name__}")
    model.check_integrity()
    automaton = model.target_automaton() if automaton is None else automaton
    if list(automaton.symbols) != model.symbols or list(automaton.states) != model.states:
        raise SpecError("the spec's states or symbols differ from the model's (same names in the same order needed)")
    automaton = automaton.replace(initial=model.initial)
    conditions = target_of(model).load("robustness")
    if conditions is None:
        raise ModelFileError(f"no robustness check for target {model.target!r}")
    return _contradicted(
        conditions(model, automaton, eta, dtype=dtype, mode=mode, simulate=simulate, cap=cap, seed=seed)
    )


def _contradicted(res: dict[str, Any]) -> dict[str, Any]:
    """A ``robust`` verdict whose own simulation found a failing trajectory becomes ``not_robust`` (contradiction)."""
    sim = res.get("simulation")
    if res["verdict"] != "robust" or not sim or sim.get("l_max") is None:
        return {**res, "contradiction": False}
    return {
        **res,
        "verdict": "not_robust",
        "theorem": "contradiction",
        "contradiction": True,
        "evidence": (
            f"the certificate claims robustness at η = {res['eta']:.6g} (radius {res.get('radius')}) but its own "
            f"adversarial simulation fails at length {sim['l_max']}: the certified radius is wrong; " + res["evidence"]
        ),
    }


#: defaults of ``fsa2rnn verify --eta``: the L_max search (start, words) and the drift plot (words, longest length)
LMAX_START, LMAX_WORDS, PLOT_WORDS, PLOT_LENGTH = 16, 32, 8, 4096


def robust_report(
    model: CompiledModel,
    automaton: Automaton | None,
    *,
    eta: float,
    perturbation_kind: str = "adversarial",
    dtype: str = "float64",
    mode: str = "fused",
    lmax: bool = False,
    cap: int = 2**14,
    plot: str | None = None,
    seed: int = 0,
    engine: str = "auto",
) -> dict[str, Any]:
    """What ``fsa2rnn verify --eta`` adds to its report: ``{eta, verdict, theorem, evidence, witness, l_max,
    l_max_capped, perturbation, …}``. With ``lmax`` the failing length of η-trajectories of ``perturbation_kind``
    on LMAX_WORDS = 32 random words, lengths doubled from LMAX_START = 16 to ``cap`` (default 2^14) (and, for a
    witness of Theorem 4.1 (i), on p·w·w·… as ``l_max_witness``); with ``plot`` a PNG
    of the drift against t (PLOT_WORDS = 8 random words and the witness word, min(cap, PLOT_LENGTH = 4096) steps).
    ``engine``: realize/robust.py's ``ENGINES``."""
    eta = check_eta(eta)
    if cap < LMAX_START:
        raise SpecError(f"the cap {cap} is below the start length {LMAX_START}")
    res = check_conditions(model, eta, automaton, dtype=dtype, mode=mode, simulate=False, seed=seed)
    a = (model.target_automaton() if automaton is None else automaton).replace(initial=model.initial)
    out = {k: res[k] for k in ("eta", "verdict", "theorem", "evidence", "witness")}
    out.update(perturbation=perturbation_kind, dtype=dtype, l_max=None, l_max_capped=None)
    for key in ("radius", "spectral_radius", "witness_prefix", "horizon"):
        if res.get(key) is not None:
            out[key] = res[key]
    witness = None
    if res["theorem"] == "Theorem 4.1 (i)" and res["witness"]:
        witness = (
            [a.symbols.index(s) for s in res.get("witness_prefix") or []],
            [a.symbols.index(s) for s in res["witness"]],
        )
    stepper = stepper_for(model, dtype, mode)
    if lmax:
        common = dict(eta=eta, perturbation_kind=perturbation_kind, automaton=a, cap=cap, start=LMAX_START, seed=seed,
                      engine=engine)  # fmt: skip
        with bar(LMAX_WORDS * cap, "L_max search", unit="sym", unit_scale=True) as b:
            r = l_max(None, stepper=stepper, n_words=LMAX_WORDS, progress=b, **common)
        out.update(l_max=r["l_max"], l_max_capped=r["l_max_capped"], cap=cap)
        if witness is not None:
            n = 1 if perturbation_kind != "random" else LMAX_WORDS
            with bar(n * cap, "L_max search (witness)", unit="sym", unit_scale=True) as b:
                rw = l_max(None, stepper=stepper, witness=witness, n_words=n, progress=b, **common)
            out.update(l_max_witness=rw["l_max"], l_max_witness_capped=rw["l_max_capped"])
    if plot is not None:
        length = min(cap, PLOT_LENGTH)
        words = [
            (f"{PLOT_WORDS} random words", np.random.default_rng(seed).integers(0, a.n_symbols, (PLOT_WORDS, length)))
        ]
        if witness is not None:
            p, w = witness
            words.append(("witness p·w·w·…", np.array([(p + w * (length // len(w) + 1))[:length]])))
        opts = dict(eta=eta, perturbation_kind=perturbation_kind, seed=seed, automaton=a, engine=engine)
        curves = [(label, drift(stepper, ids, **opts)) for label, ids in words]
        title = f"{model.target}/{model.construction}, η = {eta:g} ({perturbation_kind}, {dtype})"
        out["plot"] = str(plot_drift(curves, plot, title=title))
    return out


def affine_compile_report(model: CompiledModel) -> dict[str, Any]:
    """What ``fsa2rnn compile`` adds to a shift register's summary: the radius it is certified robust below."""
    radius = check_conditions(model, 0.0, simulate=False)["radius"]
    return {"robust": f"certified robust for every η < {radius:.6g} (Theorems 3.2 and 4.1 (ii))"}


__all__ = [
    "LMAX_START",
    "LMAX_WORDS",
    "PLOT_LENGTH",
    "PLOT_WORDS",
    "SIMULATION_CAP",
    "VERDICTS",
    "affine_compile_report",
    "affine_conditions",
    "check_conditions",
    "linear_rnn_conditions",
    "nfsm_conditions",
    "trajectory_failing_word",
    "robust_report",
]
