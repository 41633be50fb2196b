"""Units of the linear-RNN exact interpreter (compiler/targets/lrnn/exact.py): its helpers through their documented
contracts, and small compiled models (Z5, Z4) whose answers are known by hand: Z_n steps k ↦ k + x (mod n), so
its configuration graph is the n-cycle and the BFS distance of k is min over symbols of the word length."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from fsa2rnn.compiler import compile_diagonal, compile_householder
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.compiler.targets.lrnn import exact as ex
from fsa2rnn.compiler.targets.lrnn import gh
from fsa2rnn.compiler.targets.lrnn.rounding import inv_sqrt
from fsa2rnn.fsa import Automaton, resolve_spec
from fsa2rnn.fsa.errors import ExactnessError, LimitExceededError, ModelFileError

K = gh.KIND_CODE


# ------------------------------------------------------------------------------------------------ _first_row
def test_first_row_names_the_first_differing_row_or_nothing():
    a = np.zeros((3, 2))
    b = a.copy()
    b[1, 0] = 1.0
    assert ex._first_row(a, b) == " row 1"
    assert ex._first_row(a, a) == ""  # no difference
    assert ex._first_row(np.zeros((2, 3)), np.zeros((2, 2))) == ""  # shapes differ: no row to name
    assert ex._first_row(np.float64(1.0), np.float64(2.0)) == ""  # a scalar has no rows
    assert ex._first_row(np.array([1.0, 2.0, 3.0]), np.array([1.0, 5.0, 3.0])) == " row 1"  # 1-d: entry = row


# ------------------------------------------------------------------------------------------------ row classes
def _classes(*mats: list[list[int]]) -> list[int]:
    return ex._RationalLayer.row_classes(SimpleNamespace(A=np.array(mats, dtype=np.int64))).tolist()


def test_rational_row_classes_by_definition():
    """ZERO: the zero matrix; ORTHOGONAL: a signed permutation (one ±1 per row and column); else OTHER."""
    z, o, other = ex.ZERO, ex.ORTHOGONAL, ex.OTHER
    assert len({z, o, other}) == 3
    assert _classes([[0, 0], [0, 0]], [[1, 0], [0, 1]], [[0, -1], [1, 0]]) == [z, o, o]
    assert _classes([[1, 1], [0, 0]], [[1, 0], [1, 0]], [[1, 0], [0, 0]], [[2, 0], [0, 1]]) == [other] * 4


# ------------------------------------------------------------------------------------------------ hash decode
def test_hash_decode_reads_only_permutation_codes():
    """A hash readout's h must be a permutation of 1..n (key Σ(h_i − 1)nⁱ); anything else is −1 even when its
    clipped key happens to be in the table (key 0 is that of (1, 1, 1))."""
    d = 3
    key = int(np.dot(np.array([2, 1, 3]) - 1, d ** np.arange(d)))  # (2, 1, 3): 1 + 0·3 + 2·9 = 19
    layer = SimpleNamespace(readout="hash", n=d, hkeys=np.array([0, key]), hvals=np.array([5, 7]))
    h = np.array([[2, 1, 3], [1, 1, 1], [1, 2, 3], [0, 2, 4]])
    assert ex._RationalLayer.decode(layer, h).tolist() == [7, -1, -1, -1]


# ------------------------------------------------------------------------------------------------ exact lookup
def test_exact_code_and_row_index():
    codes = np.array([[0, 1_000_004], [1, 0], [5, -3]])  # distinct rows with large entries: all accepted
    keys, order = ex._row_index(codes)
    h = np.array([[1, 0], [5, -3], [0, 1_000_004], [2, 2]])
    assert ex._exact_code(codes, keys, order, h).tolist() == [1, 2, 0, -1]
    with pytest.raises(ExactnessError, match="coincide"):
        ex._row_index(np.array([[0], [5], [5]]))  # two equal code points (not the first)


def test_check_keys_refuses_repeated_keys():
    ex._check_keys(0, np.array([1, 2, 5]))
    with pytest.raises(ExactnessError, match="sorted and distinct"):
        ex._check_keys(0, np.array([1, 1, 5]))


# ------------------------------------------------------------------------------------------------ β and kinds
def test_kinds_and_beta():
    with pytest.raises(ExactnessError, match="unknown"):
        ex._check_kinds_and_beta(0, np.array([[len(gh.KINDS)]]), np.array([[2.0]]))
    with pytest.raises(ExactnessError, match="unknown"):
        ex._check_kinds_and_beta(0, np.array([[-1]]), np.array([[2.0]]))
    fk = np.array([[K["swap"]], [K["project"]]])
    assert ex._check_kinds_and_beta(0, fk, np.array([[2.0], [1.0]])).tolist() == [[2], [1]]  # gh.py's table
    with pytest.raises(ExactnessError, match="row 1 factor 0"):
        ex._check_kinds_and_beta(0, fk, np.array([[2.0], [2.0]]))


# ------------------------------------------------------------------------------------------------ angle factors
def _angle_call(kinds: list[int], args: list[tuple[int, int]], den: int = 3) -> None:
    fk = np.array([kinds])
    fa = np.array([args])
    beta = np.array([[float(gh.GHFactor(gh.KINDS[k]).beta) for k in kinds]])
    v = np.array([[gh.GHFactor(gh.KINDS[k], a, b).direction(2) for k, (a, b) in zip(kinds, args)]])
    ex._check_angle_factors(0, den, fk, fa, beta, v)


def test_angle_factors_accept_padding_and_angles_of_the_denominator():
    _angle_call([K["identity"], K["identity"]], [(0, 0), (0, 0)])
    _angle_call([K["angle"], K["identity"]], [(1, 3), (0, 0)])


@pytest.mark.parametrize(
    ("kinds", "args"),
    [
        ([K["identity"], K["swap"]], [(0, 0), (0, 1)]),  # a non-angle factor after padding
        ([K["identity"], K["angle"]], [(0, 0), (1, 4)]),  # an angle of another denominator
        ([K["angle"], K["swap"]], [(1, 3), (0, 1)]),
        ([K["angle"], K["angle"]], [(1, 3), (1, 4)]),
    ],
)
def test_angle_factors_name_the_bad_factor(kinds, args):
    with pytest.raises(ExactnessError, match="row 0 factor 1: not an angle"):
        _angle_call(kinds, args)


# ------------------------------------------------------------------------------------------------ rational products
def _products(rows: list[list[gh.GHFactor]], n: int = 3, v: np.ndarray | None = None) -> np.ndarray:
    t = gh.pack(rows, n)
    return ex._rational_products(0, n, t["fkind"], t["fargs"], t["beta"], t["v"] if v is None else v)


def test_rational_products_are_the_integer_products():
    rows = [[gh.GHFactor("swap", 1, 0)], [gh.GHFactor("swap", 0, 2), gh.GHFactor("negate", 1)], []]
    want = [gh.permutation_matrix([1, 0, 2]), np.diag([1, -1, 1])[[2, 1, 0]], np.eye(3, dtype=np.int64)]
    assert np.array_equal(_products(rows), np.array(want))


@pytest.mark.parametrize(
    "f",
    [("swap", 3, 0), ("swap", 0, 3), ("swap", -1, 0), ("swap", 0, -1), ("swap", 1, 1), ("project", 3, 0)]
    + [("project", -1, 0), ("negate", 3, 0)],
)
def test_rational_products_refuse_indices_out_of_range(f):
    t = gh.pack([[gh.GHFactor("identity")]], 3)
    t["fkind"][0, 0] = K[f[0]]
    t["fargs"][0, 0] = f[1:]
    t["beta"][0, 0] = gh.GHFactor(f[0]).beta
    with pytest.raises(ExactnessError, match="row 0 factor 0: indices out of range"):
        ex._rational_products(0, 3, t["fkind"], t["fargs"], t["beta"], t["v"])


def test_rational_products_name_the_factor_with_a_wrong_v():
    rows = [[gh.GHFactor("swap", 0, 1), gh.GHFactor("swap", 0, 2)]] * 2
    t = gh.pack(rows, 3)
    v = t["v"].copy()
    assert v[1, 1, 0] == inv_sqrt(2)
    v[1, 1, 0] = 0.7  # row 1, factor 1, coordinate 0
    with pytest.raises(ExactnessError, match="row 1 factor 1: v differs"):
        _products(rows, v=v)


def test_integer_norm_names_the_first_bad_row():
    a = np.array([np.eye(2), [[1, 1], [0, 0]]], dtype=np.int64)  # row 1: a row of squared norm 2
    with pytest.raises(ExactnessError, match="row 1: A has spectral norm"):
        ex._check_integer_norm(0, a)
    b = np.array([np.eye(2), [[1, 0], [1, 0]]], dtype=np.int64)  # row 1: a column of squared norm 2
    with pytest.raises(ExactnessError, match="row 1: A has spectral norm"):
        ex._check_integer_norm(0, b)


# ------------------------------------------------------------------------------------------------ compiled models
def _edit(model: CompiledModel, layer: dict | None = None, **tensors) -> CompiledModel:
    h = dict(model.header)
    if layer:
        h["layers"] = [dict(h["layers"][0], **layer), *h["layers"][1:]]
    t = {k: v.copy() for k, v in model.tensors.items()}
    t.update(tensors)
    return CompiledModel(h, t)


def test_configuration_graph_of_z5_is_the_cycle_with_bfs_distances():
    a = resolve_spec("Z5")
    m = compile_householder(a)
    g = ex.exact_interpreter(m).configuration_graph()
    assert g["n"] == 5 and [c.tolist() for c in g["classes"]] == [[ex.ORTHOGONAL] * a.n_symbols]
    # independent BFS over the edge list
    dist = {0: 0}
    frontier = [0]
    while frontier:
        nxt = []
        for s, _, t in g["edges"].tolist():
            if s in frontier and t not in dist:
                dist[t] = dist[s] + 1
                nxt.append(t)
        frontier = nxt
    assert g["dist"].tolist() == [dist[c] for c in range(g["n"])]
    assert g["parent"][0].tolist() == [-1, -1]  # the initial configuration has no parent
    for c in range(1, g["n"]):
        p, x = g["parent"][c].tolist()
        assert [p, x, c] in g["edges"].tolist() and g["dist"][p] == g["dist"][c] - 1
    assert ex.exact_interpreter(m).configuration_graph(limit=5)["n"] == 5
    with pytest.raises(LimitExceededError):
        ex.exact_interpreter(m).configuration_graph(limit=4)


def test_angle_layer_normalizes_angles_and_decodes_others_to_minus_one():
    a = resolve_spec("Z5")
    m = compile_householder(a)
    den = m.header["layers"][0]["angle_den"]
    assert exact_check_ok(_edit(m, layer={"h0_angle": 2 * den}), a)  # the same angle, one turn on
    assert exact_check_ok(_edit(m, **{"L0.code_angles": m.tensors["L0.code_angles"] + 2 * den}), a)
    layer = ex.exact_interpreter(m).layers[0]
    off = sorted(set(range(2 * den)) - set(layer.code_angles.tolist()))
    assert off and layer.decode(np.array([[q] for q in off])).tolist() == [-1] * len(off)
    assert ex.exact_interpreter(m).initial()[0].shape[0] == 1


def exact_check_ok(model: CompiledModel, a: Automaton) -> bool:
    return bool(ex.exact_check(model, a)["ok"])


def test_exact_check_and_explore_on_failure():
    a = resolve_spec("Z5")
    m = compile_householder(a)
    renamed = Automaton(a.transitions, states=[f"s{q}" for q in a.states], symbols=a.symbols, initial=a.initial)
    assert ex.exact_check(m, renamed) == {
        "ok": False,
        "failure": "the model's states or symbols differ from the automaton's",
        "configurations": 0,
    }
    bad = _edit(m, **{"L0.A": m.tensors["L0.A"] + 1.0})
    res = ex.explore(bad)
    assert not res["ok"] and res["configurations"] == 0 and res["edges"].shape == (0, 3)


def test_rows_names_the_symbol_without_a_row():
    a = resolve_spec("Z5")
    machine = ex.exact_interpreter(compile_householder(a))
    layer = machine.layers[0]
    keys = layer.keys.copy()
    keys[1] = 10**6  # symbol 1 has no row now; symbol 0 still has row 0
    layer.keys = keys
    ss = machine.decode(machine.initial(2))
    with pytest.raises(ExactnessError, match=f"symbol {a.symbols[1]!r}"):
        machine.rows(np.array([0, 1]), ss)


def test_realized_automaton_refuses_two_successors():
    """Z4 with layer states 0 and 2 both read as state 0: from state 0 symbol 1 leads to 1 (from configuration 0)
    and to 3 (from configuration 2), which no automaton does."""
    a = resolve_spec("Z4")
    m = compile_householder(a)
    assert ex.realized_automaton(m).transitions.tolist() == a.transitions.tolist()
    st = m.tensors["readout.states"].copy()
    st[2] = st[0]
    with pytest.raises(ModelFileError, match="two successors"):
        ex.realized_automaton(_edit(m, **{"readout.states": st}))


def test_exact_code_with_a_single_code_point():
    codes = np.array([[3, 4]])
    keys, order = ex._row_index(codes)
    assert ex._exact_code(codes, keys, order, np.array([[3, 4], [4, 3]])).tolist() == [0, -1]


def test_diagonal_flipflop_layer():
    """Flip-flop as one diagonal coordinate with modulus 0 (an integer orbit coordinate): symbols 0 and 1 reset to
    codes 1 and 0 (λ = 0), symbol 2 holds (λ = 1). An exponent stored on a modulus-0 coordinate is not used: λ = 1
    there whatever it says."""
    a = resolve_spec("flipflop")
    m = compile_diagonal(a)
    assert m.tensors["L0.moduli"].tolist() == [0] and m.tensors["L0.reset"].tolist() == [1, 1, 0]
    g = ex.exact_interpreter(m).configuration_graph()
    assert g["classes"][0].tolist() == [ex.ZERO, ex.ZERO, ex.ORTHOGONAL]
    exps = m.tensors["L0.exponents"].copy()
    exps[2, 0] = 5
    assert exact_check_ok(_edit(m, **{"L0.exponents": exps}), a)
    cs = m.tensors["L0.code_states"].copy()
    cs[1] = m.header["layers"][0]["n_states"]  # one past the last layer state
    res = ex.exact_check(_edit(m, **{"L0.code_states": cs}), a)
    assert not res["ok"] and "out of range" in res["failure"]
    layer = ex.exact_interpreter(m).layers[0]
    assert layer.decode(np.array([[0], [1], [7], [-1]])).tolist() == [0, 1, -1, -1]


def test_hash_readout_keys_must_be_sorted_and_distinct():
    """S3's hash readout (width 3): an extra key that no permutation code has (6, between 5 and 7) is harmless; a
    repeated key is refused."""
    a = resolve_spec("S3")
    m = compile_householder(a)
    hk, hv = m.tensors["L0.hkeys"], m.tensors["L0.hvals"]
    assert hk[:2].tolist() == [5, 7]
    extra = {"L0.hkeys": np.insert(hk, 1, 6), "L0.hvals": np.insert(hv, 1, hv[0])}
    assert exact_check_ok(_edit(m, **extra), a)
    dup = hk.copy()
    dup[1] = dup[0]
    res = ex.exact_check(_edit(m, **{"L0.hkeys": dup}), a)
    assert not res["ok"] and "hash readout keys" in res["failure"]
