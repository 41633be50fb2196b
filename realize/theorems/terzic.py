"""Claims of Terzić et al. 2025 (PD-SSM, arXiv 2509.22284), as compiled by ``compile_pdssm``."""

from __future__ import annotations

from ...compiler import compile_pdssm
from ...compiler.targets.pdssm.automaton_to_pdssm import check_pdssm
from ...fsa.library import resolve_spec
from .brandoit import _random_automata
from .claims import Part, checked, require, theorem, verified
from .common import float_run, near_miss, ulp_near_misses

SRC = "Terzić et al. 2025, PD-SSM (arXiv 2509.22284)"


@theorem(
    "terzic.pdssm",
    f"{SRC}, the emulation result",
    "one PD-SSM layer h_t = P(x_t) D(x_t) h_(t−1) of dimension N = |Q| (P column one-hot, D diagonal) emulates any "
    "N-state automaton: P(x) = δ_x, D(x) = I, h_0 = e_(q0)",
    "construction",
)
def pdssm(thorough: bool) -> list[Part]:
    autos = [resolve_spec(s) for s in ("T4", "flipflop", "S5", "regex:(a|b)*abb")] + _random_automata(
        20 if thorough else 5, 2
    )
    length = 512 if thorough else 128
    ulps = 0
    for a in autos:
        m = compile_pdssm(a)
        n = a.n_states
        require(
            m.summary["layers"] == 1 and m.summary["width"] == n and m.tensors["pd.P"].shape == (a.n_symbols, n),
            f"{a.name}: {m.summary['layers']} layers of width {m.summary['width']}, not one of N = |Q| = {n}",
        )
        ok = check_pdssm(m, a)
        require(bool(ok["ok"]), f"{a.name}: the exact check fails: {ok['failure']}")
        require(not check_pdssm(m, near_miss(a))["ok"], f"{a.name}: the exact check accepts a near miss")
        for where, off in ulp_near_misses(m):
            require(not check_pdssm(off, a)["ok"], f"{a.name}: the exact check accepts {where} one ulp off")
            ulps += 1
        float_run(m, a, length=length)
    cases = f"{len(autos)} automata: T4, flip-flop, S5, (a|b)*abb, {len(autos) - 4} random (seed 2)"
    return [
        verified(
            "one layer of width N = |Q|, P(x) the index array of δ_x; the exact check (integer arithmetic: the code "
            "points e_q closed under P(x)D(x), the readout commuting with δ) accepts each model, rejects it against "
            f"a near miss (one entry of δ changed) and rejects all {ulps} copies with one float weight one ulp off",
            cases=cases,
        ),
        checked(
            "float64 runs read every state right",
            cases=cases,
            tolerance="none (argmax readout equal)",
            samples=f"8 random words × {length}",
        ),
    ]
