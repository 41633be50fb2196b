"""Exact check of a compiled linear-RNN model (targets "householder" and "diagonal"), with no floating point.

1. Weights: every GH factor's β and v agree with its exact description (β stored exactly; v = u/‖u‖ with a rational
   direction u, or (cos πa/den, sin πa/den)); 1 − β ∈ [−1, 1]; each fused A(r) equals the product C_k ⋯ C_1 of its
   factors multiplied out in rational arithmetic (integer here: v = (e_i − e_j)/√2 gives vvᵀ with entries ±½, and
   β = 2 clears the ½), and has spectral norm ≤ 1 (Proposition 1). Angle layers: the product's action on angle
   indices (a reflection maps angle θ to 2φ_v + π − θ); diagonal layers: eigenvalues as exponents of roots of unity.
2. Closure: a breadth-first search over configurations (automaton state q, exact hidden vector of every layer) from
   (q0, H_0): for each configuration and symbol x, the next hidden vectors A(r)H + B(r) are computed exactly, each
   must equal a code point exactly (not merely decode to one), and the final readout of the decoded tuple must be
   δ_x(q). This covers every reachable code point and every symbol, hence every word.

The hidden vectors of rational layers are integer vectors here (all our constructions: 0/±1 matrices, integer codes);
a layer with non-integer entries is reported as unsupported rather than checked approximately.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fsa2rnn.fsa.automaton import Automaton
from fsa2rnn.fsa.errors import LimitExceededError

from . import gh
from .lrnn_spec import encode_keys
from .model import CompiledModel

#: most configurations (q, hidden vectors) the closure search visits
MAX_CONFIGURATIONS = 2 * 10**6
_TOL = 1e-9


class _Fail(Exception):
    pass


def _lookup(sorted_keys: np.ndarray, key: np.ndarray) -> np.ndarray:
    """Index of each key in a sorted array, −1 where absent."""
    if len(sorted_keys) == 0:
        return np.full(key.shape, -1, dtype=np.int64)
    pos = np.clip(np.searchsorted(sorted_keys, key), 0, len(sorted_keys) - 1)
    return np.where(sorted_keys[pos] == key, pos, -1)


class _RationalLayer:
    """Exact integer form of a GH layer with rational (here: integer) weights."""

    def __init__(self, i: int, entry: dict, t: dict[str, np.ndarray]) -> None:
        name = entry["name"]
        self.i, self.name, self.n = i, name, int(entry["width"])
        self.keys = encode_keys(list(t[f"{name}.keys"].T), entry["radix"])
        if np.any(np.diff(self.keys) <= 0):
            raise _Fail(f"layer {i}: input keys are not sorted and distinct")
        self.A = _rational_products(
            i, self.n, t[f"{name}.fkind"], t[f"{name}.fargs"], t[f"{name}.beta"], t[f"{name}.v"]
        )
        fused = t[f"{name}.A"]
        if not np.array_equal(self.A.astype(np.float64), fused):
            r = int(np.argwhere(np.any(self.A.astype(np.float64) != fused, axis=(1, 2)))[0, 0])
            raise _Fail(f"layer {i} row {r}: the stored fused A differs from the exact product of its GH factors")
        _check_norm(i, fused)
        self.B = _as_int(t[f"{name}.B"], f"layer {i} B")
        self.h0 = _as_int(t[f"{name}.h0"], f"layer {i} h0")
        self.readout = entry["readout"]
        if self.readout == "nearest":
            self.codes = _as_int(t[f"{name}.codes"], f"layer {i} code points")
            self.code_keys, self.code_index = _row_index(self.codes)
        else:
            self.hkeys, self.hvals = t[f"{name}.hkeys"], t[f"{name}.hvals"]
            if np.any(np.diff(self.hkeys) <= 0):
                raise _Fail(f"layer {i}: hash readout keys are not sorted and distinct")

    def initial(self) -> np.ndarray:
        return self.h0[None, :]

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

    def __init__(self, i: int, entry: dict, t: dict[str, np.ndarray]) -> None:
        name = entry["name"]
        self.i, self.n = i, 2
        self.den = int(entry["angle_den"])
        self.keys = encode_keys(list(t[f"{name}.keys"].T), entry["radix"])
        if np.any(np.diff(self.keys) <= 0):
            raise _Fail(f"layer {i}: input keys are not sorted and distinct")
        _check_factors(i, name, entry, t)
        factors = gh.unpack(t[f"{name}.fkind"], t[f"{name}.fargs"])
        mod = 2 * self.den
        sign, off = [], []
        for r, fs in enumerate(factors):
            s, o = 1, 0  # a ↦ s·a + o
            for f in fs:
                if f.kind == "identity":
                    continue
                if f.kind != "angle" or f.b != self.den:
                    raise _Fail(f"layer {i} row {r}: factor {f} is not an angle reflection with denominator {self.den}")
                c = (2 * f.a + self.den) % mod  # θ ↦ c − θ
                s, o = -s, (c - o) % mod
            sign.append(s)
            off.append(o)
            a_exact = _angle_matrix(s, o, self.den)
            if np.max(np.abs(a_exact - t[f"{name}.A"][r])) > _TOL:
                raise _Fail(f"layer {i} row {r}: the stored fused A differs from the product of its reflections")
        self.sign, self.off = np.array(sign), np.array(off)
        _check_norm(i, t[f"{name}.A"])
        if np.any(t[f"{name}.B"] != 0):
            raise _Fail(f"layer {i}: an angle layer must have B = 0")
        self.h0_angle = int(entry["h0_angle"]) % mod
        if np.max(np.abs(_unit(self.h0_angle, self.den) - t[f"{name}.h0"])) > _TOL:
            raise _Fail(f"layer {i}: H_0 differs from its declared angle")
        self.code_angles = t[f"{name}.code_angles"] % mod
        codes = t[f"{name}.codes"]
        if len(codes) != len(self.code_angles) or np.max(np.abs(_unit(self.code_angles, self.den) - codes)) > _TOL:
            raise _Fail(f"layer {i}: code points differ from their declared angles")
        self.angle_to_code = np.full(mod, -1, dtype=np.int64)
        self.angle_to_code[self.code_angles] = np.arange(len(self.code_angles))

    def initial(self) -> np.ndarray:
        return np.array([[self.h0_angle]])

    def step(self, h: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return ((self.sign[rows] * h[:, 0] + self.off[rows]) % (2 * self.den))[:, None]

    def decode(self, h: np.ndarray) -> np.ndarray:
        return self.angle_to_code[h[:, 0]]


class _DiagonalLayer:
    """A diagonal layer: coordinate j is ζ_{m_j}^e (exponent e mod m_j), or an integer when m_j = 0."""

    def __init__(self, i: int, entry: dict, t: dict[str, np.ndarray]) -> None:
        name = entry["name"]
        self.i = i
        self.keys = encode_keys(list(t[f"{name}.keys"].T), entry["radix"])
        if np.any(np.diff(self.keys) <= 0):
            raise _Fail(f"layer {i}: input keys are not sorted and distinct")
        self.m = t[f"{name}.moduli"]
        self.exps = t[f"{name}.exponents"]
        self.reset = t[f"{name}.reset"].astype(bool)
        self.rcode = self._norm(t[f"{name}.reset_code"])
        self.codes = self._norm(t[f"{name}.code_exponents"])
        safe = np.where(self.m > 0, self.m, 1)
        lam = np.where(self.m > 0, np.exp(2j * np.pi * self.exps / safe), 1.0 + 0j)
        lam[self.reset] = 0
        stored = t[f"{name}.lam_re"] + 1j * t[f"{name}.lam_im"]
        if np.max(np.abs(lam - stored), initial=0) > _TOL:
            raise _Fail(f"layer {i}: stored eigenvalues differ from their exponents")
        if np.any(~self.reset[:, None] & (np.abs(np.abs(stored) - 1) > _TOL)):
            raise _Fail(f"layer {i}: an eigenvalue has modulus ≠ 1 on a non-reset row")
        b = self._value(self.rcode)
        b[~self.reset] = 0
        if np.max(np.abs(b - (t[f"{name}.B_re"] + 1j * t[f"{name}.B_im"])), initial=0) > _TOL:
            raise _Fail(f"layer {i}: stored B differs from the exact reset codes")
        if np.max(np.abs(self._value(self.codes) - (t[f"{name}.codes_re"] + 1j * t[f"{name}.codes_im"]))) > _TOL:
            raise _Fail(f"layer {i}: code points differ from their exponents")
        self.code_keys, self.code_index = _row_index(self.codes)
        self.code_states = t[f"{name}.code_states"]
        if np.any((self.code_states < 0) | (self.code_states >= int(entry["n_states"]))):
            raise _Fail(f"layer {i}: a code point maps to a layer state out of range")
        self.h0 = self.codes[int(entry["h0_index"])]

    def _norm(self, e: np.ndarray) -> np.ndarray:
        return np.where(self.m > 0, e % np.where(self.m > 0, self.m, 1), e)

    def _value(self, e: np.ndarray) -> np.ndarray:
        safe = np.where(self.m > 0, self.m, 1)
        return np.where(self.m > 0, np.exp(2j * np.pi * e / safe), e).astype(complex)

    def initial(self) -> np.ndarray:
        return self.h0[None, :]

    def step(self, h: np.ndarray, rows: np.ndarray) -> np.ndarray:
        rot = self._norm(h + np.where(self.m > 0, self.exps[rows], 0))
        return np.where(self.reset[rows][:, None], self.rcode[rows], rot)

    def decode(self, h: np.ndarray) -> np.ndarray:
        s = _exact_code(self.codes, self.code_keys, self.code_index, h)
        return np.where(s >= 0, self.code_states[np.maximum(s, 0)], -1)


# ---------------------------------------------------------------------------------------------------- helpers
def _unit(a: Any, den: int) -> np.ndarray:
    ang = np.pi * np.asarray(a, dtype=np.float64) / den
    return np.stack([np.cos(ang), np.sin(ang)], axis=-1)


def _angle_matrix(s: int, o: int, den: int) -> np.ndarray:
    """The matrix of a ↦ s·a + o on unit vectors: a rotation by πo/den (s = 1) or a reflection (s = −1)."""
    c, sn = np.cos(np.pi * o / den), np.sin(np.pi * o / den)
    return np.array([[c, -sn], [sn, c]]) if s == 1 else np.array([[c, sn], [sn, -c]])


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


def _check_factors(i: int, name: str, entry: dict, t: dict[str, np.ndarray]) -> None:
    fkind, fargs, beta, v = t[f"{name}.fkind"], t[f"{name}.fargs"], t[f"{name}.beta"], t[f"{name}.v"]
    n = int(entry["width"])
    if np.any((fkind < 0) | (fkind >= len(gh.KINDS))):
        raise _Fail(f"layer {i}: unknown GH factor kind")
    if np.any(np.abs(1 - beta) > 1):
        r, j = np.argwhere(np.abs(1 - beta) > 1)[0]
        raise _Fail(f"layer {i} row {r} factor {j}: 1 − β = {1 - beta[r, j]} is outside [−1, 1]")
    if np.max(np.abs(np.linalg.norm(v, axis=-1) - 1), initial=0) > _TOL:
        raise _Fail(f"layer {i}: a GH direction v is not a unit vector")
    for r, fs in enumerate(gh.unpack(fkind, fargs)):
        for j, f in enumerate(fs):
            if beta[r, j] != f.beta:
                raise _Fail(f"layer {i} row {r} factor {j}: β = {beta[r, j]} but a {f.kind} factor has β = {f.beta}")
            bad_swap = f.kind == "swap" and not (0 <= f.a < n and 0 <= f.b < n and f.a != f.b)
            if bad_swap or (f.kind in ("project", "negate") and not 0 <= f.a < n):
                raise _Fail(f"layer {i} row {r} factor {j}: indices out of range")
            if np.max(np.abs(f.direction(n) - v[r, j])) > _TOL and f.kind != "identity":
                raise _Fail(f"layer {i} row {r} factor {j}: v differs from the direction of its exact description")


def _rational_products(
    i: int, n: int, fkind: np.ndarray, fargs: np.ndarray, beta: np.ndarray, v: np.ndarray
) -> np.ndarray:
    """A(r) = C_k ⋯ C_1 for every row r, C = I − (β/uᵀu) u uᵀ with the integer direction u of each factor's exact
    description, multiplied out in integer arithmetic (vectorized over rows).

    Checked on the way: kinds and indices valid, β equal to its kind's value (so 1 − β ∈ [−1, 1]) and β/uᵀu an
    integer, the stored float v equal to u/‖u‖.
    """
    r_count, k = fkind.shape
    if np.any((fkind < 0) | (fkind >= len(gh.KINDS))):
        raise _Fail(f"layer {i}: unknown GH factor kind")
    if np.any(fkind == gh.KIND_CODE["angle"]):
        raise _Fail(f"layer {i}: an angle factor in a rational layer")
    a_, b_ = fargs[..., 0], fargs[..., 1]
    swap, single = fkind == gh.KIND_CODE["swap"], np.isin(fkind, [gh.KIND_CODE["project"], gh.KIND_CODE["negate"]])
    bad = (swap & ~((0 <= a_) & (a_ < n) & (0 <= b_) & (b_ < n) & (a_ != b_))) | (single & ~((0 <= a_) & (a_ < n)))
    if np.any(bad):
        r, j = np.argwhere(bad)[0]
        raise _Fail(f"layer {i} row {r} factor {j}: indices out of range")
    want_beta = np.array([gh.GHFactor(kind).beta for kind in gh.KINDS])[fkind]
    if np.any(beta != want_beta):
        r, j = np.argwhere(beta != want_beta)[0]
        raise _Fail(
            f"layer {i} row {r} factor {j}: β = {beta[r, j]} but a {gh.KINDS[fkind[r, j]]} factor has "
            f"β = {want_beta[r, j]}"
        )
    if np.any(np.abs(1 - beta) > 1):
        raise _Fail(f"layer {i}: some 1 − β is outside [−1, 1]")
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
    live = fkind != gh.KIND_CODE["identity"]
    if np.any(live & (np.abs(v - u / np.sqrt(norm2)[..., None]).max(-1) > _TOL)):
        r, j = np.argwhere(live & (np.abs(v - u / np.sqrt(norm2)[..., None]).max(-1) > _TOL))[0]
        raise _Fail(f"layer {i} row {r} factor {j}: v differs from the direction of its exact description")
    if np.max(np.abs(np.linalg.norm(v, axis=-1) - 1), initial=0) > _TOL:
        raise _Fail(f"layer {i}: a GH direction v is not a unit vector")
    a = np.broadcast_to(np.eye(n, dtype=np.int64), (r_count, n, n)).copy()
    for j in range(k):  # A ← (I − c u uᵀ) A = A − c u (uᵀ A)
        uj = u[:, j]
        a = a - coef[:, j, None, None] * uj[:, :, None] * np.einsum("rn,rnm->rm", uj, a)[:, None, :]
    return a


def _check_norm(i: int, fused: np.ndarray) -> None:
    if len(fused) and np.max(np.linalg.norm(fused, ord=2, axis=(1, 2))) > 1 + 1e-9:
        raise _Fail(f"layer {i}: some A(x) has spectral norm > 1 (Proposition 1)")


def _layers(model: CompiledModel) -> list[Any]:
    out = []
    for i, entry in enumerate(model.header["layers"]):
        if entry["kind"] == "diagonal":
            out.append(_DiagonalLayer(i, entry, model.tensors))
        elif entry.get("exact") == "angle":
            out.append(_AngleLayer(i, entry, model.tensors))
        else:
            out.append(_RationalLayer(i, entry, model.tensors))
    return out


# ---------------------------------------------------------------------------------------------------- main entry
def explore(model: CompiledModel, limit: int = MAX_CONFIGURATIONS) -> dict[str, Any]:
    """BFS over the model's exact configurations from H_0: (decoded state, symbol, decoded successor) triples.

    Returns {"ok", "failure", "configurations", "edges": (state, symbol, next_state) int array (unique rows)}.
    Independent of any automaton: ``exact_check`` compares the edges with δ, ``automaton_from_model`` reads δ off them.
    """
    try:
        layers = _layers(model)
        h = model.header
        radix = h["readout"]["radix"]
        fkeys, fstates = model.tensors["readout.keys"], model.tensors["readout.states"]
        n_sym = len(h["symbols"])

        def decode_all(hs: list[np.ndarray]) -> tuple[list[np.ndarray], np.ndarray]:
            ss = [layer.decode(x) for layer, x in zip(layers, hs)]
            for j, s in enumerate(ss):
                if np.any(s < 0):
                    raise _Fail(f"layer {j}: a reachable hidden vector is not a code point (closure fails)")
            idx = _lookup(fkeys, encode_keys(ss, radix))
            if np.any(idx < 0):
                raise _Fail("a reachable tuple of layer states has no entry in the final readout")
            return ss, fstates[idx]

        hs = [layer.initial() for layer in layers]
        ss, q = decode_all(hs)
        if int(q[0]) != int(h["initial"]):
            raise _Fail(f"H_0 decodes to state {int(q[0])}, not the initial state {h['initial']}")
        seen: set[bytes] = set()

        def packed(hs_: list[np.ndarray]) -> np.ndarray:
            return np.concatenate([x.astype(np.int64) for x in hs_], axis=1)

        seen.update(r.tobytes() for r in packed(hs))
        edges = []
        frontier_h, frontier_s, frontier_q = hs, ss, q
        total = 1
        while len(frontier_q):
            nxt_h: list[list[np.ndarray]] = [[] for _ in layers]
            for x in range(n_sym):
                xs = np.full(len(frontier_q), x, dtype=np.int64)
                new_h = []
                for j, layer in enumerate(layers):
                    key = encode_keys([xs] + frontier_s[:j], model.header["layers"][j]["radix"])
                    rows = _lookup(layer.keys, key)
                    if np.any(rows < 0):
                        raise _Fail(
                            f"layer {j}: a reachable input (symbol {h['symbols'][x]!r}, upper states) has no row"
                        )
                    new_h.append(layer.step(frontier_h[j], rows))
                _, nq = decode_all(new_h)
                edges.append(np.stack([frontier_q, xs, nq], axis=1))
                for j in range(len(layers)):
                    nxt_h[j].append(new_h[j])
            cand = [np.concatenate(c) for c in nxt_h]
            rows_packed = packed(cand)
            _, first = np.unique(rows_packed, axis=0, return_index=True)
            keep = [i for i in first.tolist() if rows_packed[i].tobytes() not in seen]
            seen.update(rows_packed[i].tobytes() for i in keep)
            frontier_h = [c[keep] for c in cand]
            frontier_s, frontier_q = decode_all(frontier_h) if keep else ([], np.zeros(0, dtype=np.int64))
            total += len(keep)
            if total > limit:
                raise LimitExceededError(f"exact check: more than {limit} reachable configurations (limit {limit})")
        all_edges = np.unique(np.concatenate(edges), axis=0) if edges else np.zeros((0, 3), dtype=np.int64)
        return {"ok": True, "failure": None, "configurations": total, "edges": all_edges}
    except _Fail as exc:
        return {"ok": False, "failure": str(exc), "configurations": 0, "edges": np.zeros((0, 3), dtype=np.int64)}


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
