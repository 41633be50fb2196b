"""realize/compare.py on small cases with known answers: spectra recomputed here with numpy from the layers'
transitions, the figure read back from its matplotlib Axes, the report of `compare` on models that are compiled
ones (so the extracted machine, the tables and the monoids are known), hand-worked agreement summaries and the
monoid limit probed on both sides. Fast (no training)."""

import importlib
import inspect
import itertools

import numpy as np
import pytest
import torch

from fsa2rnn.compiler import compile_householder, compile_nfsm
from fsa2rnn.fsa import resolve_spec
from fsa2rnn.fsa.automaton import Automaton
from fsa2rnn.fsa.errors import ConstructionError, SpecError
from fsa2rnn.nn.model import SequenceModel
from fsa2rnn.nn.tasks import get_task
from fsa2rnn.realize.moore import MooreMachine

cmp = importlib.import_module("fsa2rnn.realize.compare")  # the module (the package exports the function)

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def same_multiset(a, b, tol=1e-6):
    """Two small multisets of complex numbers are equal up to ``tol`` (every pairing tried)."""
    a, b = np.asarray(a, dtype=complex).ravel(), np.asarray(b, dtype=complex).ravel()
    if len(a) != len(b):
        return False
    return min(np.abs(a - b[list(p)]).max(initial=0.0) for p in itertools.permutations(range(len(b)))) < tol


# ---------------------------------------------------------------------------------------------------- spectra
def layer_input_at_end_of_run(model, layer_index, k, m=16):
    """The input of block ``layer_index``'s layer at the last position of the words x^m (x = 0..k−1), the m = 16
    of the module's docstring, read by a hook of its own."""
    got = []
    hook = model.blocks[layer_index].layer.register_forward_pre_hook(lambda _m, args: got.append(args[0]))
    try:
        with torch.no_grad():
            model(torch.arange(k)[:, None].expand(k, m))
    finally:
        hook.remove()
    return got[0][:, -1]


def test_trained_spectra_of_a_two_layer_deltaproduct_are_the_eigenvalues_of_each_heads_transition():
    """DeltaProduct (two reflections per step), two layers, two heads of 4 × 4: for every symbol, layer and head,
    the eigenvalues of A(x) inside a run of x (the steady transition), the second layer's read at the end of x^16;
    numpy's eigvals of each head's block."""
    torch.manual_seed(0)
    args = {"heads": 2, "head_dim": 4, "n_h": 2}
    net = SequenceModel(3, 2, "deltaproduct", 2, 8, layer_args=args, mlp_ratio=0).eval()
    symbols = ("a", "b", "c")
    rows = cmp.trained_spectra(net, symbols)
    assert [(r["symbol"], r["layer"], r["head"]) for r in rows] == [
        (s, layer, h) for layer in (1, 2) for s in symbols for h in (0, 1)
    ]
    for li in range(2):
        layer = net.blocks[li].layer
        with torch.no_grad():
            x = layer_input_at_end_of_run(net, li, 3)
            a = layer.transition(x, steady=True).double().numpy()  # (3, 2, 4, 4)
            plain = layer.transition(x).double().numpy()
        for r in (r for r in rows if r["layer"] == li + 1):
            s = symbols.index(r["symbol"])
            assert same_multiset(r["eigenvalues"], np.linalg.eigvals(a[s, r["head"]]))
            # inside a run, not the transition without history (the conv window full of x)
            assert not same_multiset(r["eigenvalues"], np.linalg.eigvals(plain[s, r["head"]]), tol=1e-4)
    # the second layer's input is taken at the end of the run: elsewhere in it the spectra differ
    x1 = layer_input_at_end_of_run(net, 1, 3, m=15)
    with torch.no_grad():
        other = net.blocks[1].layer.transition(x1, steady=True).double().numpy()
    r = next(r for r in rows if r["layer"] == 2 and r["symbol"] == "b" and r["head"] == 0)
    assert not same_multiset(r["eigenvalues"], np.linalg.eigvals(other[1, 0]), tol=1e-6)


@pytest.mark.parametrize("layer", ["mamba", "aussm"])
def test_trained_spectra_of_diagonal_layers_are_all_their_entries_in_one_row(layer):
    """Mamba-style (real) and AUSSM (complex): one row per symbol, head 0, the D·N diagonal entries of A(x)."""
    torch.manual_seed(1)
    net = SequenceModel(2, 2, layer, 1, 8, layer_args={"state_size": 3}, mlp_ratio=0).eval()
    rows = cmp.trained_spectra(net, ["0", "1"])
    assert [(r["symbol"], r["layer"], r["head"]) for r in rows] == [("0", 1, 0), ("1", 1, 0)]
    lay = net.blocks[0].layer
    with torch.no_grad():
        x = layer_input_at_end_of_run(net, 0, 2)
        t = lay.transition(x, steady=True) if getattr(lay, "transition_steady", False) else lay.transition(x)
    want = t.to(torch.complex128).reshape(2, -1).numpy()
    assert want.shape[1] == 8 * 3
    for s, r in enumerate(rows):
        assert np.allclose(np.sort_complex(r["eigenvalues"]), np.sort_complex(want[s]), atol=1e-6)
    if layer == "aussm":  # complex transitions keep their phase
        assert np.abs(np.asarray(rows[0]["eigenvalues"]).imag).max() > 1e-3


def test_trained_spectra_of_a_pdssm_are_the_eigenvalues_of_p_times_d():
    """PD-SSM: one (n × n) transition P(x)D(x) per symbol, no head axis: one row per symbol, its n eigenvalues."""
    torch.manual_seed(2)
    net = SequenceModel(2, 2, "pdssm", 1, 8, layer_args={"state_size": 4}, mlp_ratio=0).eval()
    rows = cmp.trained_spectra(net, ["0", "1"])
    assert [(r["symbol"], r["layer"], r["head"]) for r in rows] == [("0", 1, 0), ("1", 1, 0)]
    with torch.no_grad():
        a = net.blocks[0].layer.transition(layer_input_at_end_of_run(net, 0, 2)).to(torch.complex128).numpy()
    assert a.shape == (2, 4, 4)
    for s, r in enumerate(rows):
        assert same_multiset(r["eigenvalues"], np.linalg.eigvals(a[s]))


def test_a_model_without_a_linear_transition_has_no_spectra():
    net = SequenceModel(2, 2, "lstm", 1, 8)
    assert not cmp.has_spectra(net)
    assert cmp.trained_spectra(net, ["0", "1"]) == []


def test_match_spectra_of_an_empty_spectrum_matches_nothing():
    for a, b in (([], [1.0]), ([1.0, -1.0], [])):
        r, c, gap = cmp.match_spectra(a, b)
        assert len(r) == 0 and len(c) == 0 and np.isnan(gap)
    assert np.isnan(cmp.spectrum_distance([], []))


def test_spectra_rows_when_the_compiled_model_has_more_eigenvalues():
    """Trained [1], compiled [1, −1]: the trained 1 pairs with the compiled 1; the compiled −1 pairs with the
    padding (so it has no trained partner, and nothing trained is unpaired); the padded gap |−1 − 1| = 2."""
    trained = [{"symbol": "x", "layer": 1, "head": 0, "eigenvalues": np.array([1.0 + 0j])}]
    (row,) = cmp.spectra_rows(trained, {"x": np.array([1.0, -1.0])})
    assert row["compiled"] == [[-1.0, 0.0], [1.0, 0.0]]  # sorted
    assert row["matched"] == [None, [1.0, 0.0]]
    assert row["unpaired"] == []
    assert row["distance"] == pytest.approx(2.0) and row["core_distance"] == pytest.approx(0.0)
    (none,) = cmp.spectra_rows(trained, None)
    assert none["compiled"] is None and none["distance"] is None and none["trained"] == [[1.0, 0.0]]


# ---------------------------------------------------------------------------------------------------- the figure
def rotation(theta):
    c, s = np.cos(theta), np.sin(theta)
    return np.array([[c, -s], [s, c]])


def block_diag(*blocks):
    n = sum(len(b) for b in blocks)
    out = np.zeros((n, n))
    i = 0
    for b in blocks:
        out[i : i + len(b), i : i + len(b)] = b
        i += len(b)
    return out


@pytest.fixture
def figure_of(monkeypatch, tmp_path):
    """plot_spectra's figure (kept for reading back, still written to a file)."""
    figs = []
    real_save = cmp.save_figure

    def keep(fig, path, **kw):
        figs.append(fig)
        real_save(fig, path, **kw)

    monkeypatch.setattr(cmp, "save_figure", keep)

    def draw(rows, title=""):
        path = tmp_path / f"spectra{len(figs)}.png"
        cmp.plot_spectra(rows, path, title=title)
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        return figs[-1]

    return draw


def spectra_case():
    """Five symbols: a–d with a compiled spectrum and two trained layers; e trained only; eigenvalues of explicit
    matrices. a: compiled {1, 1, −1} (1 twice), trained layer 1 a rotation by 2π/3 ⊕ 0.5 (three distinct),
    layer 2 the identity of size 3 (1, three times)."""
    rng = np.random.default_rng(0)
    mats = {
        ("a", 1): block_diag(rotation(2 * np.pi / 3), np.array([[0.5]])),
        ("a", 2): np.eye(3),
    }
    for s in "bcd":
        for layer in (1, 2):
            mats[(s, layer)] = rng.normal(size=(3, 3)) / 2
    mats[("e", 1)] = np.diag([0.25, -0.25, 0.75])
    trained = [{"symbol": s, "layer": layer, "head": 0, "eigenvalues": np.linalg.eigvals(m)}
               for (s, layer), m in mats.items()]  # fmt: skip
    compiled = {"a": np.array([1.0, 1.0, -1.0])}
    for s in "bcd":
        compiled[s] = np.exp(2j * np.pi * np.arange(3) / 3)
    return mats, cmp.spectra_rows(trained, compiled), compiled


def points(eig):
    e = np.asarray(eig, dtype=complex)
    return {(round(float(v.real), 6), round(float(v.imag), 6)) for v in e}


def offsets(collection):
    return {(round(float(x), 6), round(float(y), 6)) for x, y in collection.get_offsets()}


def test_plot_spectra_draws_each_symbols_eigenvalues_on_the_unit_circle(figure_of):
    mats, rows, compiled = spectra_case()
    fig = figure_of(rows, title="five symbols")
    visible = [ax for ax in fig.axes if ax.axison]
    assert len(visible) == 5 and len(fig.axes) == 8  # at most four panels per row: 2 rows of 4, three left blank
    assert len({round(ax.get_position().x0, 3) for ax in visible}) == 4
    assert len({round(ax.get_position().y0, 3) for ax in visible}) == 2
    w, h = cmp._STYLE["panel"]
    assert np.allclose(fig.get_size_inches(), (4 * w, 2 * h + cmp._STYLE["legend_strip"]))
    assert fig._suptitle is not None and fig._suptitle.get_text() == "five symbols"
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["compiled", "trained, layer 1", "trained, layer 2"]
    colours = {}
    for ax, sym in zip(visible, "abcde"):
        mine = [r for r in rows if r["symbol"] == sym]
        # the unit circle, closed, once around; the two axes through 0
        circle = next(line for line in ax.lines if len(line.get_xdata()) > 2)
        z = circle.get_xdata() + 1j * circle.get_ydata()
        assert np.allclose(np.abs(z), 1.0) and abs(z[0] - 1) < 1e-12 and abs(z[-1] - 1) < 1e-9
        assert np.unwrap(np.angle(z))[-1] == pytest.approx(2 * np.pi)
        guides = [line for line in ax.lines if len(line.get_xdata()) == 2]
        assert any(np.allclose(line.get_ydata(), 0) for line in guides)  # the real axis
        assert any(np.allclose(line.get_xdata(), 0) for line in guides)  # the imaginary axis
        # the eigenvalues: compiled (open circles, large, below) and each trained layer (small dots, on top)
        by_label = {c.get_label(): c for c in ax.collections}
        trained_labels = ["trained, layer 1", "trained, layer 2"] if sym != "e" else ["trained, layer 1"]
        assert sorted(by_label) == sorted((["compiled"] if sym in compiled else []) + trained_labels)
        for layer in (1, 2):
            if (sym, layer) in mats:
                dots = by_label[f"trained, layer {layer}"]
                assert offsets(dots) == points(np.linalg.eigvals(mats[(sym, layer)]))
                colours.setdefault(layer, set()).add(tuple(np.round(dots.get_facecolor()[0], 6)))
        if sym in compiled:
            circles = by_label["compiled"]
            assert offsets(circles) == points(compiled[sym])
            assert circles.get_facecolor().size == 0 or circles.get_facecolor()[0][3] == 0  # open
            dots = by_label["trained, layer 1"]
            assert circles.get_sizes()[0] > dots.get_sizes()[0]
            assert circle.get_zorder() < circles.get_zorder() < dots.get_zorder()
            assert max(g.get_zorder() for g in guides) < circles.get_zorder()
        # title: the symbol and its largest padded distance
        dist = [r["distance"] for r in mine if r["distance"] is not None]
        want = f"symbol {sym}" + (f" · distance {max(dist):.3f}" if dist else "")
        assert ax.get_title() == want
        assert ax.get_xlabel() == "Re λ" and ax.get_ylabel() == "Im λ"
        # the unit disk in the middle, the same scale on both axes
        (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
        assert x0 == -x1 and y0 == -y1 and x1 == y1 and x1 > 1.0
        assert ax.get_aspect() == 1.0
    assert len(colours[1]) == 1 and len(colours[2]) == 1 and colours[1] != colours[2]  # one colour per layer


def test_plot_spectra_labels_repeated_eigenvalues_with_their_count(figure_of):
    """Symbol a: the compiled 1 twice (×2 below it), the trained identity's 1 three times (×3 above it); points
    that occur once get no label."""
    _, rows, _ = spectra_case()
    ax = next(ax for ax in figure_of(rows).axes if ax.get_title().startswith("symbol a"))
    notes = sorted(((t.get_text(), tuple(np.round(t.xy, 6)), t.xyann) for t in ax.texts), key=lambda n: n[0])
    assert [(text, xy) for text, xy, _ in notes] == [("×2", (1.0, 0.0)), ("×3", (1.0, 0.0))]
    (dx2, dy2), (dx3, dy3) = notes[0][2], notes[1][2]
    assert dx2 == dx3 == 0 and dy2 < 0 < dy3  # compiled counts below the point, trained ones above
    others = [ax for ax in figure_of(rows).axes if ax.axison and not ax.get_title().startswith("symbol a")]
    assert all(not ax.texts for ax in others)  # no eigenvalue repeats there


def test_plot_spectra_of_one_layer_and_one_symbol(figure_of):
    """One panel (no grid), the legend says "trained" alone, a named symbol "g:x" titles its panel as it is, no
    compiled spectrum: no compiled circles and no distance; no title given: none drawn."""
    rows = cmp.spectra_rows([{"symbol": "g:x", "layer": 1, "head": 0, "eigenvalues": np.array([-1.0, 0.5j])}], None)
    fig = figure_of(rows)
    assert len(fig.axes) == 1
    (ax,) = fig.axes
    w, h = cmp._STYLE["panel"]
    assert np.allclose(fig.get_size_inches(), (w, h + cmp._STYLE["legend_strip"]))
    assert ax.get_title() == "g:x"
    assert [c.get_label() for c in ax.collections] == ["trained"]
    assert offsets(ax.collections[0]) == {(-1.0, 0.0), (0.0, 0.5)}
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["trained"]
    assert fig._suptitle is None or fig._suptitle.get_text() == ""
    with pytest.raises(SpecError, match="no spectra"):
        cmp.plot_spectra([], "unused.png")


def test_multiset_merges_float_noise_and_keeps_distinct_points():
    """Points within 1e-3 of each other are one point (eigenvalues 1 and 1 − 1e-9 are the same 1), points 0.5
    apart are two; the counts against a brute-force grouping."""
    pts = [[1.0, 0.0], [1.0 - 1e-9, 0.0], [1.0, 1e-10], [0.5, 0.0], [0.0, 0.5], [-1e-9, 0.5], [-0.5, -0.5]]
    got, counts = cmp._multiset(pts)
    groups = []
    for p in pts:
        for g in groups:
            if np.hypot(p[0] - g[0][0], p[1] - g[0][1]) < 1e-6:
                g.append(p)
                break
        else:
            groups.append([p])
    want = sorted((round(g[0][0], 6), round(g[0][1], 6), len(g)) for g in groups)
    assert sorted((round(x, 6), round(y, 6), int(k)) for (x, y), k in zip(got, counts)) == want
    assert sorted(counts.tolist()) == [1, 1, 2, 3]


# ---------------------------------------------------------------------------------------------------- monoids
def one_symbol(tail: int, cycles: list[int]) -> MooreMachine:
    """One symbol x: a path of ``tail`` states into disjoint cycles. Its monoid {1, x, x², …} has tail + lcm(cycles)
    elements (the identity counted apart when the tail is not empty)."""
    n = tail + sum(cycles)
    row = np.zeros(n, dtype=np.int64)
    for i in range(tail):
        row[i] = i + 1 if i + 1 < tail else tail
    s = tail
    for c in cycles:
        row[s : s + c] = s + (np.arange(c) + 1) % c
        s += c
    return MooreMachine(Automaton(row[None, :], initial=0), np.zeros(n, dtype=np.int64), ("q",))


def test_monoid_limit_is_exact():
    """x on a tail of 1 state into cycles of 32 and 625: 1 + lcm(32, 625) = 20,001 elements, one over the limit of
    20,000: not enumerated (size None, with a note), and two such are not reported as the same size."""
    big = one_symbol(1, [32, 625])
    res = cmp.monoid_comparison(big, big)
    assert res["extracted"]["size"] is None and "20,000" in res["extracted"]["note"]
    assert res["extracted"]["n_states"] == 658
    assert not res["same_size"] and not res["same_kind"]


def test_monoids_of_different_sizes():
    parity, z3 = one_symbol(0, [2]), one_symbol(0, [3])
    res = cmp.monoid_comparison(parity, z3)
    assert (res["extracted"]["size"], res["target"]["size"]) == (2, 3)
    assert not res["same_size"] and not res["same_kind"]
    assert cmp.monoid_comparison(z3, z3)["same_kind"]


# ---------------------------------------------------------------------------------------------------- compare
@pytest.fixture(scope="module")
def parity():
    task = get_task("grazzi:parity")
    nfsm = SequenceModel.from_compiled(compile_nfsm(task.automaton, heads="single", layers="single"))
    return task, nfsm


def test_compare_a_compiled_nfsm_with_its_own_target(parity):
    """A "trained" NFSM that is the compiled one: isomorphic, its tables equal the compiled ones, L_max searched by
    default (each compiled and trained model holds to the cap), the progress stage announced once."""
    task, model = parity
    stages = []
    rep = cmp.compare(model, task, length=8, words=16, cap=16, n_words=8, dtypes=("float64",), step=stages.append)
    assert rep["extracted"]["relation"] == "isomorphic" and rep["extracted"]["n_states"] == 2
    assert rep["compiled"] == {"target": "nfsm", "construction": "single", "layers": 1}
    assert "compiled_note" not in rep and "spectra_note" not in rep and rep["spectra"] == []
    tables = rep["tables"]
    assert tables["equal_up_to_relabeling"] and tables["matching"] == [[0, 0]]
    assert tables["trained_heads"] == tables["compiled_heads"] == [2]
    assert len(stages) == 1 and "L_max" in stages[0]
    lm = rep["l_max"]
    assert [e["dtype"] for e in lm["trained"]] == [e["dtype"] for e in lm["compiled"]] == ["float64"]
    assert all(e["l_max"] is None and e["capped"] for e in lm["trained"] + lm["compiled"])
    assert rep["target"] == {"name": "parity", "n_states": 2, "minimal_states": 2, "labels_compared": True}


def test_compare_with_a_compiled_model_without_spectra_says_so(parity):
    """A Householder model of parity as the trained one, compared with a compiled NFSM: spectra rows without
    compiled eigenvalues and a note why; no NFSM tables (the trained model is not an NFSM)."""
    task, _ = parity
    model = SequenceModel.from_compiled(compile_householder(task.automaton))
    nfsm = compile_nfsm(task.automaton, heads="single", layers="single")
    rep = cmp.compare(model, task, compiled=nfsm, length=6, words=8, lmax=False)
    assert rep["spectra"] and all(r["compiled"] is None for r in rep["spectra"])
    assert "no linear transition" in rep["spectra_note"]
    assert "tables" not in rep and "l_max" not in rep
    # with its own compiled model: the compiled eigenvalues, and no note
    rep = cmp.compare(model, task, length=6, words=8, lmax=False)
    assert "spectra_note" not in rep and "tables" not in rep
    one = next(r for r in rep["spectra"] if r["symbol"] == "1")
    assert one["compiled"] == [[-1.0, 0.0]]


def test_compare_notes_a_target_that_does_not_compile(parity, monkeypatch):
    task, model = parity

    def refuse(*_a, **_k):
        raise ConstructionError("too many states for this test")

    monkeypatch.setattr(cmp, "compile_nfsm", refuse)
    rep = cmp.compare(model, task, length=8, words=16, lmax=False)
    assert rep["compiled"] is None and "tables" not in rep
    assert rep["compiled_note"] == "the target does not compile: too many states for this test"


def test_compare_with_a_labelled_target_uses_its_minimal_machine(parity):
    """The target: count the 1s mod 4, labelled by parity (even, odd, even, odd). Compared by labels, its minimal
    machine is parity (states 0 and 2 agree on every continuation, as do 1 and 3): 2 states, a monoid of 2."""
    task, model = parity
    z4 = Automaton([[0, 1, 2, 3], [1, 2, 3, 0]], states=["0", "1", "2", "3"], symbols=["0", "1"], initial=0, name="z4")
    target = MooreMachine(z4, np.array([0, 1, 0, 1]), ("even", "odd"))
    rep = cmp.compare(model, task, target=(target, True), length=8, words=16, lmax=False)
    assert rep["target"] == {"name": "z4", "n_states": 4, "minimal_states": 2, "labels_compared": True}
    assert rep["monoid"]["target"]["size"] == 2 and rep["monoid"]["same_size"]
    assert rep["extracted"]["relation"] == "isomorphic"
    assert not rep["tables"]["equal_up_to_relabeling"]  # the compiled model is of the 4-state target


def test_api_defaults_are_the_clis(parity):
    """`compare()` and `l_max_table()` sample as `fsa2rnn compare` does by default (--words, --seed, --samples);
    both run here on what needs no work (a task they refuse, no dtypes), so that the mutation runner, which picks
    tests by the lines they run, counts this test for their signatures."""
    from fsa2rnn.cli.compare import compare_command

    task, model = parity
    with pytest.raises(SpecError, match="no automaton"):
        cmp.compare(model, NoBlanks(task, kind="regression"), length=8)
    assert cmp.l_max_table(model, task, None, start=8, cap=8, dtypes=())["trained"] == []

    cli = {p.name: p.default for p in compare_command.params}
    api = inspect.signature(cmp.compare).parameters
    lmax = inspect.signature(cmp.l_max_table).parameters
    assert api["words"].default == cli["words"]
    assert api["seed"].default == lmax["seed"].default == cli["seed"]
    assert api["n_words"].default == lmax["n_words"].default == cli["samples"]
    assert api["lmax"].default is cli["lmax"] is True


def test_l_max_table_without_a_compiled_model_and_a_dtype_that_fails(parity):
    task, model = parity
    table = cmp.l_max_table(model, task, None, start=8, cap=16, n_words=8, dtypes=("float64",))
    assert table["compiled"] is None and table["trained"][0]["capped"]
    assert table["n_words"] == 8 and table["dtypes"] == ["float64"]

    def fails(_dtype):
        raise RuntimeError("no kernel   for\nthis dtype " + "x" * 300)

    got = cmp._search(fails, None, "bfloat16", 8, 16, 8, 0)
    assert got["dtype"] == "bfloat16" and got["l_max"] is None and got["capped"] is False
    assert got["error"].startswith("no kernel for this dtype xxx") and len(got["error"]) == 200  # cut to 200


# ---------------------------------------------------------------------------------------------------- pieces
def test_default_compiled_per_layer_family():
    s3 = resolve_spec("S3")
    for layer, target in (("mamba", "diagonal"), ("dlr", "diagonal"), ("pdssm", "pdssm"), ("nfsm", "nfsm"),
                          ("deltanet", "householder"), ("lstm", "householder")):  # fmt: skip
        compiled, why = cmp.default_compiled(layer, s3)
        assert why is None and compiled.target == target and compiled.target_automaton().n_states == 6
    one, _ = cmp.default_compiled("nfsm", s3)
    assert one.layers[0]["heads"] == [6]  # one head unless the trained model has more
    many, _ = cmp.default_compiled("nfsm", s3, heads=2)
    assert len(many.layers[0]["heads"]) > 1


def test_default_compiled_says_why_a_target_does_not_compile(monkeypatch):
    def refuse(*_a, **_k):
        raise ConstructionError("no   such\nconstruction")

    monkeypatch.setattr(cmp, "compile_householder", refuse)
    assert cmp.default_compiled("deltanet", resolve_spec("parity")) == (
        None,
        "the target does not compile: no such construction",
    )


@pytest.mark.parametrize(
    "lengths,sequence,length,want",
    [
        # the last (longest) length counts; 10× the training length; below 0.99: a warning
        ([16, 80, 160], [1.0, 0.995, 0.5], 16, (160, 10, 0.5, True)),
        ([16, 80, 160], [0.5, 0.5, 1.0], 16, (160, 10, 1.0, False)),
        ([8, 100], [1.0, 0.99], 8, (100, 12, 0.99, False)),  # exactly 0.99: no warning; 100 // 8 = 12
        ([8, 100], [1.0, 0.9899], 8, (100, 12, 0.9899, True)),
        ([3, 7], [1.0, 1.0], 1, (7, 7, 1.0, False)),
        ([3, 7], [1.0, 1.0], 0, (7, 7, 1.0, False)),  # no training length: times 1
    ],
)
def test_long_agreement(lengths, sequence, length, want):
    out = cmp.long_agreement({"lengths": lengths, "sequence": sequence}, length)
    n, times, seq, warned = want
    assert (out["length"], out["times_training_length"], out["sequence_agreement"]) == (n, times, seq)
    assert type(out["times_training_length"]) is int
    assert ("warning" in out) == warned
    if warned:
        assert f"at length {n}" in out["warning"] and f"length ≤ {length}" in out["warning"]


class NoBlanks:
    """A task that does not say how many tokens it reads per symbol (one, by default)."""

    def __init__(self, task, **override):
        self._task, self._override = task, override

    def __getattr__(self, name):
        if name in self._override:
            return self._override[name]
        if name == "tokens_per_step":
            raise AttributeError(name)
        return getattr(self._task, name)


def test_check_inputs():
    task = get_task("grazzi:parity")
    goal, labelled = cmp.check_inputs(NoBlanks(task), None, None)
    assert labelled is True and goal.automaton is task.automaton
    with pytest.raises(SpecError, match="no automaton"):
        cmp.check_inputs(NoBlanks(task, kind="regression"), None, None)
    with pytest.raises(SpecError, match="no automaton"):
        cmp.check_inputs(NoBlanks(task, automaton=None), None, None)
    with pytest.raises(SpecError, match="blank tokens"):
        cmp.check_inputs(NoBlanks(task, tokens_per_step=2), None, None)


def test_alphabet_difference_names_at_most_three():
    assert cmp._alphabet_difference(["a", "b", "c", "x"], ["x"]) == ": 'a', 'b', 'c' only in the first"
    assert cmp._alphabet_difference(["a", "b", "c", "d", "x"], ["x", "y"]) == (
        ": 'a', 'b', 'c' and 1 more only in the first; 'y' only in the second"
    )
    assert cmp._alphabet_difference(["x"], ["x"]) == ""


def test_whitebox_fallback_names_the_reason():
    assert cmp.whitebox_fallback("an LSTM has none").startswith("white-box extraction reads a carried state, and an")
