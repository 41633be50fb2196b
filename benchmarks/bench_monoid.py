"""Transition-monoid engine against libsemigroups_pybind11, side by side in one run.

Targets: T_7 (823,543 elements, both Cayley graphs) at least 2× faster than libsemigroups' FroidurePin;
T_8 (16,777,216 elements, both Cayley graphs) in under 15 s and 4 GiB peak RSS; a random 10-state 3-symbol
automaton (seed 15 of ``np.random.default_rng(seed).integers(0, 10, (3, 10))``: 1,651,683 elements) with both
Cayley graphs in under 10 s; Green's classes of T_7 by the full enumeration in under 5 s; ``green_classes`` of T_7
(D, R, L, H classes, regular D-classes, subgroup orders — no enumeration) within 5× of libsemigroups' Konieczny,
medians of 5 runs in this process; ``fsa2rnn analyze T8`` under 10 s wall.

    python benchmarks/bench_monoid.py            # everything (about a minute)
    python benchmarks/bench_monoid.py --quick    # T_7, Green's classes (both ways) and analyze T8

T_8 and ``analyze T8`` run in child processes so that their peak RSS (resource.getrusage) is their own.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np

from fsa2rnn.fsa.dclasses import green_classes
from fsa2rnn.fsa.monoid import TransitionMonoid, full_transformation_generators

RANDOM_SEED = 15


def random_generators(seed: int = RANDOM_SEED) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 10, size=(3, 10))


def ours(gens: np.ndarray) -> tuple[float, TransitionMonoid]:
    """Seconds to enumerate the monoid with both Cayley graphs."""
    t = time.perf_counter()
    M = TransitionMonoid(gens)
    M.left_cayley  # noqa: B018 - forces the left Cayley graph
    return time.perf_counter() - t, M


def _libsemigroups_transformations(gens: np.ndarray) -> tuple[Any, Any, list[Any]] | None:
    """(the module, a guard silencing its reports, the generators and the identity as ls.Transf), or None."""
    try:
        import libsemigroups_pybind11 as ls
    except ImportError:
        return None
    n = gens.shape[1]
    elts = [ls.Transf([int(v) for v in g]) for g in gens] + [ls.Transf(list(range(n)))]
    return ls, ls.ReportGuard(False), elts


def froidure_pin(gens: np.ndarray) -> tuple[float, int] | None:
    """Seconds for libsemigroups' FroidurePin: full enumeration plus the right and left Cayley graphs."""
    found = _libsemigroups_transformations(gens)
    if found is None:
        return None
    ls, _guard, elts = found
    t = time.perf_counter()
    S = ls.FroidurePin(elts)
    S.run()
    S.right_cayley_graph()
    S.left_cayley_graph()
    return time.perf_counter() - t, S.size()


def konieczny(gens: np.ndarray) -> float | None:
    """Seconds for libsemigroups' Konieczny: the numbers of D, L, R and H classes."""
    found = _libsemigroups_transformations(gens)
    if found is None:
        return None
    ls, _guard, elts = found
    t = time.perf_counter()
    K = ls.Konieczny(elts)
    K.number_of_D_classes(), K.number_of_L_classes(), K.number_of_R_classes(), K.number_of_H_classes()
    return time.perf_counter() - t


def konieczny_figures(gens: np.ndarray) -> tuple[float, dict[str, Any]] | None:
    """Seconds for libsemigroups' Konieczny to give the figures green_classes gives, and those figures."""
    found = _libsemigroups_transformations(gens)
    if found is None:
        return None
    ls, _guard, elts = found
    t = time.perf_counter()
    K = ls.Konieczny(elts)
    figures = {
        "D": K.number_of_D_classes(),
        "R": K.number_of_R_classes(),
        "L": K.number_of_L_classes(),
        "H": K.number_of_H_classes(),
        "regular D": K.number_of_regular_D_classes(),
        "subgroup orders": sorted(d.size_H_class() for d in K.D_classes() if d.is_regular_D_class()),
    }
    return time.perf_counter() - t, figures


def green_figures(gens: np.ndarray) -> tuple[float, dict[str, Any]]:
    """Seconds for green_classes (no enumeration) and the same figures."""
    t = time.perf_counter()
    S = green_classes(gens)
    figures = {
        "D": S.number_of_D_classes,
        "R": S.number_of_R_classes,
        "L": S.number_of_L_classes,
        "H": S.number_of_H_classes,
        "regular D": S.number_of_regular_D_classes,
        "subgroup orders": sorted(h.order for h in S.maximal_subgroups),
    }
    return time.perf_counter() - t, figures


def green_side_by_side(label: str, gens: np.ndarray, repeats: int = 5) -> float:
    """Medians of ``repeats`` alternating runs of green_classes and Konieczny; prints each figure beside
    Konieczny's; returns the time ratio (ours / theirs)."""
    ours_t, theirs_t = [], []
    theirs_fig = None
    for _ in range(repeats):
        t, ours_fig = green_figures(gens)
        ours_t.append(t)
        k = konieczny_figures(gens)
        if k is not None:
            theirs_t.append(k[0])
            theirs_fig = k[1]
    mine, theirs = float(np.median(ours_t)), float(np.median(theirs_t)) if theirs_t else float("nan")
    print(
        f"green_classes of {label} (no enumeration), medians of {repeats}: ours {mine * 1e3:.1f} ms, "
        f"Konieczny {theirs * 1e3:.1f} ms, ratio {mine / theirs:.2f}x"
    )
    for key, v in ours_fig.items():
        other = theirs_fig[key] if theirs_fig is not None else "—"
        print(f"  {key:<16} ours {v}   Konieczny {other}   {'same' if v == other else 'DIFFERENT'}")
        if theirs_fig is not None:
            assert v == other, f"{key} disagrees with libsemigroups"
    return mine / theirs


def _verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


def side_by_side(label: str, gens: np.ndarray, repeats: int = 1) -> float:
    t_ours, M = min((ours(gens) for _ in range(repeats)), key=lambda r: r[0])
    fp = froidure_pin(gens)
    line = f"{label}: {M.size:,} elements, ours {t_ours:.2f} s"
    ratio = float("nan")
    if fp is not None:
        assert fp[1] == M.size, "size disagrees with libsemigroups"
        ratio = fp[0] / t_ours
        line += f", FroidurePin {fp[0]:.2f} s, ratio {ratio:.1f}x"
    print(line, flush=True)
    return ratio


def child_t8() -> None:
    """Runs in a child process: T_8 with both Cayley graphs; prints JSON with time and peak RSS."""
    t, M = ours(full_transformation_generators(8))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"size": M.size, "idempotents": M.number_of_idempotents, "seconds": t, "peak_bytes": peak}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="T_7 and Green's classes only")
    ap.add_argument("--child-t8", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child_t8:
        child_t8()
        return

    ratio = side_by_side("T_7", full_transformation_generators(7), repeats=2)
    print(f"  target ≥ 2x faster than FroidurePin: {_verdict(ratio >= 2)}")

    t = time.perf_counter()
    M = TransitionMonoid(full_transformation_generators(7))
    G = M.green
    t_green = time.perf_counter() - t
    tk = konieczny(full_transformation_generators(7))
    print(
        f"Green's classes of T_7 (from scratch: elements, both graphs, R/L/H/D): {t_green:.2f} s "
        f"(D={G.number_of_D_classes}, L={G.number_of_L_classes}, R={G.number_of_R_classes}, "
        f"H={G.number_of_H_classes})" + (f"; libsemigroups Konieczny {tk:.3f} s" if tk is not None else "")
    )
    print(f"  target < 5 s: {_verdict(t_green < 5)}")

    ratio = green_side_by_side("T_7", full_transformation_generators(7))
    print(f"  target within 5x of Konieczny: {_verdict(ratio <= 5)}")

    t = time.perf_counter()  # the command as a user runs it: a fresh interpreter, imports included
    out = subprocess.run(
        [sys.executable, "-m", "fsa2rnn.cli", "analyze", "T8", "--json"], capture_output=True, text=True, check=True
    ).stdout
    wall = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024  # the only child so far
    m = json.loads(out)["monoid"]
    print(
        f"fsa2rnn analyze T8: {m['size']:,} elements, {m['idempotents']:,} idempotents, D={m['d_classes']}, "
        f"R={m['r_classes']}, L={m['l_classes']}, H={m['h_classes']} (from the D-classes) in {wall:.2f} s wall, "
        f"peak RSS {peak / 2**30:.2f} GiB"
    )
    ok = m["size"] == 8**8 and m["idempotents"] == 41393 and wall < 10
    print(f"  target < 10 s wall (size 8^8, 41,393 idempotents): {_verdict(ok)}")
    if args.quick:
        return

    gens = random_generators()
    side_by_side(f"random 10-state 3-symbol (seed {RANDOM_SEED})", gens)
    t_r, M = ours(gens)
    print(f"  ours again {t_r:.2f} s; target > 10^6 elements in < 10 s: {_verdict(M.size > 10**6 and t_r < 10)}")

    out = subprocess.run(
        [sys.executable, __file__, "--child-t8"], capture_output=True, text=True, check=True
    ).stdout.strip()
    r = json.loads(out.splitlines()[-1])
    print(
        f"T_8: {r['size']:,} elements ({r['idempotents']:,} idempotents), both Cayley graphs in {r['seconds']:.2f} s, "
        f"peak RSS {r['peak_bytes'] / 2**30:.2f} GiB"
    )
    print(f"  target < 15 s and < 4 GiB: {_verdict(r['seconds'] < 15 and r['peak_bytes'] < 4 * 2**30)}")


if __name__ == "__main__":
    main()
