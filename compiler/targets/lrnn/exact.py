"""The exact interpreter of compiled linear-RNN models (targets "householder" and "diagonal"), with no floating
point: the exact check of the compiler and ``verify``, and the configuration graph that the spectral analysis
(realize/spectral.py) and :func:`realized_automaton` read.

1. Weights. Every stored float is compared for equality with the float nearest to the exact quantity it stands for
   (rounding.py here), computed from the layer's exact description, never within a tolerance:
   - GH factors: β equals its kind's value (so 1 − β ∈ [−1, 1]); v equals the rounding of u/‖u‖ for the factor's
     integer direction u (entries 0, ±1, ±1/√2) or of (cos πa/den, sin πa/den) for an angle factor; the identity
     padding stores e_0.
   - Rational layers: the fused A(r) equals the product C_k ⋯ C_1 of its factors multiplied out in integer
     arithmetic (v = (e_i − e_j)/√2 gives vvᵀ with entries ±½ and β = 2 clears the ½); B, H_0 and the code points
     are integers. The norm test is exact: an integer matrix has ‖A‖₂ ≤ 1 iff every row and every column has at
     most one non-zero entry, ±1 (a column of squared norm ≥ 2, or two ±1 in one row, gives ‖A‖₂ ≥ √2), and then
     its spectral radius is ≤ ‖A‖₂ ≤ 1 (Proposition 1).
   - Angle layers: the factors' product is computed on angle indices (a reflection maps angle θ to 2φ_v + π − θ),
     giving a rotation or a reflection, orthogonal, so ‖A‖₂ = 1 exactly; the stored fused A, H_0 and code points
     equal the roundings of their exact entries, and B = 0.
   - Diagonal layers: λ = e^{2πik/m} from the stored exponent k/m (|λ| = 1), 1 on orbit coordinates, 0 on resets
     (spectral radius ≤ 1 exactly); the stored Re λ, Im λ, B and code points equal the roundings of those values.
2. Closure: ``ExactLinearRNN.configuration_graph``, a breadth-first search over configurations (the exact hidden
   vector of every layer) from H_0: for each configuration and symbol x, the next hidden vectors A(r)H + B(r) are
   computed exactly, each
   must equal a code point exactly (not merely decode to one), and the final readout of the decoded tuple must be
   δ_x(q). This covers every reachable code point and every symbol, hence every word.

The hidden vectors of rational layers are integer vectors here (all our constructions: 0/±1 matrices, integer codes);
a layer with non-integer entries is reported as unsupported rather than checked approximately.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ....fsa.automaton import Automaton
from ....fsa.errors import ExactnessError, LimitExceededError, ModelFileError
from ....fsa.inputs import check_symbol_ids
from ...keys import LOW_FIRST, encode, lookup_sorted
from ...model import CompiledModel
from ...registry import program_of
from ...wiring import layer_keys
from . import gh
from .program import LinearLayer, LinearRNNProgram
from .rounding import inv_sqrt, root_values

#: most configurations (q, hidden vectors) the closure search visits
MAX_CONFIGURATIONS = 2 * 10**6


#: the class of a row's exact A: zero (a reset), orthogonal (signed permutation, rotation or reflection,
#: unimodular diagonal), or other (edited or trained weights)
ZERO, ORTHOGONAL, OTHER = 0, 1, 2


_Fail = ExactnessError
_lookup = lookup_sorted


def _same(stored: np.ndarray, exact: np.ndarray) -> bool:
    """The stored floats equal the rounded exact values, entry for entry (same shape; −0.0 = 0.0)."""
    stored = np.asarray(stored)
    return stored.shape == np.shape(exact) and bool(np.all(stored == exact))


def _first_row(stored: np.ndarray, exact: np.ndarray) -> str:
    """' row r' of the first row where they differ (for the failure message), '' when the shapes differ."""
    if np.shape(stored) != np.shape(exact) or np.ndim(stored) == 0:
        return ""
    diff = np.asarray(stored) != exact
    return f" row {int(np.argwhere(diff.reshape(len(diff), -1).any(axis=1))[0, 0])}" if diff.any() else ""


def _check_keys(i: int, keys: np.ndarray) -> None:
    if np.any(np.diff(keys) <= 0):
        raise _Fail(f"layer {i}: input keys are not sorted and distinct")


class _RationalLayer:
    """Exact integer form of a GH layer with rational (here: integer) weights."""

    def __init__(self, spec: LinearLayer) -> None:
        i, t = spec.index, spec.stored
        self.i, self.n = i, spec.width
        self.keys = spec.row_keys
        _check_keys(i, self.keys)
        self.A = _rational_products(i, self.n, t["fkind"], t["fargs"], t["beta"], t["v"])
        fused = t["A"]
        if not _same(fused, self.A.astype(np.float64)):
            where = _first_row(fused, self.A.astype(np.float64))
            raise _Fail(f"layer {i}{where}: the stored fused A differs from the exact product of its GH factors")
        _check_integer_norm(i, self.A)
        self.B = _as_int(t["B"], f"layer {i} B")
        self.h0 = _as_int(t["h0"], f"layer {i} h0")
        self.readout = "hash" if "hkeys" in t else "nearest"
        if self.readout == "nearest":
            self.codes = _as_int(t["codes"], f"layer {i} code points")
            self.code_keys, self.code_index = _row_index(self.codes)
        else:
            self.hkeys, self.hvals = t["hkeys"], t["hvals"]
            if np.any(np.diff(self.hkeys) <= 0):
                raise _Fail(f"layer {i}: hash readout keys are not sorted and distinct")

    def initial(self) -> np.ndarray:
        return self.h0[None, :]

    def row_classes(self) -> np.ndarray:
        """ZERO, ORTHOGONAL (a signed permutation) or OTHER for every row."""
        a = np.abs(self.A)
        zero = ~a.any(axis=(1, 2))
        signed_perm = (a <= 1).all(axis=(1, 2)) & (a.sum(1) == 1).all(-1) & (a.sum(2) == 1).all(-1)
        return np.where(zero, ZERO, np.where(signed_perm, ORTHOGONAL, OTHER))

    def step(self, h: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return np.einsum("fij,fj->fi", self.A[rows], h) + self.B[rows]

    def decode(self, h: np.ndarray) -> np.ndarray:
        if self.readout == "nearest":
            return _exact_code(self.codes, self.code_keys, self.code_index, h)
        d = self.n
        ok = np.all((h >= 1) & (h <= d), axis=1) & np.all(np.sort(h, axis=1) == np.arange(1, d + 1), axis=1)
        key = (np.clip(h, 1, d) - 1) @ (d ** np.arange(d, dtype=np.int64))
        idx = _lookup(self.hkeys, key)
        return np.where(ok & (idx >= 0), self.hvals[np.maximum(idx, 0)], -1)


class _AngleLayer:
    """A width-2 layer of reflections acting on unit vectors at angles π·a/den (a an integer mod 2den)."""

    def __init__(self, spec: LinearLayer) -> None:
        i, t = spec.index, spec.stored
        self.i, self.n = i, 2
        self.den = int(spec.attrs["angle_den"])
        if self.den < 1 or spec.width != 2:
            raise _Fail(f"layer {i}: an angle layer needs width 2 and an angle denominator ≥ 1")
        self.keys = spec.row_keys
        _check_keys(i, self.keys)
        _check_angle_factors(i, self.den, t["fkind"], t["fargs"], t["beta"], t["v"])
        actions = []
        for r, fs in enumerate(gh.unpack(t["fkind"], t["fargs"])):
            try:
                actions.append(gh.angle_action(fs, self.den))
            except ValueError as exc:
                raise _Fail(f"layer {i} row {r}: {exc}") from None
        acts = np.array(actions, dtype=np.int64).reshape(-1, 2)
        self.sign, self.off = acts[:, 0], acts[:, 1]
        exact_a = gh.angle_matrix(self.sign, self.off, self.den)
        if not _same(t["A"], exact_a):
            where = _first_row(t["A"], exact_a)
            raise _Fail(f"layer {i}{where}: the stored fused A differs from the product of its reflections")
        if np.any(t["B"] != 0):
            raise _Fail(f"layer {i}: an angle layer must have B = 0")
        mod = 2 * self.den
        self.h0_angle = int(spec.attrs["h0_angle"]) % mod
        if not _same(t["h0"], gh.unit_vectors(self.h0_angle, self.den)):
            raise _Fail(f"layer {i}: H_0 differs from its declared angle")
        self.code_angles = np.asarray(t["code_angles"], dtype=np.int64) % mod
        if not _same(t["codes"], gh.unit_vectors(self.code_angles, self.den)):
            raise _Fail(f"layer {i}: code points differ from their declared angles")
        if len(np.unique(self.code_angles)) != len(self.code_angles):
            raise _Fail(f"layer {i}: two code points coincide")
        self.angle_to_code = np.full(mod, -1, dtype=np.int64)
        self.angle_to_code[self.code_angles] = np.arange(len(self.code_angles))

    def initial(self) -> np.ndarray:
        return np.array([[self.h0_angle]])

    def row_classes(self) -> np.ndarray:
        """Every row is a product of reflections of the plane: a rotation or a reflection, ORTHOGONAL."""
        return np.full(len(self.keys), ORTHOGONAL)

    def step(self, h: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return ((self.sign[rows] * h[:, 0] + self.off[rows]) % (2 * self.den))[:, None]

    def decode(self, h: np.ndarray) -> np.ndarray:
        return self.angle_to_code[h[:, 0]]


class _DiagonalLayer:
    """A diagonal layer: coordinate j is ζ_{m_j}^e (exponent e mod m_j), or an integer when m_j = 0."""

    def __init__(self, spec: LinearLayer) -> None:
        i, t = spec.index, spec.stored
        self.i = i
        self.keys = spec.row_keys
        _check_keys(i, self.keys)
        self.m = t["moduli"]
        if np.any(self.m < 0):
            raise _Fail(f"layer {i}: a negative modulus")
        self.exps = t["exponents"]
        self.reset = t["reset"].astype(bool)
        self.rcode = self._norm(t["reset_code"])
        self.codes = self._norm(t["code_exponents"])
        # λ = e^{2πik/m} (|λ| = 1) from the exponent, 1 on orbit coordinates (m = 0), 0 on reset rows
        lam_re, lam_im = root_values(self.m[None, :], np.where(self.m > 0, self.exps, 1))
        lam_re, lam_im = np.where(self.reset[:, None], 0.0, lam_re), np.where(self.reset[:, None], 0.0, lam_im)
        for part, want in (("lam_re", lam_re), ("lam_im", lam_im)):
            if not _same(t[part], want):
                where = _first_row(t[part], want)
                raise _Fail(f"layer {i}{where}: stored eigenvalues differ from e^(2πik/m) of their exponents k/m")
        b_re, b_im = root_values(self.m[None, :], self.rcode)
        b_re, b_im = np.where(self.reset[:, None], b_re, 0.0), np.where(self.reset[:, None], b_im, 0.0)
        if not (_same(t["B_re"], b_re) and _same(t["B_im"], b_im)):
            raise _Fail(f"layer {i}: stored B differs from the exact reset codes")
        c_re, c_im = root_values(self.m[None, :], self.codes)
        if not (_same(t["codes_re"], c_re) and _same(t["codes_im"], c_im)):
            raise _Fail(f"layer {i}: code points differ from their exponents")
        self.code_keys, self.code_index = _row_index(self.codes)
        self.code_states = t["code_states"]
        if np.any((self.code_states < 0) | (self.code_states >= spec.n_states)):
            raise _Fail(f"layer {i}: a code point maps to a layer state out of range")
        self.h0 = self.codes[int(spec.attrs["h0_index"])]

    def _norm(self, e: np.ndarray) -> np.ndarray:
        return np.where(self.m > 0, e % np.where(self.m > 0, self.m, 1), e)

    def initial(self) -> np.ndarray:
        return self.h0[None, :]

    def row_classes(self) -> np.ndarray:
        """|λ| = 1 (exponent form) on every coordinate, ORTHOGONAL, or a reset, ZERO."""
        return np.where(self.reset, ZERO, ORTHOGONAL)

    def step(self, h: np.ndarray, rows: np.ndarray) -> np.ndarray:
        rot = self._norm(h + np.where(self.m > 0, self.exps[rows], 0))
        return np.where(self.reset[rows][:, None], self.rcode[rows], rot)

    def decode(self, h: np.ndarray) -> np.ndarray:
        s = _exact_code(self.codes, self.code_keys, self.code_index, h)
        return np.where(s >= 0, self.code_states[np.maximum(s, 0)], -1)


# ---------------------------------------------------------------------------------------------------- helpers
def _as_int(arr: np.ndarray, what: str) -> np.ndarray:
    a = np.asarray(arr, dtype=np.float64)
    if not np.all(a == np.round(a)):
        raise _Fail(f"{what}: non-integer entries (this exact check supports integer rational layers)")
    return np.round(a).astype(np.int64)


_ROW_BASE = np.int64(1_000_003)


def _row_keys(rows: np.ndarray) -> np.ndarray:
    """A hash of integer rows (exact equality is re-checked through _row_index's table)."""
    rows = np.asarray(rows, dtype=np.int64)
    out = np.zeros(len(rows), dtype=np.int64)
    for j in range(rows.shape[1]):
        out = out * _ROW_BASE + rows[:, j] + 7
    return out


def _exact_code(codes: np.ndarray, code_keys: np.ndarray, code_index: np.ndarray, h: np.ndarray) -> np.ndarray:
    """Index of the code point equal to each row of h (exact integer equality), −1 where there is none."""
    idx = _lookup(code_keys, _row_keys(h))
    s = np.where(idx >= 0, code_index[np.maximum(idx, 0)], -1)
    equal = np.all(codes[np.maximum(s, 0)] == h, axis=1)
    return np.where(equal, s, -1)


def _row_index(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    keys = _row_keys(codes)
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    if np.any(sk[1:] == sk[:-1]):
        raise _Fail("two code points coincide (or collide in the exact lookup)")
    return sk, order


def _check_kinds_and_beta(i: int, fkind: np.ndarray, beta: np.ndarray) -> np.ndarray:
    """Valid kinds, and every stored β equal to its kind's value (so 1 − β ∈ {1, 0, −1}); returns those values."""
    if np.any((fkind < 0) | (fkind >= len(gh.KINDS))):
        raise _Fail(f"layer {i}: unknown GH factor kind")
    want_beta = np.array([gh.GHFactor(kind).beta for kind in gh.KINDS])[fkind]
    if np.shape(beta) != want_beta.shape:
        raise _Fail(f"layer {i}: β has shape {np.shape(beta)}, the factor kinds {want_beta.shape}")
    if not _same(beta, want_beta.astype(np.float64)):
        r, j = np.argwhere(beta != want_beta)[0]
        raise _Fail(
            f"layer {i} row {r} factor {j}: β = {beta[r, j]} but a {gh.KINDS[fkind[r, j]]} factor has "
            f"β = {want_beta[r, j]}"
        )
    return want_beta


def _check_angle_factors(
    i: int, den: int, fkind: np.ndarray, fargs: np.ndarray, beta: np.ndarray, v: np.ndarray
) -> None:
    """Angle layers: identity padding (v = e_0) and angle reflections with denominator den (v = rounded
    (cos πa/den, sin πa/den)), β exact."""
    _check_kinds_and_beta(i, fkind, beta)
    angle = fkind == gh.KIND_CODE["angle"]
    if np.any(~angle & (fkind != gh.KIND_CODE["identity"])) or np.any(angle & (fargs[..., 1] != den)):
        r, j = np.argwhere((~angle & (fkind != gh.KIND_CODE["identity"])) | (angle & (fargs[..., 1] != den)))[0]
        raise _Fail(f"layer {i} row {r} factor {j}: not an angle reflection with denominator {den}")
    want = np.where(angle[..., None], gh.unit_vectors(np.where(angle, fargs[..., 0], 0), den), [1.0, 0.0])
    if not _same(v, want):
        raise _Fail(f"layer {i}{_first_row(v, want)}: v differs from the direction of its exact description")


def _rational_products(
    i: int, n: int, fkind: np.ndarray, fargs: np.ndarray, beta: np.ndarray, v: np.ndarray
) -> np.ndarray:
    """A(r) = C_k ⋯ C_1 for every row r, C = I − (β/uᵀu) u uᵀ with the integer direction u of each factor's exact
    description, multiplied out in integer arithmetic (vectorized over rows).

    Checked on the way: kinds and indices valid, β equal to its kind's value (so 1 − β ∈ [−1, 1]) and β/uᵀu an
    integer, and every stored float of v equal to the rounding of u/‖u‖ (0, ±1, ±1/√2; e_0 for the padding).
    """
    r_count, k = fkind.shape
    want_beta = _check_kinds_and_beta(i, fkind, beta)
    if np.any(fkind == gh.KIND_CODE["angle"]):
        raise _Fail(f"layer {i}: an angle factor in a rational layer")
    a_, b_ = fargs[..., 0], fargs[..., 1]
    swap, single = fkind == gh.KIND_CODE["swap"], np.isin(fkind, [gh.KIND_CODE["project"], gh.KIND_CODE["negate"]])
    bad = (swap & ~((0 <= a_) & (a_ < n) & (0 <= b_) & (b_ < n) & (a_ != b_))) | (single & ~((0 <= a_) & (a_ < n)))
    if np.any(bad):
        r, j = np.argwhere(bad)[0]
        raise _Fail(f"layer {i} row {r} factor {j}: indices out of range")
    u = np.zeros((r_count, k, n), dtype=np.int64)
    rr, jj = np.nonzero(~swap & ~single)
    u[rr, jj, 0] = 1  # identity padding (β = 0)
    rr, jj = np.nonzero(single)
    u[rr, jj, a_[rr, jj]] = 1
    rr, jj = np.nonzero(swap)
    u[rr, jj, a_[rr, jj]] = 1
    u[rr, jj, b_[rr, jj]] = -1
    norm2 = (u * u).sum(-1)
    beta_int = want_beta.astype(np.int64)
    if np.any(beta_int % norm2):
        raise _Fail(f"layer {i}: some β/uᵀu is not an integer (this check supports integer products)")
    coef = beta_int // norm2
    # u has entries 0, ±1, so u/‖u‖ rounds entrywise to u · round(1/√(uᵀu)) (negation is exact)
    scale = np.array([inv_sqrt(int(q)) for q in range(int(norm2.max(initial=1)) + 1)[1:]] or [1.0])
    want_v = u * scale[norm2 - 1][..., None]
    if not _same(v, want_v):
        bad_v = np.any(v != want_v, axis=-1) if np.shape(v) == want_v.shape else np.ones((1, 1), dtype=bool)
        r, j = np.argwhere(bad_v)[0]
        raise _Fail(f"layer {i} row {r} factor {j}: v differs from the direction of its exact description")
    a = np.broadcast_to(np.eye(n, dtype=np.int64), (r_count, n, n)).copy()
    for j in range(k):  # A ← (I − c u uᵀ) A = A − c u (uᵀ A)
        uj = u[:, j]
        a = a - coef[:, j, None, None] * uj[:, :, None] * np.einsum("rn,rnm->rm", uj, a)[:, None, :]
    return a


def _check_integer_norm(i: int, a: np.ndarray) -> None:
    """‖A(r)‖₂ ≤ 1 exactly for integer matrices: every row and every column has squared norm ≤ 1 (see module doc)."""
    sq = a * a
    if len(a) and (sq.sum(axis=2).max() > 1 or sq.sum(axis=1).max() > 1):
        r = int(np.argwhere((sq.sum(axis=2).max(axis=1) > 1) | (sq.sum(axis=1).max(axis=1) > 1))[0, 0])
        raise _Fail(f"layer {i} row {r}: A has spectral norm > 1 (Proposition 1)")


def exact_layer(spec: LinearLayer) -> Any:
    """The exact form of one layer: exponents (diagonal), angle indices or integers (GH); ExactnessError when the
    stored weights are not what that form describes."""
    if spec.diagonal:
        return _DiagonalLayer(spec)
    if spec.exact == "angle":
        return _AngleLayer(spec)
    return _RationalLayer(spec)


class ExactLinearRNN:
    """A linear-RNN program in exact arithmetic: ``layers`` (each with initial/step/decode/row_classes), the
    cascade wiring and the final readout. ExactnessError when the stored weights have no exact form."""

    def __init__(self, program: LinearRNNProgram) -> None:
        self.program = program
        self.layers = [exact_layer(spec) for spec in program.layers]
        self.radices = [spec.radix for spec in program.layers]

    def decode(self, hs: list[np.ndarray]) -> list[np.ndarray]:
        """Every layer's state of exact hidden vectors; ExactnessError where one is not a code point."""
        ss = [layer.decode(x) for layer, x in zip(self.layers, hs)]
        for j, s in enumerate(ss):
            if np.any(s < 0):
                raise _Fail(f"layer {j}: a reachable hidden vector is not a code point (closure fails)")
        return ss

    def read(self, ss: list[np.ndarray]) -> np.ndarray:
        """The automaton state of tuples of layer states; ExactnessError where the final readout has none."""
        p = self.program
        idx = lookup_sorted(p.final_keys, encode(ss, p.final_radix, LOW_FIRST))
        if np.any(idx < 0):
            raise _Fail("a reachable tuple of layer states has no entry in the final readout")
        return p.final_states[idx]

    def rows(self, x: np.ndarray, ss: list[np.ndarray]) -> list[np.ndarray]:
        """Every layer's row for symbols x after layer states ss (the previous step's: the cascade shift)."""
        out = []
        for j, layer in enumerate(self.layers):
            rows = lookup_sorted(layer.keys, layer_keys(x, ss[:j], self.radices[j], LOW_FIRST))
            if np.any(rows < 0):
                x0 = self.program.symbols[int(x[np.argmax(rows < 0)])]
                raise _Fail(f"layer {j}: a reachable input (symbol {x0!r}, upper states) has no row")
            out.append(rows)
        return out

    def initial(self, n: int = 1) -> list[np.ndarray]:
        return [np.repeat(layer.initial(), n, axis=0) for layer in self.layers]

    def step(self, hs: list[np.ndarray], x: np.ndarray, ss: list[np.ndarray] | None = None) -> list[np.ndarray]:
        ss = self.decode(hs) if ss is None else ss
        return [layer.step(h, r) for layer, h, r in zip(self.layers, hs, self.rows(x, ss))]

    def predict_states(self, symbol_ids: Any, lengths: Any = None) -> np.ndarray:
        """The automaton state after each symbol, exactly (as the float executors answer: fsa/inputs.py);
        ExactnessError where the model leaves its code."""
        x = check_symbol_ids(symbol_ids, self.program.n_symbols, lengths, symbols=self.program.symbols)
        bsz, length = x.ids.shape
        out = np.full((bsz, length), -1, dtype=np.int64)
        hs = self.initial(bsz)
        for t in range(length):
            hs = self.step(hs, x.ids[:, t])
            out[:, t] = self.read(self.decode(hs))
        return x.finish(out)

    def configuration_graph(self, limit: int = MAX_CONFIGURATIONS) -> dict[str, Any]:
        """Breadth-first search over the exact configurations (every layer's hidden vector) from H_0 under every
        symbol: ``{n, edges: (E, 3) [source, symbol, target], rows: (E, L), dist: (n,), parent: (n, 2)
        [configuration, symbol], states: (n,) automaton state of each, classes: per layer ZERO/ORTHOGONAL/OTHER of
        every row}`` (configuration 0 is the initial one). ExactnessError when a reachable configuration is not a
        code point, has no row or no readout; LimitExceededError past ``limit`` configurations."""
        n_sym = self.program.n_symbols
        hs = self.initial(1)
        index: dict[bytes, int] = {_packed(hs)[0].tobytes(): 0}
        dist, parent, states = [0], [(-1, -1)], [self.read(self.decode(hs))]
        edges, rows_all = [], []
        frontier, ids = hs, np.array([0])
        while len(ids):
            ss = self.decode(frontier)
            cand: list[list[np.ndarray]] = [[] for _ in self.layers]
            src, sym = [], []
            for x in range(n_sym):
                xs = np.full(len(ids), x, dtype=np.int64)
                rows = self.rows(xs, ss)
                for j, (layer, r) in enumerate(zip(self.layers, rows)):
                    cand[j].append(layer.step(frontier[j], r))
                rows_all.append(np.stack(rows, axis=1))
                src.append(ids)
                sym.append(xs)
            new = [np.concatenate(c) for c in cand]
            src_a, sym_a = np.concatenate(src), np.concatenate(sym)
            packed = _packed(new)
            uniq, first, inverse = np.unique(packed, axis=0, return_index=True, return_inverse=True)
            target = np.empty(len(uniq), dtype=np.int64)
            keep = []
            for u, i in enumerate(first.tolist()):
                key = uniq[u].tobytes()
                if key not in index:
                    index[key] = len(dist)
                    dist.append(dist[src_a[i]] + 1)
                    parent.append((int(src_a[i]), int(sym_a[i])))
                    keep.append(i)
                target[u] = index[key]
                if len(dist) > limit:
                    raise LimitExceededError(f"more than {limit} reachable configurations (limit {limit})")
            edges.append(np.stack([src_a, sym_a, target[inverse.reshape(-1)]], axis=1))
            frontier = [c[keep] for c in new]
            ids = target[inverse.reshape(-1)][keep]
            if keep:
                states.append(self.read(self.decode(frontier)))
        return {
            "n": len(dist),
            "edges": np.concatenate(edges),
            "rows": np.concatenate(rows_all),
            "dist": np.array(dist),
            "parent": np.array(parent),
            "states": np.concatenate(states),
            "classes": [layer.row_classes() for layer in self.layers],
        }


def _packed(hs: list[np.ndarray]) -> np.ndarray:
    return np.concatenate([np.asarray(x, dtype=np.int64).reshape(len(x), -1) for x in hs], axis=1)


def exact_interpreter(model: CompiledModel) -> ExactLinearRNN:
    """The exact interpreter of a linear-RNN model; ExactnessError when its weights have no exact form (or the
    header does not describe them: a ModelFileError of the program is reported the same way)."""
    try:
        program = program_of(model, integrity=False)
    except ModelFileError as exc:
        raise _Fail(str(exc)) from None
    if not isinstance(program, LinearRNNProgram):
        raise _Fail(f"target {program.target!r} is not a linear-RNN model")
    return ExactLinearRNN(program)


# ---------------------------------------------------------------------------------------------------- main entry
def explore(model: CompiledModel, limit: int = MAX_CONFIGURATIONS) -> dict[str, Any]:
    """The configuration graph's (decoded state, symbol, decoded successor) triples.

    Returns {"ok", "failure", "configurations", "edges": (state, symbol, next_state) int array (unique rows)}.
    Independent of any automaton: ``exact_check`` compares the edges with δ, ``automaton_from_model`` reads δ off them.
    """
    try:
        machine = exact_interpreter(model)
        q0 = int(machine.read(machine.decode(machine.initial(1)))[0])
        if q0 != int(model.header["initial"]):
            raise _Fail(f"H_0 decodes to state {q0}, not the initial state {model.header['initial']}")
        graph = machine.configuration_graph(limit)
    except _Fail as exc:
        return {"ok": False, "failure": str(exc), "configurations": 0, "edges": np.zeros((0, 3), dtype=np.int64)}
    e, q = graph["edges"], graph["states"]
    edges = np.unique(np.stack([q[e[:, 0]], e[:, 1], q[e[:, 2]]], axis=1), axis=0)
    return {"ok": True, "failure": None, "configurations": graph["n"], "edges": edges}


def exact_check(model: CompiledModel, automaton: Automaton) -> dict[str, Any]:
    """Weights and closure checked exactly, and every reachable (state, symbol) step compared with δ.

    Returns {"ok": bool, "failure": str | None, "configurations": int, "transitions_checked": int}.
    """
    if list(automaton.symbols) != model.symbols or list(automaton.states) != model.states:
        return {
            "ok": False,
            "failure": "the model's states or symbols differ from the automaton's",
            "configurations": 0,
        }
    res = explore(model)
    if not res["ok"]:
        return {k: v for k, v in res.items() if k != "edges"}
    e = res["edges"]
    want = automaton.transitions[e[:, 1], e[:, 0]]
    bad = np.flatnonzero(want != e[:, 2])
    out = {"ok": True, "failure": None, "configurations": res["configurations"], "transitions_checked": len(e)}
    if len(bad):
        q, x, got = e[bad[0]]
        out["ok"] = False
        out["failure"] = (
            f"from state {automaton.states[q]!r} symbol {automaton.symbols[x]!r} the model reaches "
            f"{automaton.states[got]!r}, the automaton {automaton.states[want[bad[0]]]!r}"
        )
    return out


def verify_check(model: CompiledModel, automaton: Automaton, *, dtype: str = "float64") -> tuple[dict[str, Any], bool]:
    """What ``verify`` reports for a linear-RNN model: the exact check (:func:`exact_check`), any dtype."""
    ex = exact_check(model, automaton)
    return {"exact": dict(ex)}, bool(ex["ok"])


def realized_automaton(model: CompiledModel) -> Automaton:
    """The automaton the model's exact dynamics realize, read off the configuration search (:func:`explore`) on
    the header's names; states not reachable from the initial state keep self-loops (they are never observed). A
    model whose dynamics send one state to two different successors on one symbol realizes no automaton."""
    res = explore(model)
    if not res["ok"]:
        raise ModelFileError(f"the model's exact dynamics are inconsistent: {res['failure']}")
    h = model.header
    n, k = len(h["states"]), len(h["symbols"])
    table = np.tile(np.arange(n), (k, 1))
    e = res["edges"]
    table[e[:, 1], e[:, 0]] = e[:, 2]
    pairs = e[:, :2]
    if len(np.unique(pairs, axis=0)) != len(pairs):
        raise ModelFileError(
            "the model's dynamics are not those of an automaton: one (state, symbol) has two successors"
        )
    return Automaton(
        table,
        states=h["states"],
        symbols=h["symbols"],
        initial=h["initial"],
        accepting=h.get("accepting"),
        name=h.get("name"),
    )
