"""A reproduction's runs on a local process pool (docs/cluster.md): a tiny part of the grazzi-s5 table trained one
run after another, then again with two runs at once, and the per-run figures compared — equal, because every run
draws its randomness from its own seed, never from the process that trains it.

    python examples/parallel_table.py [--quick] [--jobs N] [--out DIR]

The same from the command line: ``fsa2rnn reproduce grazzi-s5 --scale tiny --jobs 2 --out DIR``; ``--launcher
slurm`` or ``--launcher ray`` send the runs to a cluster instead.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from fsa2rnn.nn.train.launch import Launcher
from fsa2rnn.nn.train.reproduce import get_reproduction, reproduce


def per_run(table: dict) -> list[dict]:
    """Every run's figures, its wall time aside."""
    return [{k: v for k, v in r.items() if k != "seconds"} for c in table["cells"] for r in c["seeds"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 runs instead of 4")
    parser.add_argument("--jobs", type=int, default=2, help="runs at once in the second pass (default 2)")
    parser.add_argument("--out", help="where the two tables go (default: a temporary folder)")
    args = parser.parse_args()

    rep = get_reproduction("grazzi-s5")
    tasks = "swaps" if args.quick else "swaps,s3"
    jobs = rep.jobs("tiny", *rep.select("tiny", tasks, "deltanet", "-1..1", "42,43"))
    out = Path(args.out or tempfile.mkdtemp(prefix="parallel_table-"))
    tables = {}
    for name, launcher in [("sequential", Launcher()), (f"jobs-{args.jobs}", Launcher("local", args.jobs))]:
        t0 = time.perf_counter()
        tables[name] = reproduce(rep, "tiny", jobs, out / name, progress=False, launcher=launcher)
        print(f"{name}: {len(jobs)} runs in {time.perf_counter() - t0:.1f} s -> {out / name / 'table.json'}")
    first, second = tables.values()
    for a, b in zip(per_run(first), per_run(second)):
        job = a["job"]
        print(f"  {job['task']} seed {job['seed']}: sequence accuracy {a['sequence_accuracy']} / "
              f"{b['sequence_accuracy']}")  # fmt: skip
    print(f"per-run figures equal: {per_run(first) == per_run(second)}")


if __name__ == "__main__":
    main()
