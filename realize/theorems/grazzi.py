"""Claims of Grazzi et al., "Unlocking State-Tracking in Linear RNNs Through Negative Eigenvalues"."""

from __future__ import annotations

import numpy as np
import torch

from fsa2rnn.compiler import compile_householder, gh
from fsa2rnn.fsa.library import resolve_spec

from . import require, theorem
from .common import compiled_and_run, eigenvalues, fit_counting, learned, orbit

SRC = "Grazzi et al., Unlocking State-Tracking in Linear RNNs Through Negative Eigenvalues"


def _readout_along(spec: str, symbol: str, length: int, dtype: torch.dtype, **kw) -> tuple[np.ndarray, np.ndarray]:
    """(what a compiled Householder model reads along symbol^length at dtype, the automaton's states)."""
    from fsa2rnn.nn import load_model

    a = resolve_spec(spec)
    m = compile_householder(a, **kw)
    ids = np.full((1, length), a.symbols.index(symbol))
    got = load_model(m).to(dtype).predict_states(torch.from_numpy(ids)).numpy()[0]
    return got, a.run(ids, start=np.full(1, m.initial))[0]


def _orbits(models: dict[str, object], chunk: int, budget: int) -> dict[str, dict]:
    return {name: orbit(model, 1, chunk=chunk, budget=budget) for name, model in models.items()}


def _describe(o: dict) -> str:
    if o["repeat"] is None:
        return f"converged (relative change per chunk {o['change']:.1g}), readout constant over the last chunk"
    t, p = o["repeat"]
    return f"{'fixed' if p == 1 else f'period {p} chunks'} from t = {t}"


@theorem(
    "grazzi.thm1",
    f"{SRC}, Theorem 1",
    "a finite-precision LRNN solves parity at every length only if some A(x) has an eigenvalue that is not a "
    "non-negative real",
    "impossibility",
)
def thm1(thorough: bool) -> str:
    chunk, budget, steps = (1024, 2**18, 300) if thorough else (1024, 2**15, 25)
    models = {}
    for layer, args in (("mamba", {"eig_range": (0, 1), "state_size": 4}), ("deltanet", {"beta_range": (0, 1)})):
        extra = {"heads": 1, "head_dim": 4} if layer == "deltanet" else {}
        models[f"{layer}[0,1] random"] = learned(layer, seed=0, **args, **extra)
        fitted = learned(layer, seed=1, **args, **extra)
        acc = fit_counting(fitted, 2, steps=steps, seed=1)
        models[f"{layer}[0,1] fitted to parity ≤ 8 (acc {acc:.2f})"] = fitted
    for name, model in models.items():
        ev = eigenvalues(model, 1)
        ok = bool(np.all(np.abs(ev.imag) < 1e-6) and np.all(ev.real >= -1e-6))
        require(ok, f"{name}: A(1) has eigenvalues outside [0, ∞)")
    orbits = _orbits(models, chunk, budget)
    for name, o in orbits.items():
        constant = len(torch.unique(o["outputs"])) == 1
        settled = (o["repeat"] is not None and o["repeat"][1] == 1) or (o["change"] is not None and o["change"] < 1e-5)
        require(constant and settled, f"{name}: the readout along 1^k does not settle ({_describe(o)})")
    k = budget
    got, want = _readout_along("parity", "1", k, torch.float32)
    require(np.array_equal(got, want), "the compiled parity construction (a(1) = −1) stops alternating")
    states = "; ".join(f"{n}: {_describe(o)}" for n, o in orbits.items())
    return (
        f"eigenvalues of A(1) in [0, 1]; along 1^k in float32 (chunks of {chunk}) the state settles and the readout "
        f"is constant, so it never alternates ({states}); the compiled [−1, 1] construction reads parity right for "
        f"all k ≤ {k}"
    )


@theorem(
    "grazzi.thm2",
    f"{SRC}, Theorem 2",
    "counting modulo m (m not a power of two) needs, in some layer, a product of A's with an eigenvalue that is "
    "not real",
    "impossibility",
)
def thm2(thorough: bool) -> str:
    chunk, budget, steps = (1024, 2**18, 300) if thorough else (1024, 2**15, 25)
    models = {
        "mamba[-1,1] random": learned("mamba", seed=0, n_classes=3, eig_range=(-1, 1), state_size=4),
        "mamba[0,1] random": learned("mamba", seed=2, n_classes=3, eig_range=(0, 1), state_size=4),
    }
    fitted = learned("mamba", seed=1, n_classes=3, eig_range=(-1, 1), state_size=4)
    acc = fit_counting(fitted, 3, steps=steps, seed=1)
    models[f"mamba[-1,1] fitted to counting mod 3 ≤ 8 (acc {acc:.2f})"] = fitted
    for name, model in models.items():
        ev = eigenvalues(model, 1)
        require(bool(np.all(np.abs(ev.imag) < 1e-6)), f"{name}: A(1) has a non-real eigenvalue")
    orbits = _orbits(models, chunk, budget)
    for name, o in orbits.items():
        require(o["repeat"] is not None and o["repeat"][1] in (1, 2), f"{name}: no cycle of 1 or 2 chunks along 1^k")
    got, want = _readout_along("Z3:gen", "+1", budget, torch.float32)
    require(np.array_equal(got, want), "the compiled rotation (eigenvalues e^(±2πi/3)) miscounts modulo 3")
    states = "; ".join(f"{n}: {_describe(o)}" for n, o in orbits.items())
    return (
        f"real diagonal models along 1^k in float32 (chunks of {chunk}) end in a cycle of 1 or 2 chunks, so their "
        f"readout has a period dividing {2 * chunk}, never a multiple of 3 ({states}); the compiled rotation by 2π/3 "
        f"counts modulo 3 right for all k ≤ {budget}"
    )


def _random_unit(rng: np.random.Generator, n: int) -> np.ndarray:
    v = rng.standard_normal(n)
    return v / np.linalg.norm(v)


@theorem(
    "grazzi.prop1.norm",
    f"{SRC}, Proposition 1 (1)",
    "every product of GH matrices I − βvvᵀ with β ∈ [0, 2] (eigenvalues in [−1, 1]) has norm ≤ 1",
    "bound",
)
def prop1_norm(thorough: bool) -> str:
    rng = np.random.default_rng(0)
    count, worst = (2000 if thorough else 200), 0.0
    for _ in range(count):
        n = int(rng.integers(1, 13))
        betas = rng.choice([0.0, 2.0, np.nan], size=int(rng.integers(1, 3 * n + 1)), p=[0.1, 0.1, 0.8])
        factors = [gh.FloatGH(_random_unit(rng, n), float(rng.uniform(0, 2) if np.isnan(b) else b)) for b in betas]
        worst = max(worst, float(np.linalg.norm(gh.float_product(factors, n), 2)))
    require(worst <= 1 + 1e-12, f"a product has norm {worst!r} > 1")
    return f"{count} random products (n ≤ 12, ≤ 3n factors, β ∈ [0, 2]): largest ‖·‖₂ = {worst:.15f}"


@theorem(
    "grazzi.prop1.positive",
    f"{SRC}, Proposition 1 remark and proof (appendix C.2)",
    "a product of at most two GH matrices with β ∈ [0, 1] has real non-negative eigenvalues (so [0, 1] DeltaNet "
    "cannot solve parity)",
    "bound",
)
def prop1_positive(thorough: bool) -> str:
    rng = np.random.default_rng(1)
    count, worst_im, lowest = (5000 if thorough else 500), 0.0, np.inf
    for _ in range(count):
        n = int(rng.integers(2, 13))
        factors = [gh.FloatGH(_random_unit(rng, n), float(rng.uniform(0, 1))) for _ in range(2)]
        ev = np.linalg.eigvals(gh.float_product(factors, n))
        worst_im, lowest = max(worst_im, float(np.abs(ev.imag).max())), min(lowest, float(ev.real.min()))
    require(worst_im < 1e-9 and lowest > -1e-9, f"an eigenvalue off [0, ∞): |Im| {worst_im:.3g}, min Re {lowest:.3g}")
    return f"{count} random pairs (n ≤ 12): largest |Im λ| = {worst_im:.2g}, smallest Re λ = {lowest:.2g}"


@theorem(
    "grazzi.prop1.orthogonal",
    f"{SRC}, Proposition 1 (2)",
    "every orthogonal n×n matrix is a product of at most n reflections (M_n^n({−1, 1}))",
    "construction",
)
def prop1_orthogonal(thorough: bool) -> str:
    rng = np.random.default_rng(2)
    count, worst = (2000 if thorough else 200), 0.0
    for _ in range(count):
        n = int(rng.integers(1, 13))
        q, r = np.linalg.qr(rng.standard_normal((n, n)))
        q = q * np.sign(np.diag(r))
        fs = gh.orthogonal_as_reflections(q)
        require(len(fs) <= n and all(f.beta == 2.0 for f in fs), f"n = {n}: {len(fs)} factors, not ≤ n reflections")
        worst = max(worst, float(np.abs(gh.float_product(fs, n) - q).max()))
    require(worst <= 1e-10, f"reconstruction error {worst:.3g} > 1e-10")
    return f"{count} random orthogonal matrices (n ≤ 12): ≤ n reflections each, max error {worst:.2g}"


@theorem(
    "grazzi.prop1.permutation",
    f"{SRC}, Proposition 1 (3) and Figure 3",
    "every n×n permutation matrix is a product of at most n − 1 reflections v = (e_i − e_j)/√2 (swaps)",
    "construction",
)
def prop1_permutation(thorough: bool) -> str:
    import itertools

    rng = np.random.default_rng(3)
    perms = [np.array(p) for n in range(1, 6) for p in itertools.permutations(range(n))]
    small = len(perms)
    perms += [rng.permutation(int(rng.integers(6, 13))) for _ in range(2000 if thorough else 200)]
    for p in perms:
        fs = gh.reflections_of_permutation(p)
        n = len(p)
        require(len(fs) <= max(n - 1, 0), f"{p.tolist()}: {len(fs)} swaps > n − 1")
        require(np.array_equal(gh.integer_product(fs, n), gh.permutation_matrix(p)), f"{p.tolist()}: wrong product")
    return (
        f"all {small} permutations of n ≤ 5 and {len(perms) - small} random ones (n ≤ 12): ≤ n − 1 swaps, products "
        "equal in integer arithmetic"
    )


@theorem(
    "grazzi.prop1.contraction",
    f"{SRC}, Proposition 1 (2)",
    "every M with ‖M‖₂ ≤ 1 is a product of at most 3n GH matrices with β ∈ [0, 2] (M_3n^n([−1, 1]), via the SVD)",
    "construction",
)
def prop1_contraction(thorough: bool) -> str:
    rng = np.random.default_rng(4)
    count, worst = (2000 if thorough else 200), 0.0
    for _ in range(count):
        n = int(rng.integers(1, 13))
        m = rng.standard_normal((n, n))
        m = m / (np.linalg.norm(m, 2) * float(rng.uniform(1.0, 3.0)))
        fs = gh.contraction_as_gh(m)
        require(len(fs) <= 3 * n and all(0 <= f.beta <= 2 for f in fs), f"n = {n}: {len(fs)} factors or β off [0, 2]")
        worst = max(worst, float(np.abs(gh.float_product(fs, n) - m).max()))
    require(worst <= 1e-10, f"reconstruction error {worst:.3g} > 1e-10")
    return f"{count} random contractions (n ≤ 12): ≤ 3n GH factors with β ∈ [0, 2], max error {worst:.2g}"


@theorem(
    "grazzi.thm3",
    f"{SRC}, Theorem 3 and appendix C.1",
    "an automaton whose transition monoid is a group is realized by one LRNN layer with A(x) a product of ≤ k − 1 "
    "reflections (k: the most points one δ_x moves); a cyclic group by 2×2 rotations, parity by the scalar −1",
    "construction",
)
def thm3(thorough: bool) -> str:
    specs = ["S5", "S5:gens", "A5", "Z5", "parity"] + (["D6", "Q8", "PSL(2,7)"] if thorough else [])
    out = []
    for spec in specs:
        a = resolve_spec(spec)
        m = compile_householder(a)
        require(m.summary["layers"] == 1, f"{spec}: {m.summary['layers']} layers")
        if m.construction == "permutation":
            moved = max(int((np.asarray(t) != np.arange(len(t))).sum()) for t in a.transitions)
            require(m.summary["factors_per_step"] <= max(moved - 1, 1), f"{spec}: more than k − 1 reflections")
        compiled_and_run(m, a, length=512 if thorough else 128)
        out.append(f"{spec} ({m.construction}, width {m.summary['width']}, {m.summary['factors_per_step']}/step)")
    return "one layer, exact check and float64 run ok: " + ", ".join(out)


@theorem(
    "grazzi.thm4",
    f"{SRC}, Theorem 4 (via Krohn–Rhodes, appendix C.5)",
    "every automaton is realized by a stack of LRNN layers with GH-product transitions in [−1, 1], one per level "
    "of a permutation-reset cascade (layers read the upper states of the previous step)",
    "construction",
)
def thm4(thorough: bool) -> str:
    specs = ["T4", "flipflop", "regex:(a|b)*abb", "even_pairs"] + (
        ["T5", "gridworld:3", "modarith:3"] if thorough else []
    )
    out = []
    for spec in specs:
        a = resolve_spec(spec)
        m = compile_householder(a, construction="cascade")
        width = m.summary["width"]
        widths = width if isinstance(width, list) else [width]
        n = a.reachable().n_states
        require(max(widths) <= n and m.summary["layers"] <= 2**n, f"{spec}: sizes over Theorem 4's bounds")
        compiled_and_run(m, a, length=512 if thorough else 128)
        n_layers = m.summary["layers"]
        out.append(f"{spec} ({n_layers} layer{'s' * (n_layers != 1)}, widths {widths})")
    return "cascade, exact check and float64 run ok: " + ", ".join(out)


@theorem(
    "grazzi.thm6",
    f"{SRC}, Theorem 6 (appendix D)",
    "addition modulo m is realized by two layers of reflections only: a scalar −1 layer (t mod 2) and 2×2 "
    "reflections H(θ(x, t mod 2))",
    "construction",
)
def thm6(thorough: bool) -> str:
    out = []
    for m_ in [2, 3, 5, 7] + ([12, 30] if thorough else []):
        a = resolve_spec(f"Z{m_}")
        m = compile_householder(a, construction="reflections2")
        kinds = {gh.KINDS[int(c)] for e in m.header["layers"] for c in np.unique(m.tensors[f"{e['name']}.fkind"])}
        require(kinds <= {"identity", "negate", "angle"}, f"Z{m_}: factors other than reflections: {kinds}")
        require(m.summary["layers"] == 2 and m.summary["factors_per_step"] == 1, f"Z{m_}: not 2 layers × 1 factor")
        compiled_and_run(m, a, length=512 if thorough else 128)
        out.append(f"Z{m_}")
    return "two layers, one reflection per step each, exact check and float64 run ok: " + ", ".join(out)
