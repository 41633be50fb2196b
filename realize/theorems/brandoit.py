"""Claims of Brandoit et al., "Length-Independent State Tracking Under a Parallel Scan"."""

from __future__ import annotations

import itertools
import math

import numpy as np
import torch

from fsa2rnn.compiler import compile_diagonal, compile_householder, compile_nfsm
from fsa2rnn.compiler.definite_to_affine import compile_affine, non_definite_witness
from fsa2rnn.fsa.automaton import Automaton
from fsa2rnn.fsa.classify import definite_degree
from fsa2rnn.fsa.errors import ConstructionError
from fsa2rnn.fsa.library import resolve_spec
from fsa2rnn.fsa.monoid import TransitionMonoid

from ..conditions import check_conditions
from ..robust import drift, l_max, perturbation
from ..steppers import stepper_for
from . import require, theorem
from .common import _flat, compiled_and_run, learned

SRC = "Brandoit et al., Length-Independent State Tracking Under a Parallel Scan"
ROOT2 = math.sqrt(2.0)


def _random_automata(count: int, seed: int) -> list[Automaton]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        n, k = int(rng.integers(2, 7)), int(rng.integers(1, 4))
        out.append(Automaton(rng.integers(0, n, (k, n)), initial=0, name=f"random{i}"))
    return out


@theorem(
    "brandoit.thm3.1",
    f"{SRC}, Theorem 3.1",
    "a recurrence realizes an automaton with length independence at η iff some bounded U satisfies (R1) π∘ι = id, "
    "(R2) Φ_x(U) ⊕ B̄_η ⊆ U and (R3) π(Φ_x(u) + e) = δ_x(π(u))",
    "equivalence",
)
def thm31(thorough: bool) -> str:
    cap = 2**14 if thorough else 2**8
    cases = [
        ("flipflop", compile_nfsm, 0.9 / ROOT2),
        ("flipflop", compile_nfsm, 1.1 / ROOT2),
        ("Z5", compile_householder, 2e-2),
        ("regex:(a|b)*ab", compile_affine, 0.2),
    ]
    if thorough:
        cases += [
            ("T4", compile_nfsm, 0.9 / ROOT2),
            ("T4", compile_nfsm, 1.1 / ROOT2),
            ("S5", compile_householder, 1e-2),
            ("regex:(a|b)*ab", compile_householder, 0.5),
        ]
    out = []
    for spec, compiler, eta in cases:
        model = compiler(resolve_spec(spec))
        res = check_conditions(model, eta, cap=cap)
        if res["verdict"] == "robust":
            sim = res["simulation"]
            require(
                sim is not None and sim["l_max"] is None,
                f"{spec} {model.target} at η = {eta:.3g}: (R1)–(R3) "
                f"hold but an adversarial η-trajectory fails at {sim and sim['l_max']}",
            )
        else:
            sim = res.get("simulation")
            failed = res["witness"] is not None if sim is None else sim["l_max"] is not None
            require(failed, f"{spec} {model.target} at η = {eta:.3g}: not robust but no η-trajectory failed")
        out.append(f"{spec} {model.target} η={eta:.3g}: {res['verdict']}")
    return f"(R1)–(R3) verdicts agree with adversarial simulation up to length {cap}: " + "; ".join(out)


def _cell_samples(stepper, configs: torch.Tensor, eta: float, per: int, gen: torch.Generator) -> torch.Tensor:
    """Points of B̄_η(a_c) for each configuration: ``per`` random ones and the pushes toward every other attractor
    of each head (the extreme points of R3), (C·m, D)."""
    centers = stepper._vectors(configs)
    c, d = centers.shape
    g = torch.randn(c, per, d, dtype=torch.float64, generator=gen)
    r = eta * torch.rand(c, per, 1, dtype=torch.float64, generator=gen) ** (1 / d)
    pts = [centers[:, None].double() + g / g.norm(dim=-1, keepdim=True) * r]
    for b in stepper.blocks:
        for j in range(len(b.codes)):
            push = torch.zeros(c, d, dtype=torch.float64)
            push[:, b.start : b.stop] = b.codes[j] - centers[:, b.start : b.stop].double()
            norm = push.norm(dim=-1, keepdim=True)
            pts.append((centers.double() + eta * push / norm.clamp(min=1e-300))[:, None])
    return torch.cat(pts, dim=1).reshape(-1, d)


def _cell_inclusions(model, eta: float, per: int, seed: int, symbols: int | None = None) -> tuple[bool, int]:
    """Whether Φ_x(U_q) ⊕ B̄_η ⊆ U_δx(q) on samples (U_q = ⋃ B̄_η(a_c) over the configurations c reading q), and
    how many points were tried (every symbol, or the first ``symbols``)."""
    from ..extract import extracted_machine

    stepper = stepper_for(model, "float64")
    a = model.target_automaton().replace(initial=model.initial)
    machine, readout = extracted_machine(model)
    configs = torch.from_numpy(machine.decode_code(readout.codes)).long()
    states = torch.from_numpy(readout.states).long()
    gen = torch.Generator().manual_seed(seed)
    u = _cell_samples(stepper, configs, eta, per, gen)
    q = states.repeat_interleave(len(u) // len(states))
    tried, ok = 0, True
    for x in range(a.n_symbols if symbols is None else min(symbols, a.n_symbols)):
        xs = torch.full((len(u),), x, dtype=torch.long)
        image = stepper.step(u.to(stepper.dtype), xs)
        for kind in ("random", "adversarial"):
            e = perturbation(stepper, image, eta, kind, gen)
            v = image.double() + e
            dist = stepper.nearest(v)
            want = torch.as_tensor(np.array(a.transitions[x]))[q]
            ok &= bool((stepper.read(v) == want).all()) and bool((dist <= eta * (1 + 1e-9)).all())
            tried += len(u)
    return ok, tried


@theorem(
    "brandoit.thm3.2",
    f"{SRC}, Theorem 3.2",
    "length independence at η iff the region splits into bounded cells U_q with Φ_x(U_q) ⊕ B̄_η ⊆ U_δx(q)",
    "equivalence",
)
def thm32(thorough: bool) -> str:
    per, symbols = (32, None) if thorough else (8, 6)
    out = []
    for spec in ["flipflop", "T4", "S5"] + (["M11"] if thorough else []):
        model = compile_nfsm(resolve_spec(spec))
        per = 2 if spec == "M11" else per  # 7920 configurations × (2 random + 44 extreme points)
        below, n1 = _cell_inclusions(model, 0.9 / ROOT2, per, 0, symbols)
        above, _ = _cell_inclusions(model, 1.1 / ROOT2, per, 0, symbols)
        require(below, f"{spec}: a cell inclusion fails at 0.9·η*")
        require(not above, f"{spec}: every sampled inclusion holds at 1.1·η* (expected a violation)")
        out.append(f"{spec} ({n1} points)")
    return (
        "NFSM cells U_q = ⋃ B̄_η(a_c): Φ_x(U_q) ⊕ B̄_η ⊆ U_δx(q) on every sampled point (random and extreme) "
        "at 0.9·η*, violated at 1.1·η*: " + ", ".join(out)
    )


def _image_geometry(model, eta: float, words: list[list[int]], per: int) -> tuple[float, float, float]:
    """Over the words: (largest diam Φ_w(U_q) − (diam U_δw(q) − 2η), smallest dist between Φ_w(U_q) and Φ_w(U_q')
    with δ_w(q) ≠ δ_w(q'), 2η), cells U_q = B̄_η(ι(q)) sampled with ``per`` points on their boundary plus ι(q)."""
    stepper = stepper_for(model, "float64")
    a = model.target_automaton().replace(initial=model.initial)
    gen = torch.Generator().manual_seed(0)
    n = a.n_states
    # code points of the states: the exact trajectory of a shortest word to each state
    centers = torch.zeros(n, stepper.dim, dtype=torch.float64)
    seen = {a.initial: stepper.initial(1)[0].double()}
    frontier = [a.initial]
    while frontier:
        nxt = []
        for q in frontier:
            for x in range(a.n_symbols):
                t = int(a.transitions[x][q])
                if t not in seen:
                    seen[t] = stepper.step(seen[q][None].to(stepper.dtype), torch.tensor([x]))[0].double()
                    nxt.append(t)
        frontier = nxt
    qs = sorted(seen)
    for q in qs:
        centers[q] = seen[q]
    g = torch.randn(len(qs), per, stepper.dim, dtype=torch.float64, generator=gen)
    pts = torch.cat([centers[qs][:, None], centers[qs][:, None] + eta * g / g.norm(dim=-1, keepdim=True)], dim=1)
    worst_i, worst_ii = -math.inf, math.inf
    for w in words:
        img = pts.reshape(-1, stepper.dim).to(stepper.dtype)
        for x in w:
            img = stepper.step(img, torch.full((len(img),), x, dtype=torch.long))
        img = img.double().reshape(len(qs), per + 1, -1)
        end = [int(a.run(np.array(w), start=q)[-1]) for q in qs]
        for i in range(len(qs)):
            diam, cell = float(torch.cdist(img[i], img[i]).max()), 2 * eta  # U_q: a ball of radius η
            worst_i = max(worst_i, diam - (cell - 2 * eta))
            for j in range(i + 1, len(qs)):
                if end[i] != end[j]:
                    worst_ii = min(worst_ii, float(torch.cdist(img[i], img[j]).min()))
    return worst_i, worst_ii, 2 * eta


@theorem(
    "brandoit.thm3.3",
    f"{SRC}, Theorem 3.3",
    "along every word: diam Φ_w(U_q) ≤ diam U_δw(q) − 2η (local contraction) and cells heading to different states "
    "stay 2η apart (global separation)",
    "bound",
)
def thm33(thorough: bool) -> str:
    length = 4 if thorough else 2
    out = []
    for spec in ["flipflop", "T4"]:
        a = resolve_spec(spec)
        words = [list(w) for k in range(1, length + 1) for w in itertools.product(range(a.n_symbols), repeat=k)]
        eta = 0.9 / ROOT2
        over, gap, two_eta = _image_geometry(compile_nfsm(a, heads="single"), eta, words, 16)
        require(over <= 1e-12, f"{spec} NFSM: an image is wider than diam U − 2η by {over:.3g}")
        require(gap >= two_eta - 1e-12, f"{spec} NFSM: images of different states only {gap:.3g} < 2η apart")
        out.append(f"{spec} NFSM at 0.9η*: excess width {over:.2g} ≤ 0, separation {gap:.3g} ≥ 2η = {two_eta:.3g}")
    a = resolve_spec("Z5")
    eta = 1e-2
    over, _, _ = _image_geometry(compile_householder(a), eta, [[0], [1], [1, 4]], 16)
    require(over > eta, "the rotation model contracts its cells (expected an isometry)")
    out.append(f"Z5 Householder at η = {eta}: images keep width 2η (excess {over:.3g} > 0: (i) fails, as (R2) does)")
    return f"words up to length {length}: " + "; ".join(out)


@theorem(
    "brandoit.thm4.1.i",
    f"{SRC}, Theorem 4.1 (i)",
    "an affine recurrence with ρ(A_w) ≥ 1 for some word w fails (R2) at every η > 0: it realizes no automaton with "
    "length independence",
    "impossibility",
)
def thm41i(thorough: bool) -> str:
    etas = [1e-2, 1e-3, 1e-4] if thorough else [1e-2, 3e-3]
    cases = [
        ("S5", compile_householder, etas),
        ("Z5", compile_householder, etas),
        ("T4", compile_householder, etas[:1]),
        ("Z5", compile_diagonal, etas[:1]),
    ]
    out = []
    for spec, compiler, tried in cases:
        a = resolve_spec(spec)
        model = compiler(a)
        lengths = []
        for eta in tried:
            res = check_conditions(model, eta, simulate=False)
            require(
                res["verdict"] == "not_robust" and res["theorem"] == "Theorem 4.1 (i)",
                f"{spec} {model.target}: verdict {res['verdict']} at η = {eta}",
            )
            require(res["spectral_radius"] == 1.0 and res["witness"], f"{spec}: no exact witness with ρ = 1")
            w = (
                [a.symbols.index(s) for s in res["witness_prefix"] or []],
                [a.symbols.index(s) for s in res["witness"]],
            )
            horizon = res["horizon"]
            sim = l_max(model, eta=eta, automaton=a, witness=w, cap=4 * horizon, n_words=1, start=16)
            got = sim["l_max"]
            require(
                got is not None and horizon <= got <= 1.05 * horizon + 2,
                f"{spec} at η = {eta}: failing length {got}, expected ≈ r/η = {horizon}",
            )
            lengths.append(f"L({eta:g}) = {got}")
        out.append(f"{spec} {model.target} (w = {res['witness']}, {', '.join(lengths)})")
    return "not_robust with ρ(A_w) = 1 exactly; adversarial η-trajectories on p·w·w·… fail at ≈ r/η: " + "; ".join(out)


@theorem(
    "brandoit.thm4.1.ii",
    f"{SRC}, Theorem 4.1 (ii)",
    "an affine recurrence with ρ(A_w) < 1 for all words realizes at most a definite automaton with length "
    "independence (the shift register realizes every definite one)",
    "impossibility",
)
def thm41ii(thorough: bool) -> str:
    out = []
    # non-definite automata are refused with a witness whose powers never act as a constant map
    for spec in ["flipflop", "parity", "Z3", "T4"]:
        a = resolve_spec(spec)
        try:
            compile_affine(a)
        except ConstructionError as exc:
            require("Theorem 4.1" in str(exc), f"{spec}: refusal does not name Theorem 4.1")
        else:
            raise AssertionError(f"{spec}: compile_affine accepted a non-definite automaton")
        reach = a.reachable()
        w = non_definite_witness(reach)
        img = np.arange(reach.n_states)
        for _ in range(reach.n_states):
            for x in w:
                img = reach.transitions[x][img]
        require(len(set(img.tolist())) > 1, f"{spec}: the witness's power is constant")
    out.append("flipflop, parity, Z3, T4 refused by the shift register (witness powers not constant)")
    # a contracting learned recurrence forgets: set·read^n and reset·read^n end in states that merge
    ff = resolve_spec("flipflop")
    model = learned("mamba", seed=0, vocab=3, eig_range=(0, 1), state_size=4).double()
    eta = 1e-3
    with torch.no_grad():
        sets = [torch.tensor([[ff.symbols.index(s)]]) for s in ("set", "reset")]
        states = [model(s, None, True)[1] for s in sets]
        read = torch.full((1, 1024), ff.symbols.index("read"), dtype=torch.long)
        n = 0
        while n < (2**17 if thorough else 2**15):
            states = [model(read, s, True)[1] for s in states]
            n += read.shape[1]
            gap = float((_flat(states[0]) - _flat(states[1])).norm())
            if gap < 2 * eta:
                break
    require(gap < 2 * eta, f"the contracting model keeps set/reset apart by {gap:.3g} after {n} reads")
    out.append(
        f"a random [0, 1] Mamba layer (ρ < 1) brings set·read^n and reset·read^n within 2η = {2 * eta:g} "
        f"by n = {n} (the flip-flop keeps them apart: no readout separates them at η)"
    )
    # the positive side: definite automata as shift registers, certified robust
    for spec in ["regex:(a|b)*ab", "regex:(a|b)*a(a|b)(a|b)"]:
        model = compile_affine(resolve_spec(spec))
        star = model.summary["robust_radius"]
        res = check_conditions(model, 0.9 * star, cap=2**10 if thorough else 2**8)
        require(res["verdict"] == "robust", f"{spec}: the shift register is not certified at 0.9·η*")
    out.append("definite (a|b)*ab, (a|b)*a(a|b)(a|b): shift registers robust at 0.9·η*")
    return "; ".join(out)


@theorem(
    "brandoit.propF.1",
    f"{SRC}, Proposition F.1",
    "a fixed number of bits at every length needs a bounded η-reachable set U*",
    "bound",
)
def propF1(thorough: bool) -> str:
    length = 2**12 if thorough else 2**8
    ids = np.random.default_rng(0).integers(0, 2, (4, length))
    ff = compile_nfsm(resolve_spec("flipflop"))
    eta = 0.9 / ROOT2
    d = drift(stepper_for(ff), np.minimum(ids, 1) * 2, eta=eta)  # read and set symbols
    require(max(d["max"]) <= eta * (1 + 1e-12) and d["first_error"] is None, "the NFSM leaves its cells")
    z5 = compile_householder(resolve_spec("Z5"))
    eta_h = 0.25 / length
    dh = drift(stepper_for(z5), ids, eta=eta_h)
    half, full = dh["max"][length // 2 - 1], dh["max"][length - 1]
    require(1.9 <= full / half <= 2.1, f"the rotation model's drift does not grow linearly ({half:.3g} → {full:.3g})")
    return (
        f"NFSM flip-flop at η = 0.9·η*: distance to the attractors ≤ η for all t ≤ {length} (U* ⊆ ⋃ B̄_η(a_c), "
        f"bounded: log2 of the cells' count bits); Z5 Householder at η = {eta_h:.3g}: the adversarial drift grows "
        f"linearly ({half:.3g} at t = {length // 2}, {full:.3g} at t = {length}), so U* is unbounded"
    )


@theorem(
    "brandoit.def5.1",
    f"{SRC}, Definition 5.1 and §5",
    "NFSM tables are scan-representable with budget b = d⌈log₂ d⌉ bits and c = O(d) per merge: the parallel scan "
    "of the tables gives the sequential trajectory bit for bit",
    "equivalence",
)
def def51(thorough: bool) -> str:
    from fsa2rnn.nn.ops.table_scan import keyed_table_scan

    rng = np.random.default_rng(0)
    out = []
    for spec in ["S5", "T4", "M11"]:
        model = compile_nfsm(resolve_spec(spec))
        from fsa2rnn.nn import load_model

        net = load_model(model)
        for layer in net.layers:
            bank = layer.key_tables()
            for head, d in enumerate(layer.heads):
                tables = bank[:, head, :d]
                comps = {tuple(range(d))}
                frontier = list(comps)
                while frontier:  # the monoid the head's tables generate (closure under composition)
                    nxt = []
                    for s in frontier:
                        for t in tables.tolist():
                            c = tuple(t[i] for i in s)
                            if c not in comps:
                                comps.add(c)
                                nxt.append(c)
                    frontier = nxt
                    require(len(comps) <= 10**6, f"{spec}: more than 10^6 composites")
                bits = d * math.ceil(math.log2(max(d, 2)))
                require(len(comps) <= 2**bits, f"{spec}: {len(comps)} composites > 2^{bits}")
            keys = torch.from_numpy(rng.integers(0, layer.n_keys, (8, 2**14 if thorough else 2**11)))
            flat = bank[:, 0, : layer.heads[0]]
            h0 = torch.zeros(8, dtype=torch.long)
            ref = keyed_table_scan(flat, keys, h0, impl="naive")
            for impl in ("chunked", "torch"):
                require(torch.equal(keyed_table_scan(flat, keys, h0, impl=impl), ref), f"{spec}: {impl} scan differs")
        out.append(f"{spec} ({len(comps)} composites per head ≤ 2^{bits})")
    return "chunked and log-depth table scans equal the sequential one; " + ", ".join(out)


@theorem(
    "brandoit.propG.1",
    f"{SRC}, Proposition G.1",
    "one NFSM head with d = |Q| attractor indices and σ_x = δ_x realizes any automaton, and its scan is exact",
    "construction",
)
def propG1(thorough: bool) -> str:
    from fsa2rnn.nn import load_model

    from ..extract import extract_and_compare

    autos = [resolve_spec(s) for s in ("T4", "flipflop", "regex:(a|b)*abb")] + _random_automata(
        20 if thorough else 5, 0
    )
    for a in autos:
        model = compile_nfsm(a, heads="single", layers="single")
        require(model.summary["heads"] == 1 and model.summary["layers"] == 1, f"{a.name}: not one head")
        compiled_and_run(model, a, length=512 if thorough else 128)
        require(extract_and_compare(model, a, dtype="float16")["match"], f"{a.name}: tables wrong at float16")
        ids = torch.from_numpy(np.random.default_rng(1).integers(0, a.n_symbols, (4, 300)))
        net = load_model(model)
        require(torch.equal(net.predict_states(ids, impl="naive"), net.predict_states(ids)), "scan ≠ sequential")
    return (
        f"{len(autos)} automata (T4, flip-flop, a regex, random): one head, exact, tables right at float16, "
        "scan = sequential"
    )


@theorem(
    "brandoit.propG.6",
    f"{SRC}, Proposition G.6",
    "stacked NFSM layers, each reading the symbol and the indices of the layer above at the previous step, realize "
    "a cascade (the holonomy decomposition)",
    "construction",
)
def propG6(thorough: bool) -> str:
    out = []
    for spec in ["T4", "flipflop", "even_pairs"] + (["T5"] if thorough else []):
        a = resolve_spec(spec)
        model = compile_nfsm(a, layers="stacked")
        compiled_and_run(model, a, length=512 if thorough else 128)
        n_layers = model.summary["layers"]
        out.append(f"{spec} ({n_layers} layer{'s' * (n_layers != 1)}, heads {model.summary['head_dims']})")
    return "stacked layers, exact and run: " + ", ".join(out)


@theorem(
    "brandoit.exG.7",
    f"{SRC}, Example G.7",
    "a permutation group can be tracked point by point: M11 with 4 heads of 11 indices",
    "construction",
)
def exG7(thorough: bool) -> str:
    a = resolve_spec("M11")
    model = compile_nfsm(a, heads="multi")
    require(model.summary["head_dims"] == [[11, 11, 11, 11]], f"M11 heads {model.summary['head_dims']}")
    evidence = compiled_and_run(model, a, length=1024 if thorough else 256)
    return f"M11 (7920 states): 4 heads × 11 indices, 484 logits per step; {evidence}"


@theorem(
    "brandoit.lemF.11",
    f"{SRC}, Lemma F.11",
    "an automaton is not definite iff some nonempty word acts as an idempotent δ_w that is not constant",
    "equivalence",
)
def lemF11(thorough: bool) -> str:
    autos = _random_automata(200 if thorough else 40, 1) + [resolve_spec(s) for s in ("regex:(a|b)*ab", "flipflop")]
    definite = 0
    for a in autos:
        reach = a.reachable()
        k = definite_degree(TransitionMonoid(reach))
        w = non_definite_witness(reach)
        require((k is None) == (w is not None), f"{a.name}: definiteness and the idempotent witness disagree")
        if w is None:
            definite += 1
            continue
        img = np.arange(reach.n_states)
        for x in w:
            img = reach.transitions[x][img]
        require(
            np.array_equal(img[img], img) and len(set(img.tolist())) > 1, f"{a.name}: δ_w not a non-constant idempotent"
        )
    return f"{len(autos)} automata ({definite} definite): a non-constant idempotent δ_w exists exactly for the others"
