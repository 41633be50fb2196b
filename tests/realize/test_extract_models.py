"""Extraction from every model, on models whose answer is known: compiled models (exact, any automaton) and tiny
models trained here (a few hundred AdamW steps, seeded); the relation to a target with a witness checked by running
the model and the target independently; the probe's continuations against whole-word runs."""

import numpy as np
import pytest
import torch
from cases import random_automaton

from fsa2rnn.compiler import compile_householder, compile_nfsm
from fsa2rnn.fsa.automaton import Automaton
from fsa2rnn.fsa.minimize import minimize
from fsa2rnn.fsa.relabel import isomorphism
from fsa2rnn.nn.model import SequenceModel
from fsa2rnn.nn.tasks import get_task
from fsa2rnn.realize.compare import compare, compiled_spectra, nfsm_tables, spectrum_distance
from fsa2rnn.realize.extract import extract
from fsa2rnn.realize.moore import MooreMachine, relate, spec_target, task_target
from fsa2rnn.realize.probe import SequenceProbe


@pytest.fixture(scope="module", autouse=True)
def _one_thread_for_the_module():
    """One torch thread for the whole module, the trained-model fixtures included (tiny tensors; several threads
    only contend on a busy machine)."""
    n = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)


def train_tiny(task_name, layer, layer_args, *, steps, lengths, seed, d_model, lr, mlp_ratio=0.0, batch=32):
    """A plain seeded AdamW loop on the task's training distribution; the model (eval mode) and its sequence
    accuracy on 256 held-out words of the longest training length."""
    task = get_task(task_name).with_labels("dense")  # every position judged: the state after each symbol
    torch.manual_seed(seed)
    model = SequenceModel(task.vocab_size, task.n_classes, layer, 1, d_model, layer_args=layer_args,
                          mlp_ratio=mlp_ratio)  # fmt: skip
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    gen = torch.Generator().manual_seed(seed)
    model.train()
    for _ in range(steps):
        b = task.sample(batch, lengths, gen)
        loss = torch.nn.functional.cross_entropy(model(b.inputs)[b.mask], b.targets[b.mask])
        opt.zero_grad()
        loss.backward()
        opt.step()
    model.eval()
    b = task.sample(256, lengths[1], torch.Generator().manual_seed(99), train=False)
    seq = float(((model.predict_states(b.inputs) == b.targets) | ~b.mask).all(1).float().mean())
    return model, task, seq


@pytest.fixture(scope="module")
def parity_deltanet():
    return train_tiny("grazzi:parity", "deltanet", {"heads": 1, "head_dim": 4, "beta_range": (0, 2), "form": "plain",
                                                      "conv_bias": True},
                      steps=200, lengths=(2, 16), seed=0, d_model=8, lr=1e-2)  # fmt: skip


@pytest.fixture(scope="module")
def parity_nfsm():
    return train_tiny("grazzi:parity", "nfsm", {"heads": [2]}, steps=150, lengths=(2, 10), seed=2, d_model=16,
                      lr=3e-2, batch=64)  # fmt: skip


@pytest.fixture(scope="module")
def flipflop_nfsm():
    return train_tiny("flipflop", "nfsm", {"heads": [2]}, steps=200, lengths=(3, 20), seed=2, d_model=16,
                      lr=1e-2, mlp_ratio=4.0)  # fmt: skip


def _word_problem(a: Automaton) -> MooreMachine:
    return MooreMachine(a, np.arange(a.n_states), a.states)


# ---------------------------------------------------------------------------------------------------- known answers
@pytest.mark.parametrize("compiler", ["nfsm", "householder"])
def test_compiled_random_automata_extract_to_their_minimal_forms(compiler):
    """20 random 3–6-state automata: the extracted machine (outputs: the model's states) is isomorphic to the
    reachable part; relabelled by the accepting bit, its Moore quotient is the minimal DFA (fsa's minimizer)."""
    compile_fn = compile_nfsm if compiler == "nfsm" else compile_householder
    for seed in range(20):
        rng = np.random.default_rng(seed)
        a = random_automaton(int(rng.integers(3, 7)), int(rng.integers(2, 4)), 1000 + seed)
        model = compile_fn(a)
        ex = extract(model, length=8, words=16, suffixes=4, suffix_length=3, seed=seed)
        assert ex.sample_based == (compiler == "householder")
        reach = a.reachable()
        m = ex.machine.minimal(a.initial)  # the model outputs nothing at the start: give it the target's label
        names = [a.state_index(s) for s in reach.states]
        assert isomorphism(m.automaton, reach.replace(accepting=None), labels=(m.labels, names)) is not None
        assert relate(ex.machine, _word_problem(a))["relation"] == "isomorphic"
        acc = a.accepting.astype(np.int64)
        labels = ex.machine.labels
        by_accept = MooreMachine(ex.machine.automaton, np.where(labels >= 0, acc[np.maximum(labels, 0)], labels),
                                 ("reject", "accept"))  # fmt: skip
        m = by_accept.minimal(int(acc[a.initial]))
        dfa = minimize(a)
        assert isomorphism(m.automaton.replace(accepting=np.flatnonzero(m.labels == 1).tolist()), dfa) is not None
        assert ex.agreement["sequence"] == [1.0, 1.0]


def test_from_compiled_householder_extracts_by_its_delta_product_states():
    for spec in ("parity", "S3", "Z5"):
        from fsa2rnn.fsa import resolve_spec

        a = resolve_spec(spec)
        net = SequenceModel.from_compiled(compile_householder(a))
        ex = extract(net, symbols=a.symbols, classes=a.states, length=12, words=32, suffixes=8, suffix_length=4)
        assert ex.sample_based and relate(ex.machine, _word_problem(a))["relation"] == "isomorphic"


def test_sparse_sample_fills_unseen_transitions_by_probing():
    """Eight words of length 3 visit every state of S3 (6 symbols) but leave most of its 36 transitions unseen;
    probing them (a nearest-code assignment by class and signature) still gives S3 exactly."""
    from fsa2rnn.fsa import resolve_spec

    a = resolve_spec("S3")
    ex = extract(compile_householder(a), length=3, words=8, suffixes=8, suffix_length=4)
    assert ex.details["filled"] > 18
    assert relate(ex.machine, _word_problem(a))["relation"] == "isomorphic"


# ---------------------------------------------------------------------------------------------------- trained models
def test_trained_nfsms_extract_to_their_targets(parity_nfsm, flipflop_nfsm):
    for model, task, seq in (parity_nfsm, flipflop_nfsm):
        assert seq == 1.0  # these seeds learn the task (else the check below would say nothing)
        ex = extract(model, symbols=task.automaton.symbols, classes=task.classes, length=20, words=64)
        assert not ex.sample_based and ex.minimal.n_states == 2
        assert relate(ex.machine, task_target(task))["relation"] == "isomorphic"
        assert ex.agreement["sequence"] == [1.0, 1.0]  # exact tables: right at 10× the length too


def test_trained_deltanet_parity_is_parity_with_eigenvalue_minus_one(parity_deltanet):
    model, task, seq = parity_deltanet
    assert seq == 1.0
    report = compare(model, task, length=16, words=64, lmax=False)
    ex = report["extracted"]
    assert ex["sample_based"] and "sample-based" in ex["method"]
    assert ex["n_states"] == 2 and ex["relation"] == "isomorphic"
    assert ex["agreement"]["sequence"][0] == 1.0
    row = next(r for r in report["spectra"] if r["symbol"] == "1" and r["layer"] == 1)
    assert row["compiled"] == [[-1.0, 0.0]]  # the compiled parity: A(1) = −1
    trained = np.array([complex(*p) for p in row["trained"]])
    assert np.abs(trained + 1).min() < 0.05
    assert row["distance"] == pytest.approx(np.abs(trained + 1).min())
    assert report["monoid"]["same_size"] and report["monoid"]["extracted"]["is_group"]


def test_wrong_target_gives_a_witness_that_really_distinguishes(parity_deltanet, parity_nfsm):
    """Parity-trained models against "count the 1s mod 3" (a spec over symbols 0 and 1): none, and the witness
    words are checked here by running the model and the spec independently."""
    mod3 = Automaton([[0, 1, 2], [1, 2, 0]], states=["0", "1", "2"], symbols=["0", "1"], initial=0, name="mod3")
    rng = np.random.default_rng(5)
    for model, task, _ in (parity_deltanet, parity_nfsm):
        ex = extract(model, symbols=task.automaton.symbols, classes=task.classes, length=10, words=64)
        target, labelled = spec_target(mod3, task.classes)
        assert not labelled  # the spec's states are not named like the model's classes
        rel = relate(ex.machine, target, labels_compared=labelled, predict=ex.predict)
        assert rel["relation"] == "none" and rel["witness"]["checked"] is True
        w1, w2 = ([mod3.symbol_index(x) for x in w] for w in rel["witness"]["words"])
        assert mod3.final_state(w1) != mod3.final_state(w2)  # the spec distinguishes them ...
        for _ in range(20):  # ... and the model outputs the same after both, whatever follows
            s = rng.integers(0, 2, 6).tolist()
            p1 = model.predict_states(torch.tensor([w1 + s]))[0, len(w1) :]
            p2 = model.predict_states(torch.tensor([w2 + s]))[0, len(w2) :]
            assert torch.equal(p1, p2)


def test_wrong_target_with_the_models_classes_gives_an_output_witness(parity_nfsm):
    """A spec over the model's class names ("even"/"odd": the last symbol read) is compared by output."""
    model, task, _ = parity_nfsm
    last = Automaton([[0, 0], [1, 1]], states=["even", "odd"], symbols=["0", "1"], initial=0)
    ex = extract(model, symbols=task.automaton.symbols, classes=task.classes, length=10, words=64)
    target, labelled = spec_target(last, task.classes)
    rel = relate(ex.machine, target, labels_compared=labelled, predict=ex.predict)
    assert labelled and rel["relation"] == "none" and rel["witness"]["kind"] == "output"
    w = [last.symbol_index(x) for x in rel["witness"]["words"][0]]
    got = int(model.predict_states(torch.tensor([w]))[0, -1])
    assert task.classes[got] != last.states[last.final_state(w)]


def test_nfsm_tables_match_the_compiled_ones_up_to_relabeling(flipflop_nfsm):
    model, task, _ = flipflop_nfsm
    symbols = tuple(task.automaton.symbols)
    same = nfsm_tables(model, compile_nfsm(task.automaton, heads="single", layers="single"), symbols)
    assert same["equal_up_to_relabeling"] and same["matching"] == [[0, 0]]
    other = Automaton([[1, 0], [0, 1], [0, 1]], states=["0", "1"], symbols=list(symbols), initial=0)
    assert not nfsm_tables(model, compile_nfsm(other, heads="single", layers="single"), symbols)[
        "equal_up_to_relabeling"
    ]


# ---------------------------------------------------------------------------------------------------- pieces
def test_monoid_comparison_tells_same_size_monoids_apart_by_aperiodicity():
    """x = [1, 0, 0] generates {1, x, x²} with the group {x, x²} ≅ Z2 inside (not aperiodic); y = [1, 2, 2]
    generates {1, y, y²}, aperiodic; neither is a group, both have 3 elements: same size, not the same kind — in
    either order, and each is the same kind as itself."""
    from fsa2rnn.realize.compare import monoid_comparison
    from fsa2rnn.realize.moore import MooreMachine

    def machine(row):
        return MooreMachine(Automaton(np.array([row]), initial=0), np.arange(3), ("a", "b", "c"))

    x, y = machine([1, 0, 0]), machine([1, 2, 2])
    for a, b in ((x, y), (y, x)):
        res = monoid_comparison(a, b)
        assert res["same_size"] and not res["same_kind"], res
        assert res["extracted"]["is_aperiodic"] != res["target"]["is_aperiodic"]
        assert not res["extracted"]["is_group"] and not res["target"]["is_group"]
    assert monoid_comparison(x, x)["same_kind"] and monoid_comparison(y, y)["same_kind"]


def test_steady_transition_is_the_transition_inside_a_run_of_the_symbol():
    """A(x) with the short convolution full of x equals ΔS_m · ΔS_{m−1}^{-1} of two forward runs of x^m from
    different start states (the op's own recurrence, not transition())."""
    torch.manual_seed(0)
    net = SequenceModel(3, 2, "deltanet", 1, 8, layer_args={"heads": 1, "head_dim": 4, "value_dim": 4},
                        mlp_ratio=0).double()  # fmt: skip
    layer, block = net.blocks[0].layer, net.blocks[0]
    x = block.norm1(net.embedding.weight[1:2])  # (1, d)
    m = layer.conv.kernel_size
    seq = x[:, None, :].expand(1, m, -1)
    s0 = torch.randn(2, 1, 4, 4, dtype=torch.float64)
    ends = []
    for length in (m - 1, m):
        _, st_a = layer(seq[:, :length], {"S": s0[:1], "conv": None}, True)
        _, st_b = layer(seq[:, :length], {"S": s0[1:], "conv": None}, True)
        ends.append((st_a["S"] - st_b["S"])[0, 0])
    want = ends[1] @ torch.linalg.inv(ends[0])
    got = layer.transition(x, steady=True)[0, 0]
    assert torch.allclose(got, want, atol=1e-9)
    assert not torch.allclose(layer.transition(x)[0, 0], want, atol=1e-6)  # no history is another matrix


@pytest.mark.parametrize(
    "layer,args",
    [
        ("deltanet", {"heads": 2, "head_dim": 4}),
        ("mamba", {"state_size": 4}),
        ("lstm", {}),
        ("transformer", {"heads": 2}),
        ("dlr", {"state_size": 4}),
        ("mamba-minus", {"state_size": 4}),
        ("aussm", {"state_size": 3}),
        ("pdssm", {"state_size": 4}),
    ],
)
def test_probe_continuations_match_whole_words(layer, args):
    """The probe's signatures (continuations from the carried, tiled state) equal predict_states on the whole
    words prefix·suffix."""
    torch.manual_seed(1)
    net = SequenceModel(3, 3, layer, 2, 8, layer_args=args)
    rng = np.random.default_rng(0)
    ids, sufs = rng.integers(0, 3, (5, 4)), rng.integers(0, 3, (3, 2))
    _, labels, sig = SequenceProbe(net).walk(ids, sufs)
    assert np.array_equal(labels, net.predict_states(torch.from_numpy(ids)).numpy())
    for t in range(5):
        for j in range(3):
            words = np.concatenate([ids[:, :t], np.broadcast_to(sufs[j], (5, 2))], axis=1)
            want = net.predict_states(torch.from_numpy(words)).numpy()[:, t:]
            assert np.array_equal(sig[:, t, 2 * j : 2 * j + 2], want)


def test_words_probe_of_a_compiled_cascade_matches_whole_words():
    """The batched, padded continuations of a compiled cascade equal its predictions on each whole word, and
    describe() equals stepping each word on its own."""
    from fsa2rnn.nn import load_model
    from fsa2rnn.realize.probe import compiled_probe

    a = random_automaton(5, 2, 1003)
    net = load_model(compile_householder(a))
    probe = compiled_probe(net)
    rng = np.random.default_rng(0)
    ids, sufs = rng.integers(0, 2, (4, 5)), rng.integers(0, 2, (3, 2))
    hidden, labels, sig = probe.walk(ids, sufs)
    assert np.array_equal(labels, a.run(ids))
    for t in range(6):
        for j in range(3):
            words = np.concatenate([ids[:, :t], np.broadcast_to(sufs[j], (4, 2))], axis=1)
            assert np.array_equal(sig[:, t, 2 * j : 2 * j + 2], a.run(words)[:, t:])
    words = [[1], [0, 1, 1], [1, 1], [0, 0, 0, 1]]
    h, lab, s = probe.describe(words, sufs)
    for i, w in enumerate(words):
        h1, lab1, _ = probe.step(probe.initial(1), np.array([w]))
        assert np.allclose(h[i], h1[0]) and lab[i] == lab1[0, -1] == a.run(np.array(w))[-1]
        assert np.array_equal(s[i], probe.walk(np.array([w]), sufs)[2][0, -1])


def test_compiled_spectra_are_the_theorys():
    """Parity: A(1) = −1, A(0) = 1; Z5 by rotations: e^{±2πi/5} for the generator."""
    from fsa2rnn.fsa import resolve_spec

    spec, _ = compiled_spectra(compile_householder(resolve_spec("parity")))
    assert np.allclose(spec["1"], [-1]) and np.allclose(spec["0"], [1])
    z5 = resolve_spec("Z5:gen")
    spec, _ = compiled_spectra(compile_householder(z5))
    w = np.exp(2j * np.pi / 5)
    assert spectrum_distance(spec[z5.symbols[0]], [w, w.conjugate()]) < 1e-12
    _, why = compiled_spectra(compile_nfsm(z5))
    assert "no linear transition" in why
    # padded with 1: the unpaired 1j counts (|1j − 1| = √2); without padding it is ignored
    assert spectrum_distance([1, -1, 1j], [-1]) == pytest.approx(2**0.5)
    assert spectrum_distance([1, -1, 1j], [-1], pad=False) == 0
    assert spectrum_distance([0.5], [1, -1], pad=False) == pytest.approx(0.5)
    assert spectrum_distance([-0.92, 1.0], [1.0]) == pytest.approx(1.92)  # the −0.92 with no compiled partner


@pytest.mark.parametrize("near_one", [1.0, 1.0 - 1e-7, 1.0 + 1e-7])
def test_each_compiled_eigenvalue_is_shown_with_its_closest_trained_partner(near_one):
    """Matchings of equal total gap: the compiled 1 pairs with a trained 1, the padding takes the far −0.91 (the
    order of equal floats does not decide it)."""
    from fsa2rnn.realize.compare import spectra_rows

    trained = [{"symbol": "a", "layer": 1, "head": 0, "eigenvalues": [-0.9098, near_one, 1.0, 1.0]}]
    (row,) = spectra_rows(trained, {"a": np.array([1.0 + 0j])})
    assert row["matched"][0][0] == pytest.approx(1.0, abs=1e-6)
    assert sorted(p[0] for p in row["unpaired"])[0] == pytest.approx(-0.9098)
    assert row["core_distance"] == pytest.approx(0.0, abs=1e-6) and row["distance"] == pytest.approx(1.9098)


def test_padded_spectrum_distance_against_brute_force():
    """The padded matching against every permutation: least total gap, and that matching's largest gap."""
    import itertools

    rng = np.random.default_rng(3)
    for _ in range(30):
        n, m = rng.integers(1, 5, 2)
        a = rng.normal(size=n) + 1j * rng.normal(size=n)
        b = rng.normal(size=m) + 1j * rng.normal(size=m)
        k = max(n, m)
        pa, pb = (np.concatenate([x, np.ones(k - len(x))]) for x in (a, b))
        best = min(itertools.permutations(range(k)), key=lambda p: np.abs(pa - pb[list(p)]).sum())
        assert spectrum_distance(a, b) == pytest.approx(np.abs(pa - pb[list(best)]).max())


# ---------------------------------------------------------------------------------------------------- fsa2rnn compare
def write_run(model, task_name, train_length, path):
    """A training-run directory (nn/train's format: config.json and model.safetensors) holding ``model``."""
    import json

    from fsa2rnn.nn.train.checkpoint import save_checkpoint
    from fsa2rnn.nn.train.config import TrainConfig, run_record

    task = get_task(task_name)
    cfg = TrainConfig(task=task_name, model=model.config.layer, train_length=train_length, d_model=model.config.d_model)
    path.mkdir()
    (path / "config.json").write_text(json.dumps(run_record(cfg, model.config, task)))
    header = {"model": model.config.to_dict(), "task": {"name": task.name}, "step": 1, "finished": True}
    save_checkpoint(path / "model.safetensors", model, header)
    return path


@pytest.fixture(scope="module")
def parity_run(parity_deltanet, tmp_path_factory):
    return write_run(parity_deltanet[0], "grazzi:parity", "2..16", tmp_path_factory.mktemp("runs") / "parity")


def _cli(*args):
    from click.testing import CliRunner

    from fsa2rnn.cli.main import main

    return CliRunner().invoke(main, ["compare", *map(str, args)])


def _one_line_error(res, phrase):
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and phrase in lines[0], res.stderr
    assert "Traceback" not in res.output


def test_compare_cli_json_contract_and_plot(parity_run, tmp_path):
    import json

    plot = tmp_path / "spectra.png"
    res = _cli(parity_run, "--json", "--words", 64, "--cap", 64, "--samples", 32, "--plot", plot)
    assert res.exit_code == 0, res.output
    r = json.loads(res.stdout)
    ex = r["extracted"]
    assert {"method", "n_states", "agreement", "relation", "witness"} <= set(ex)
    assert ex["relation"] == "isomorphic" and ex["n_states"] == 2 and ex["witness"] is None
    assert ex["agreement"]["lengths"] == [16, 160]
    row = r["spectra"][0]
    assert {"symbol", "layer", "head", "trained", "compiled", "distance"} <= set(row)
    assert r["monoid"]["extracted"]["size"] == r["monoid"]["target"]["size"] == 2
    assert [e["dtype"] for e in r["l_max"]["trained"]] == ["float64", "float32", "bfloat16"]
    assert all(e["capped"] for e in r["l_max"]["compiled"])  # the compiled parity holds to the cap
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    text = _cli(parity_run, "--words", 32, "--no-lmax")
    assert text.exit_code == 0 and "relation to the target (parity, 2 states): isomorphic" in text.stdout
    assert "-1.0000 ← -0.99" in text.stdout  # the compiled −1 beside its trained partner


def test_compare_cli_wrong_spec_and_bad_input(parity_run, tmp_path):
    import json

    mod3 = tmp_path / "mod3.json"
    mod3.write_text(json.dumps({"name": "ones-mod-3", "states": ["0", "1", "2"], "symbols": ["0", "1"],
                                "initial": "0", "transitions": {"0": [0, 1, 2], "1": [1, 2, 0]}}))  # fmt: skip
    res = _cli(parity_run, "--spec", mod3, "--no-lmax", "--words", 32, "--json")
    assert res.exit_code == 0, res.output
    ex = json.loads(res.stdout)["extracted"]
    assert ex["relation"] == "none" and ex["witness"]["checked"] is True
    # bad input: another alphabet, a compiled model of another automaton, a run without a model, a bad plot path
    _one_line_error(_cli(parity_run, "--spec", "flipflop"), "alphabet")
    from fsa2rnn.fsa import resolve_spec

    other = tmp_path / "mod3.safetensors"
    compile_householder(resolve_spec(str(mod3))).save(other)
    _one_line_error(_cli(parity_run, "--compiled", other), "another automaton")
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "config.json").write_text((parity_run / "config.json").read_text())
    _one_line_error(_cli(empty), "no checkpoint")
    _one_line_error(_cli(tmp_path / "nothing"), "not a training run")
    _one_line_error(_cli(parity_run, "--plot", tmp_path / "missing" / "x.png"), "does not exist")
    assert not (tmp_path / "missing").exists()


# ---------------------------------------------------------------------------------------------------- verify RUN --eta
def test_trained_deltanet_is_not_robust_and_fails_under_eta(parity_deltanet, tmp_path):
    """Theorem 4.1 (i) from the trained A(x): ρ(A_w) = 1 on a short word, so not robust at any η > 0; the
    perturbed trajectories fail at a finite length; at η = 0 the perturbed predictor is the model itself."""
    import json

    from fsa2rnn.nn.lmax import failing_length
    from fsa2rnn.realize.trained_robust import perturbed_predictor, symbol_matrices, trained_conditions

    model, task, _ = parity_deltanet
    res = trained_conditions(model, task, 0.01)
    assert res["verdict"] == "not_robust" and res["theorem"] == "Theorem 4.1 (i)"
    blocks = symbol_matrices(model, tuple(task.automaton.symbols))
    word = [task.automaton.symbol_index(x) for x in res["witness"]]
    prod = np.eye(blocks[0].shape[-1])[None]
    for x in word:
        prod = blocks[0][x] @ prod
    assert np.abs(np.linalg.eigvals(prod)).max() == pytest.approx(1, abs=1e-6)
    ids = np.random.default_rng(0).integers(0, 2, (8, 40))
    got, _ = perturbed_predictor(model, 0.0)(ids, None)
    assert np.array_equal(got, model.predict_states(torch.from_numpy(ids)).numpy())
    l_max, capped = failing_length(perturbed_predictor(model, 0.2, seed=1), task.word_source(), start=16, cap=512,
                                   n_words=16)  # fmt: skip
    assert l_max is not None and not capped
    run = write_run(model, "grazzi:parity", "2..16", tmp_path / "dn")
    from click.testing import CliRunner

    from fsa2rnn.cli.main import main

    res = CliRunner().invoke(main, ["verify", str(run), "--eta", "0.05", "--lmax", "--cap", "256", "--json",
                                    "--length", "16", "--words", "32"])  # fmt: skip
    assert res.exit_code == 1, res.output
    robust = json.loads(res.stdout)["robust"]
    assert robust["verdict"] == "not_robust" and robust["l_max"] is not None
    bad = CliRunner().invoke(main, ["verify", str(run), "--eta", "0.05", "--perturbation", "adversarial"])
    _one_line_error(bad, "no code points")


def test_trained_nfsm_is_robust_below_its_attractors_radius(parity_nfsm, tmp_path):
    from click.testing import CliRunner

    from fsa2rnn.cli.main import main
    from fsa2rnn.nn.lmax import failing_length
    from fsa2rnn.realize.trained_robust import ETA_STAR_ONE_HOT, perturbed_predictor, trained_conditions

    model, task, _ = parity_nfsm
    assert trained_conditions(model, task, 0.5)["verdict"] == "robust"
    assert trained_conditions(model, task, 0.75)["verdict"] == "not_robust"
    below = failing_length(perturbed_predictor(model, ETA_STAR_ONE_HOT * 0.99, seed=2), task.word_source(),
                           start=16, cap=256, n_words=16)  # fmt: skip
    assert below == (None, True)  # rounding restores every attractor
    above, _ = failing_length(perturbed_predictor(model, 1.5, seed=2), task.word_source(), start=16, cap=256,
                              n_words=16)  # fmt: skip
    assert above is not None
    run = write_run(model, "grazzi:parity", "2..10", tmp_path / "nfsm")
    res = CliRunner().invoke(main, ["verify", str(run), "--eta", "0.5", "--length", "200", "--words", "16"])
    assert res.exit_code == 0 and "verdict: robust" in res.stdout, res.output


def test_contracting_layers_are_refused_for_a_non_definite_target():
    from fsa2rnn.realize.trained_robust import trained_conditions

    torch.manual_seed(0)
    task = get_task("grazzi:parity")
    net = SequenceModel(task.vocab_size, task.n_classes, "mamba", 1, 8, layer_args={"state_size": 4})
    res = trained_conditions(net, task, 0.1)
    assert res["verdict"] == "refused" and res["theorem"] == "Theorem 4.1 (ii)" and res["spectral_radius"] < 1
    lstm = SequenceModel(task.vocab_size, task.n_classes, "lstm", 1, 8)
    assert trained_conditions(lstm, task, 0.1)["verdict"] == "refused"


def test_l_max_side_by_side_for_both_compiled_paths(flipflop_nfsm):
    """The compiled model's L_max through its SequenceModel (one Householder layer) and through the runtime module
    (a diagonal cascade, rerun on prefixes): exact models hold to the cap at every dtype, as the trained NFSM does."""
    from fsa2rnn.compiler import compile_diagonal
    from fsa2rnn.realize.compare import l_max_table

    model, task, _ = flipflop_nfsm
    for compiled in (compile_householder(task.automaton), compile_diagonal(task.automaton)):
        table = l_max_table(model, task, compiled, start=16, cap=64, n_words=8)
        assert [e["dtype"] for e in table["compiled"]] == ["float64", "float32", "bfloat16"]
        assert all(e["l_max"] is None and e["capped"] for e in table["compiled"] + table["trained"]), table
