"""The two meanings of "finite precision" (docs/theory.md, "Two meanings of finite precision"), in a picture:
out/precision.png.

For a few automata, each compiled model runs on random words in low-precision arithmetic and we record, for each
length t (log-spaced bins up to 10^4), the fraction of positions t where its state equals the automaton's:

- Householder LRNN, each A(x) applied factor by factor (h ← h − β v (vᵀh), v with entries ±1/√2): rounding enters
  at every step and nothing removes it, so it drifts, the sooner the coarser the dtype and the more factors per step;
- Householder LRNN, A(x) applied as its fused exact product (log-depth parallel scan): 0/±1 permutation matrices and
  integer code points are exactly representable (the negative-eigenvalues paper's finite precision), so it stays
  exact; rotations by irrational angles (the Z_m construction) are not, and drift too;
- NFSM — every step takes an argmax over a table row (restoration, R2): exact in float16 and bfloat16 alike.

Run: python examples/precision.py           (about 25 s, CPU; writes out/precision.png under the current directory)
     python examples/precision.py --quick   (the test suite's run: words of length 10^3, the same variants)
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from fsa2rnn.compiler import compile_householder, compile_nfsm  # noqa: E402
from fsa2rnn.fsa import resolve_spec  # noqa: E402
from fsa2rnn.nn import load_model  # noqa: E402

LENGTH = 10_000
QUICK_LENGTH = 1_000
WORDS = 16
SEED = 0
AUTOMATA = ["parity", "flipflop", "Z5", "S5", "M11"]
#: (label, target, mode, dtype); mode is the Householder model's predict_states(mode=…)
VARIANTS = [
    ("Householder, factor by factor, float32", "householder", "factors", torch.float32),
    ("Householder, factor by factor, bfloat16", "householder", "factors", torch.bfloat16),
    ("Householder, fused product, float32", "householder", "fused", torch.float32),
    ("Householder, fused product, bfloat16", "householder", "fused", torch.bfloat16),
    ("NFSM, float16", "nfsm", None, torch.float16),
    ("NFSM, bfloat16", "nfsm", None, torch.bfloat16),
]


def length_bins(length: int) -> np.ndarray:
    """Log-spaced bin edges in positions 1..length."""
    return np.unique(np.round(np.logspace(0, np.log10(length), 41)).astype(int))


def agreement_by_length(spec: str, length: int = LENGTH) -> tuple[np.ndarray, str]:
    """(variants, bins) fraction of positions in each length bin where the model's state is the automaton's."""
    edges = length_bins(length)
    a = resolve_spec(spec)
    compiled = {"householder": compile_householder(a), "nfsm": compile_nfsm(a)}
    ids = np.random.default_rng(SEED).integers(0, a.n_symbols, size=(WORDS, length))
    truth = a.run(ids)
    ids_t = torch.from_numpy(ids)
    rows = []
    for _, target, mode, dtype in VARIANTS:
        net = load_model(compiled[target]).to(dtype)
        # fused: the log-depth parallel scan (for 0/±1 matrices every order of multiplication is exact)
        kw = {} if mode is None else {"mode": mode, "scan": "sequential" if mode == "factors" else "parallel"}
        ok = (net.predict_states(ids_t, **kw).numpy() == truth).mean(axis=0)  # per position 1..length
        rows.append([ok[lo - 1 : hi - 1].mean() for lo, hi in zip(edges[:-1], edges[1:])])
    s = compiled["householder"].summary
    about = f"{a.n_states} states; Householder: {s['construction']}, {s['factors_per_step']} reflection(s) per step"
    return np.array(rows), about


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help=f"words of length {QUICK_LENGTH} (the test suite's run)")
    length = QUICK_LENGTH if ap.parse_args().quick else LENGTH
    edges = length_bins(length)
    start = time.perf_counter()
    torch.set_num_threads(1)  # tiny tensors: threads cost more than they save
    fig, axes = plt.subplots(
        len(AUTOMATA), 1, figsize=(10, 1.25 + 1.7 * len(AUTOMATA)), sharex=True, layout="constrained"
    )
    image = None
    for ax, spec in zip(axes, AUTOMATA):
        grid, about = agreement_by_length(spec, length)
        image = ax.pcolormesh(edges, np.arange(len(VARIANTS) + 1), grid, cmap="RdYlGn", vmin=0, vmax=1)
        ax.set_xscale("log")
        ax.set_yticks(np.arange(len(VARIANTS)) + 0.5, [v[0] for v in VARIANTS], fontsize=8)
        ax.invert_yaxis()
        ax.set_title(f"{spec}  ({about})", fontsize=10, loc="left")
        for i in range(1, len(VARIANTS)):
            ax.axhline(i, color="white", lw=0.8)
        worst = grid.min(axis=1)
        print(f"{spec:<9} {about}")
        for (label, *_), g, w in zip(VARIANTS, grid, worst):
            first = next((edges[j] for j, v in enumerate(g) if v < 1), None)
            print(f"  {label:<42} lowest agreement {w:.3f}  first bin with an error starts at t = {first}")
    axes[-1].set_xlabel("position t in the word (log scale)")
    fig.suptitle(
        "Two meanings of finite precision: exactly representable (fused 0/±1 products) vs. restoring (NFSM)\n"
        f"green: the compiled model's state equals the automaton's at position t ({WORDS} random words); red: drifted",
        fontsize=11,
    )
    fig.colorbar(image, ax=axes, label="fraction of positions in agreement", shrink=0.5, aspect=30)
    out = Path("out") / "precision.png"
    out.parent.mkdir(exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    print(f"wrote {out} in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
