"""η-trajectories (realize/robust.py, realize/steppers.py) and the (R1)–(R3) / Theorem 4.1 checker
(realize/conditions.py, realize/spectral.py).

Oracles: the nn runtime's own sequential recurrence (a stepper with no perturbation must equal it bit for bit),
brute-force enumeration of product codes, products of the stored float matrices along the witness, the automaton's
run, and the closed-form horizon r/η of an isometry."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch

from fsa2rnn.compiler import compile_diagonal, compile_householder, compile_nfsm
from fsa2rnn.compiler.targets.affine.definite_to_affine import compile_affine, robust_radius
from fsa2rnn.fsa import Automaton, resolve_spec
from fsa2rnn.fsa.errors import SpecError
from fsa2rnn.nn import load_model
from fsa2rnn.realize.conditions import check_conditions, trajectory_failing_word
from fsa2rnn.realize.robust import drift, l_max, perturbation, plot_drift, run
from fsa2rnn.realize.spectral import theorem41_branch
from fsa2rnn.realize.steppers import stepper_for

pytestmark = pytest.mark.usefixtures("one_torch_thread")
ROOT2 = math.sqrt(2)


@pytest.fixture(scope="module")
def householder():
    return {spec: compile_householder(resolve_spec(spec)) for spec in ("S5", "Z5", "T4")}


@pytest.fixture(scope="module")
def nfsm():
    return {spec: compile_nfsm(resolve_spec(spec)) for spec in ("S5", "M11", "T4", "flipflop")}


# ---------------------------------------------------------------------------------------------------- steppers
@pytest.mark.parametrize(
    "spec,compiler,kw,dtype,mode",
    [
        ("S5", compile_householder, {}, "float32", "factors"),
        ("S5", compile_householder, {}, "bfloat16", "factors"),
        ("Z5", compile_householder, {}, "bfloat16", "fused"),
        ("T4", compile_householder, {}, "float16", "factors"),
        ("Z5", compile_householder, {"construction": "reflections2"}, "float32", "fused"),
        ("Z7", compile_diagonal, {}, "bfloat16", "fused"),
        ("T4", compile_nfsm, {"layers": "stacked"}, "float16", "fused"),
        ("S5", compile_nfsm, {}, "bfloat16", "fused"),
        ("regex:(a|b)*aba", compile_affine, {}, "float16", "fused"),
    ],
)
def test_unperturbed_trajectory_is_the_runtime_recurrence(spec, compiler, kw, dtype, mode):
    """η = 0: the stepper's Φ_x, applied step by step at the dtype, reads what the model's own sequential run
    predicts, position for position (bf16/fp16 rounding and factor-by-factor products included)."""
    a = resolve_spec(spec)
    model = compiler(a, **kw)
    ids = np.random.default_rng(0).integers(0, a.n_symbols, (4, 300))
    net = load_model(model).to(getattr(torch, dtype))
    opts = {"householder": {"mode": mode, "scan": "sequential"}, "diagonal": {"scan": "sequential"}}
    want = net.predict_states(torch.from_numpy(ids), **opts.get(model.target, {})).numpy()
    got, _, _ = run(stepper_for(model, dtype, mode), ids, eta=0.0)
    assert np.array_equal(got.numpy(), want)


def test_nearest_is_the_distance_to_the_product_code(householder):
    """nearest(): against an enumeration of the product of the three layers' codes of the T4 cascade."""
    st = stepper_for(householder["T4"])
    product = list(itertools.product(*[range(len(b.codes)) for b in st.blocks]))
    points = torch.stack([torch.cat([b.codes[i] for b, i in zip(st.blocks, idx)]) for idx in product])
    gen = torch.Generator().manual_seed(0)
    noise = 0.4 * torch.randn(64, st.dim, generator=gen, dtype=torch.float64)
    h = points[torch.randint(len(points), (64,), generator=gen)] + noise
    assert torch.allclose(st.nearest(h), torch.cdist(h, points).min(1).values)


def _decoded(st, h):
    """What the readout reads before the final table: layer states, head indices, or window digits (the affine
    model's rule: block u decodes to x + 1 if 2·max(u) − 1 > 0, else 0)."""
    if st.target == "affine":
        best, x = h.reshape(len(h), st.net.window, -1).max(-1)
        return torch.where(2 * best - 1 > 0, x + 1, torch.zeros_like(x))
    dec = st.decode(h.to(st.dtype))
    return torch.stack(dec, -1) if isinstance(dec, list) else dec


@pytest.mark.parametrize(
    "spec,compiler,face",
    [
        ("T4", compile_householder, 1 / ROOT2),  # Voronoi cells of one-hot codes
        ("S5", compile_householder, 0.5),  # the hash readout's rounding cubes
        ("Z5", compile_householder, math.sin(math.pi / 5)),  # points on the circle
        ("S5", compile_nfsm, 1 / ROOT2),  # one-hot attractors
        ("regex:(a|b)*ab", compile_affine, 0.5),  # window digits {0, e_a, e_b}
    ],
)
def test_push_is_the_shortest_way_out_of_the_cell(spec, compiler, face):
    """From code points moved a little: along push(h) the readout changes exactly at the cell's face, and no other
    direction leaves the cell sooner (200 random directions)."""
    st = stepper_for(compiler(resolve_spec(spec)))
    gen = torch.Generator().manual_seed(0)
    ids = torch.from_numpy(np.random.default_rng(0).integers(0, len(st.net.compiled.symbols), (16, 5)))
    h = st.initial(16)
    for t in range(ids.shape[1]):  # reachable code points: the states after 16 random words
        h = st.step(h, ids[:, t])
    offset = torch.randn(16, st.dim, generator=gen, dtype=torch.float64)
    base = h.double() + 0.02 * offset / offset.norm(dim=1, keepdim=True)
    before = _decoded(st, base)
    n = st.push(base)
    assert torch.allclose(n.norm(dim=1), torch.ones(16, dtype=torch.float64))
    lo, hi = torch.zeros(16, dtype=torch.float64), torch.full((16,), 2.0, dtype=torch.float64)
    for _ in range(50):  # bisection for the distance at which the readout changes along push(h)
        mid = (lo + hi) / 2
        same = (_decoded(st, base + mid[:, None] * n) == before).reshape(16, -1).all(-1)
        lo, hi = torch.where(same, mid, lo), torch.where(same, hi, mid)
    assert float((hi - face).abs().max()) <= 0.02 + 1e-9  # the face distance, up to the offset from the code point
    for _ in range(200):
        v = torch.randn(16, st.dim, generator=gen, dtype=torch.float64)
        v = v / v.norm(dim=1, keepdim=True)
        inside = _decoded(st, base + (lo - 1e-9)[:, None] * v) == before
        assert bool(inside.reshape(16, -1).all())


@pytest.mark.parametrize(
    "spec,compiler", [("Z5", compile_householder), ("S5", compile_nfsm), ("T4", compile_householder)]
)
def test_face_distance_is_where_the_nearest_code_changes_label(spec, compiler):
    """Block.face: from points near code points, the nearest code point (cdist) keeps its label up to the distance
    the face reports along its normal, and has another label just past it."""
    from fsa2rnn.realize.steppers import Block

    st = stepper_for(compiler(resolve_spec(spec)))
    gen = torch.Generator().manual_seed(2)
    for b in st.blocks:
        assert isinstance(b, Block) and not b.cube
        u = b.codes[torch.randint(0, len(b.codes), (64,), generator=gen)]
        offset = torch.randn(u.shape, generator=gen, dtype=torch.float64)
        u = u + 0.1 * b.radius * offset / offset.norm(dim=1, keepdim=True)
        d, normal = b.face(u)

        def label(v, b=b):
            return b.labels[torch.cdist(v, b.codes).argmin(-1)]

        assert torch.equal(label(u + (d - 1e-9)[:, None] * normal), label(u))
        assert not (label(u + (d + 1e-9)[:, None] * normal) == label(u)).any()


def test_push_picks_the_nearest_face_across_voronoi_and_cube_blocks():
    """A state of a Voronoi block (codes 0 and 2 on a line) and a rounding-cube block: the push leaves through the
    nearer of the two faces (the bisector at 1, the cube's face at 1/2)."""
    from fsa2rnn.realize.steppers import Block, Stepper

    st = Stepper.__new__(Stepper)  # the blocks only: no compiled module behind them
    st.one_hot = False
    st.blocks = [
        Block(0, 1, torch.tensor([[0.0], [2.0]], dtype=torch.float64), torch.tensor([0, 1])),
        Block(1, 2, torch.tensor([[0.0], [1.0]], dtype=torch.float64), torch.tensor([0, 1]), cube=True),
    ]
    h = torch.tensor([[0.7, 0.15], [0.5, 0.05], [0.2, 0.4]], dtype=torch.float64)  # faces at 0.3|0.35, 0.5|0.45, …
    want = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], dtype=torch.float64)
    assert torch.equal(st.push(h), want)


def test_perturbations_stay_in_the_ball_and_point_to_the_nearest_wrong_cell(householder):
    st = stepper_for(householder["S5"])
    h = st.initial(500) + 0.01
    gen = torch.Generator().manual_seed(1)
    e = perturbation(st, h, 0.3, "random", gen)
    r = e.norm(dim=1)
    assert bool((r <= 0.3 + 1e-12).all()) and 0.22 < float(r.mean()) < 0.26  # E|e| = η·D/(D+1) = 0.25 for D = 5
    adv = perturbation(st, h, 0.3, "adversarial", gen)
    assert torch.allclose(adv, 0.3 * st.push(h))
    assert torch.allclose(adv.norm(dim=1), torch.full((500,), 0.3, dtype=torch.float64))
    assert perturbation(st, h, 0.0, "adversarial", gen) is None


def test_random_perturbation_is_seeded(householder):
    kw = dict(eta=0.02, perturbation_kind="random", cap=2**9, n_words=8, seed=3)
    assert l_max(householder["Z5"], **kw) == l_max(householder["Z5"], **kw)


# ---------------------------------------------------------------------------------------------------- Theorem 4.1 (i)
def _fused_product(model, automaton, prefix, cycle):
    """Per layer, A(r_|w|)⋯A(r_1) of the stored float64 matrices along the exact run of p·w, read off the
    float64 stepper's decoded layer states (an independent path from spectral.py's exact graph)."""
    st = stepper_for(model)
    h = st.initial(1)
    for x in prefix:
        h = st.step(h, torch.tensor([x]))
    start = h.clone()
    prods = [torch.eye(layer.width, dtype=torch.float64) for layer in st.net.layers]
    for x in cycle:
        dec = st.decode(h)
        for i, layer in enumerate(st.net.layers):
            row = st.net.layer_rows(i, torch.tensor([x]), dec)
            prods[i] = layer.A_fused[int(row)] @ prods[i]
        h = st.step(h, torch.tensor([x]))
    return prods, start, h


@pytest.mark.parametrize("spec", ["S5", "Z5", "T4"])
def test_compiled_householder_models_are_not_robust_at_any_eta(householder, spec):
    a = resolve_spec(spec)
    model = householder[spec]
    for eta in (1e-12, 1e-6, 1e-3, 0.3):
        res = check_conditions(model, eta, simulate=False)
        assert res["verdict"] == "not_robust" and res["theorem"] == "Theorem 4.1 (i)", res
        assert res["spectral_radius"] == 1.0 and res["witness"]
    prefix = [a.symbols.index(s) for s in res["witness_prefix"]]
    cycle = [a.symbols.index(s) for s in res["witness"]]
    prods, start, end = _fused_product(model, a, prefix, cycle)
    assert torch.equal(start, end)  # Φ_w fixes the configuration the prefix reaches
    rho = max(float(torch.linalg.eigvals(p).abs().max()) for p in prods)
    assert abs(rho - 1.0) < 1e-12
    assert check_conditions(model, 0.0, simulate=False)["verdict"] == "robust"  # exact at η = 0


@pytest.mark.parametrize("spec", ["S5", "Z5", "T4"])
def test_adversarial_eta_1e3_fails_on_the_witness_word_at_the_horizon(householder, spec):
    a = resolve_spec(spec)
    res = check_conditions(householder[spec], 1e-3, simulate=False)
    w = ([a.symbols.index(s) for s in res["witness_prefix"]], [a.symbols.index(s) for s in res["witness"]])
    out = l_max(householder[spec], eta=1e-3, witness=w, cap=2**12, n_words=1)
    # every η-trajectory is right before r/η (‖A‖ ≤ 1); the adversary attains it up to rounding
    assert out["l_max"] is not None and res["horizon"] <= out["l_max"] <= res["horizon"] + 2


@pytest.mark.parametrize("spec", ["S5", "Z5"])
def test_adversarial_eta_1e3_fails_on_random_words_too(householder, spec):
    out = l_max(householder[spec], eta=1e-3, cap=2**12, n_words=8)
    assert out["l_max"] is not None and out["l_max"] < 2**10


@pytest.mark.parametrize("spec", ["S5", "Z5", "T4"])
def test_no_failing_length_at_eta_0_in_float64(householder, spec):
    out = l_max(householder[spec], eta=0.0, perturbation_kind="none", cap=2**11, n_words=8)
    assert out["l_max"] is None and out["l_max_capped"]


def test_drift_grows_by_eta_per_step_and_plots(householder, tmp_path):
    st = stepper_for(householder["Z5"])
    ids = np.random.default_rng(0).integers(0, 5, (4, 400))
    d = drift(st, ids, eta=1e-3)
    assert np.allclose(d["max"][:400], 1e-3 * np.arange(1, 401), rtol=1e-6)  # isometry: the pushes add up
    assert d["first_error"] is None
    path = plot_drift([("Z5", d)], tmp_path / "drift.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


# ---------------------------------------------------------------------------------------------------- NFSM
@pytest.mark.parametrize("spec", ["S5", "M11", "T4", "flipflop"])
def test_nfsm_is_robust_below_eta_star_and_not_above(nfsm, spec):
    a = resolve_spec(spec)
    model = nfsm[spec]
    below = check_conditions(model, 0.9 / ROOT2, simulate=False)
    assert below["verdict"] == "robust" and abs(below["radius"] - 1 / ROOT2) < 1e-12
    out = l_max(model, eta=0.9 / ROOT2, cap=2**12, n_words=8)
    assert out["l_max"] is None and out["l_max_capped"]
    above = check_conditions(model, 1.1 / ROOT2, simulate=False)
    assert above["verdict"] == "not_robust" and above["witness"]
    word = np.array([[a.symbols.index(s) for s in above["witness"]]])
    got, _, _ = run(stepper_for(model), word, eta=1.1 / ROOT2)
    assert int(got[0, -1]) != int(a.run(word, start=np.full(1, model.initial))[0, -1])


@pytest.mark.parametrize(
    "spec,compiler", [("flipflop", compile_nfsm), ("T4", compile_nfsm), ("regex:(a|b)*ab", compile_affine)]
)
def test_the_radius_is_exclusive_robust_one_ulp_below_not_at_it(spec, compiler):
    """η* is a strict bound (η < η*): at η = η* exactly a perturbation reaches the face between two cells, so the
    verdict is not_robust; one ulp below it is robust (the NFSM's half attractor distance, the shift register's
    certified radius)."""
    model = compiler(resolve_spec(spec))
    star = check_conditions(model, 1e-9, simulate=False)["radius"]
    assert check_conditions(model, math.nextafter(star, 0), simulate=False)["verdict"] == "robust"
    at = check_conditions(model, star, simulate=False)
    assert at["verdict"] == "not_robust", at["evidence"]


def test_the_drift_plot_draws_the_random_words_and_the_witness_word_over_the_whole_length(monkeypatch, tmp_path):
    """robust_report's plot: the random words and p·w·w·… (Theorem 4.1 (i)'s witness repeated), each over
    min(cap, PLOT_LENGTH) steps."""
    from fsa2rnn.realize import conditions

    drawn = {}
    monkeypatch.setattr(conditions, "plot_drift", lambda curves, path, title="": drawn.update(curves) or path)
    model = compile_householder(resolve_spec("Z5"))
    out = conditions.robust_report(model, None, eta=0.01, cap=300, plot=str(tmp_path / "d.png"))
    assert out["plot"] == str(tmp_path / "d.png") and out["theorem"] == "Theorem 4.1 (i)"
    assert set(drawn) == {f"{conditions.PLOT_WORDS} random words", "witness p·w·w·…"}
    assert all(len(curve["t"]) == 300 for curve in drawn.values())


def test_simulation_thresholds_are_inclusive_where_documented():
    """The checker's own simulations at their thresholds: Theorem 4.1 (i)'s witness is simulated when its horizon
    ⌈r/η⌉ is exactly the cap (not one above); at η = 0 an NFSM gets no simulation (no perturbation); the L_max cap
    may equal the start length (16), not be below it."""
    from fsa2rnn.realize.conditions import LMAX_START, robust_report

    z5 = compile_householder(resolve_spec("Z5"))
    horizon = check_conditions(z5, 0.01, simulate=False)["horizon"]
    assert check_conditions(z5, 0.01, cap=horizon)["simulation"]["l_max"] == horizon
    assert check_conditions(z5, 0.01, cap=horizon - 1)["simulation"] is None
    witness = check_conditions(z5, 0.01, cap=horizon)
    assert witness["simulation"]["n_words"] == 1 and witness["simulation"]["words"] == "witness"
    assert f"the witness word repeated fail at length {horizon}" in witness["evidence"]
    ff = compile_nfsm(resolve_spec("flipflop"))
    for model in (ff, compile_affine(resolve_spec("regex:(a|b)*ab"))):
        at0 = check_conditions(model, 0.0)
        assert at0["verdict"] == "robust" and at0["simulation"] is None
    random = check_conditions(ff, 0.1, cap=64)
    assert random["simulation"]["n_words"] == 16 and random["simulation"]["l_max"] is None
    assert "16 random words: no failure up to length 64" in random["evidence"]
    assert robust_report(ff, None, eta=0.1, lmax=True, cap=LMAX_START)["l_max_capped"]
    with pytest.raises(SpecError, match="below the start length"):
        robust_report(ff, None, eta=0.1, lmax=True, cap=LMAX_START - 1)


def test_check_conditions_takes_a_compiled_model_or_its_module_and_nothing_else():
    from fsa2rnn.fsa.errors import ModelFileError

    model = compile_nfsm(resolve_spec("flipflop"))
    assert check_conditions(load_model(model), 0.1, simulate=False)["verdict"] == "robust"
    for bad in (object(), torch.nn.Linear(2, 2)):
        with pytest.raises(ModelFileError, match="takes a compiled model"):
            check_conditions(bad, 0.1)


def test_robust_report_adds_lmax_only_when_asked_and_a_witness_search_only_for_theorem_4_1_i():
    from fsa2rnn.realize.conditions import robust_report

    ff = compile_nfsm(resolve_spec("flipflop"))
    plain = robust_report(ff, None, eta=0.1)  # the verdict only: no L_max search, no simulation in the evidence
    assert plain["l_max"] is None and "cap" not in plain and "η-trajectories" not in plain["evidence"]
    above = robust_report(ff, None, eta=1.1 / ROOT2, lmax=True, cap=64)  # not robust by (R3): a witness, not 4.1 (i)
    assert above["witness"] and above["theorem"] == "Theorem 3.1 (R3)" and "l_max_witness" not in above
    assert "the adversarial η-trajectory errs on the witness (length" in above["evidence"]


def test_check_conditions_refuses_a_spec_whose_states_differ_from_the_models():
    a = resolve_spec("flipflop")
    renamed = a.replace(states=tuple(f"{q}'" for q in a.states))
    with pytest.raises(SpecError, match="states or symbols differ"):
        check_conditions(compile_nfsm(a), 0.1, renamed)


@pytest.mark.parametrize(
    "spec,compiler,why",
    [
        ("T4", compile_nfsm, "(R3) fails at η = 0 already"),
        ("T4", compile_householder, "the exact check fails"),
        ("regex:(a|b)*ab", compile_affine, "the exact check fails"),
    ],
)
def test_against_a_near_miss_automaton_every_target_is_not_robust_by_r1_r3(spec, compiler, why):
    """The model checked against its automaton with one transition changed (same names): not robust by (R1)/(R3)
    at any η, before any radius is considered."""
    a = resolve_spec(spec)
    model = compiler(a)
    t = np.array(a.transitions, copy=True)
    d = 2 if compiler is compile_affine else 1  # δ_a(q0) = q0: the changed target of the shift register stays definite
    t[0, a.initial] = (t[0, a.initial] + d) % a.n_states
    res = check_conditions(model, 0.1, a.replace(transitions=t), simulate=False)
    assert res["verdict"] == "not_robust" and res["theorem"] == "Theorem 3.1 (R1, R3)" and why in res["evidence"]


def test_theorem_4_1_i_evidence_names_how_and_the_prefix_and_eta_0_is_the_exact_check():
    z5 = compile_householder(resolve_spec("Z5"))
    res = check_conditions(z5, 0.01, simulate=False)
    assert "(exactly)" in res["evidence"] and "after the prefix" not in res["evidence"]
    at0 = check_conditions(z5, 0.0, simulate=False)
    assert at0["eta"] == 0.0 and at0["verdict"] == "robust" and at0["theorem"] == "Theorem 3.1 at η = 0"
    ep = check_conditions(compile_householder(resolve_spec("even_pairs")), 0.01, simulate=False)
    assert ep["witness_prefix"] and f"after the prefix p = {ep['witness_prefix']}" in ep["evidence"]
    aff = compile_affine(resolve_spec("regex:(a|b)*ab"))
    above = check_conditions(aff, 1.1 * check_conditions(aff, 1e-9, simulate=False)["radius"], simulate=False)
    assert above["witness"] and "the adversarial η-trajectory errs on the witness (length" in above["evidence"]


def _random_configuration_graph(rng, n: int, k: int) -> dict:
    """A deterministic graph like ExactLinearRNN.configuration_graph's: every node reachable from 0, one edge per
    (node, symbol), BFS distances and parents from node 0."""
    from collections import deque

    while True:
        delta = rng.integers(0, n, (n, k))
        dist, parent, queue = {0: 0}, {0: (-1, -1)}, deque([0])
        while queue:
            v = queue.popleft()
            for x in range(k):
                t = int(delta[v, x])
                if t not in dist:
                    dist[t], parent[t] = dist[v] + 1, (v, x)
                    queue.append(t)
        if len(dist) == n:
            edges = np.array([[v, x, delta[v, x]] for v in range(n) for x in range(k)])
            return {"n": n, "edges": edges, "dist": np.array([dist[v] for v in range(n)]),
                    "parent": np.array([parent[v] for v in range(n)]), "delta": delta}  # fmt: skip


def test_shortest_cycle_and_longest_path_against_brute_force():
    """spectral.shortest_cycle: |prefix| + |cycle| least over all nodes on a cycle of usable edges (prefix: the BFS
    path, cycle: back to the node it reaches), checked by walking it; longest_path against every path enumerated on
    acyclic usable edges, and refused (ValueError) on cyclic ones."""
    from fsa2rnn.realize.spectral import longest_path, shortest_cycle

    rng = np.random.default_rng(7)
    cyclic = acyclic = 0
    for _ in range(300):
        g = _random_configuration_graph(rng, int(rng.integers(1, 8)), int(rng.integers(1, 4)))
        usable = rng.random(len(g["edges"])) < rng.uniform(0.2, 0.9)
        ok = {(int(s), int(x)): int(t) for (s, x, t), u in zip(g["edges"], usable) if u}
        succ = {v: [t for (s, _), t in ok.items() if s == v] for v in range(g["n"])}

        def back(v, succ=succ):  # the shortest return to v along usable edges (BFS), or None
            seen, frontier, length = set(), [v], 0
            while frontier:
                length += 1
                nxt = []
                for u in frontier:
                    for t in succ[u]:
                        if t == v:
                            return length
                        if t not in seen:
                            seen.add(t)
                            nxt.append(t)
                frontier = nxt
            return None

        best = min((g["dist"][v] + back(v) for v in range(g["n"]) if back(v) is not None), default=None)
        found = shortest_cycle(g, usable)
        if best is None:
            assert found is None
            acyclic += 1

            def longest(v, succ=succ):  # every path from v, enumerated (the subgraph is acyclic)
                return max((1 + longest(t) for t in succ[v]), default=0)

            assert longest_path(g, usable) == max(longest(v) for v in range(g["n"]))
            continue
        cyclic += 1
        prefix, cycle = found
        assert len(prefix) + len(cycle) == best
        v = 0
        for x in prefix:
            v = int(g["delta"][v, x])
        assert len(prefix) == g["dist"][v]
        u = v
        for x in cycle:
            assert (u, x) in ok
            u = ok[(u, x)]
        assert u == v
        with pytest.raises(ValueError, match="cycle"):
            longest_path(g, usable)
    assert cyclic > 50 and acyclic > 50


# ---------------------------------------------------------------------------------------------------- Theorem 4.1 (ii)
def _suffix_automaton(rng):
    words = {"".join(rng.choice(list("ab"), size=rng.integers(1, 5))) for _ in range(rng.integers(1, 4))}
    return resolve_spec(f"regex:(a|b)*({'|'.join(sorted(words))})")


def test_affine_shift_registers_are_certified_robust_below_their_radius():
    rng = np.random.default_rng(0)
    autos = [_suffix_automaton(rng) for _ in range(50)]
    for a in autos:
        model = compile_affine(a)
        k = model.summary["definite_degree"]
        res = check_conditions(model, 0.9 * robust_radius(k), simulate=False)
        assert res["verdict"] == "robust" and abs(res["radius"] - robust_radius(k)) < 1e-12, res
    model = compile_affine(autos[0])
    eta = 0.9 * model.summary["robust_radius"]
    assert l_max(model, eta=eta, cap=2**10, n_words=16)["l_max"] is None


def test_contracting_models_of_non_definite_targets_are_refused():
    """A shift register checked against a non-definite automaton on the same names (symbol b acting as the
    identity, a non-constant idempotent): Theorem 4.1 (ii) refuses, with a witness whose powers are not constant."""
    a = resolve_spec("regex:(a|b)*ab")
    model = compile_affine(a)
    table = a.transitions.copy()
    table[a.symbols.index("b")] = np.arange(a.n_states)
    other = Automaton(table, states=a.states, symbols=a.symbols, initial=a.initial)
    res = check_conditions(model, 0.01, other, simulate=False)
    assert res["verdict"] == "refused" and res["theorem"] == "Theorem 4.1 (ii)" and res["witness"]
    reach = other.reachable()
    img = np.arange(reach.n_states)
    for _ in range(reach.n_states):
        for s in res["witness"]:
            img = reach.transitions[reach.symbols.index(s)][img]
    assert len(set(img.tolist())) > 1


def test_cascade_of_a_definite_automaton_is_on_branch_ii():
    a = resolve_spec("regex:(a|b)*ab")
    model = compile_householder(a, construction="cascade")
    branch = theorem41_branch(model)
    assert branch["branch"] == "ii" and branch["spectral_radius"] == 0.0
    res = check_conditions(model, 0.5, simulate=True, cap=2**9)  # resets every step: η* = r/1 = 1/√2
    assert res["verdict"] == "robust" and res["simulation"]["l_max"] is None


def test_trajectory_failing_word_is_none_when_robust(nfsm):
    st = stepper_for(nfsm["flipflop"])
    assert trajectory_failing_word(st, resolve_spec("flipflop"), eta=0.5, length=32, n_words=8) is None


def test_bad_eta_and_cap_are_bad_input(householder):
    with pytest.raises(SpecError):
        check_conditions(householder["Z5"], -1.0)
    with pytest.raises(SpecError):
        l_max(householder["Z5"], eta=float("nan"))
    with pytest.raises(SpecError):
        l_max(householder["Z5"], eta=0.1, start=64, cap=32)


def test_theorem41_branch_on_random_cascades_is_consistent_with_definiteness():
    """A compiled model on branch (ii) forgets, so (being exact) its automaton must be definite; a non-definite
    automaton's model is on branch (i), with a witness whose float product has ρ = 1 and fixes its configuration."""
    from fsa2rnn.fsa.classify import definite_degree
    from fsa2rnn.fsa.monoid import TransitionMonoid

    rng = np.random.default_rng(5)
    seen = {"i": 0, "ii": 0}
    autos = [Automaton(rng.integers(0, n, (2, n)), initial=0) for n in rng.integers(2, 5, 12)]
    autos += [resolve_spec(s) for s in ("regex:(a|b)*abb", "regex:(a|b)*a(a|b)(a|b)", "even_pairs")]
    for a in autos:
        model = compile_householder(a, construction="cascade")
        branch = theorem41_branch(model)
        seen[branch["branch"]] += 1
        definite = definite_degree(TransitionMonoid(a.reachable())) is not None
        if branch["branch"] == "ii":
            assert definite
            continue
        w = branch["witness"]
        prods, start, end = _fused_product(model, a, w["prefix"], w["cycle"])
        assert torch.equal(start, end)
        assert abs(float(torch.linalg.eigvals(prods[branch["layer"]]).abs().max()) - 1.0) < 1e-12
    assert seen["i"] and seen["ii"]


def test_an_error_in_a_branch_ii_layer_is_gone_after_the_longest_reset_free_path():
    a = resolve_spec("regex:(a|b)*a(a|b)(a|b)")
    model = compile_householder(a, construction="cascade")
    branch = theorem41_branch(model)
    assert branch["branch"] == "ii"
    st = stepper_for(model)
    ids = torch.from_numpy(np.random.default_rng(0).integers(0, 2, (64, 40)))
    gen = torch.Generator().manual_seed(0)
    clean = st.initial(64)
    for t in range(10):
        clean = st.step(clean, ids[:, t])
    for i, b in enumerate(st.blocks):  # a small error in layer i only, then exact steps
        dirty = clean.clone()
        dirty[:, b.start : b.stop] += 0.1 * torch.randn(64, b.stop - b.start, generator=gen, dtype=torch.float64)
        h, g = clean, dirty
        for t in range(10, 10 + branch["surviving"][i]):
            h, g = st.step(h, ids[:, t]), st.step(g, ids[:, t])
        assert torch.equal(h, g), f"layer {i}: the error outlived {branch['surviving'][i]} steps"
