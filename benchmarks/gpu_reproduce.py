"""Brandoit et al.'s Table 1 on a GPU, in one short call: one seed per task of the anchored NFSM at the authors'
settings (``fsa2rnn reproduce brandoit-table1 --scale paper``: width 128, batch 256, their early stop after 40 exact
validations, L_max by their protocol to 2^20, 2^15 for M11), within a device-time budget; it prints which cells it
covered and the table of those.

    python benchmarks/gpu_reproduce.py [--budget-s 420] [--seed 42] [--tasks Z2,S3,…] [--out DIR]

Tasks run cheapest first; a task is started only while the budget has room for it (the estimate: the longest run so
far), so the script stays within ``--budget-s`` plus one run. Without a CUDA device it prints "no GPU" and exits 0.
Never run by the test suite.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

ORDER = ("Z2", "DFF5", "FF", "S3", "Z16", "S4", "A5", "M11")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget-s", type=float, default=420.0, help="device seconds to spend (default 420)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--tasks", default=",".join(ORDER))
    ap.add_argument("--out", default=None, help="the reproduction directory (default: a temporary one)")
    args = ap.parse_args()
    import torch

    if not torch.cuda.is_available():
        print("no GPU")
        return
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}", flush=True)
    from fsa2rnn.nn.train.reproduce import get_reproduction
    from fsa2rnn.nn.train.reproduce.runner import build_table, run_job

    rep = get_reproduction("brandoit-table1")
    tasks = [t for t in ORDER if t in args.tasks.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(args.out or tmp)
        t0, longest, jobs, records, skipped = time.perf_counter(), 0.0, [], [], []
        for task in tasks:
            spent = time.perf_counter() - t0
            if spent + longest > args.budget_s:
                skipped.append(task)
                continue
            (job,) = rep.jobs("paper", [task], ["nfsm"], ["anchored"], [args.seed])
            job.config["device"] = "cuda"
            start = time.perf_counter()
            rec = run_job(rep, job, out)
            longest = max(longest, time.perf_counter() - start)
            jobs.append(job)
            records.append(rec)
            print(
                f"{task}: L_max {rec.get('l_max_text')}, exact {rec.get('exact')}, {rec.get('seconds')} s", flush=True
            )
        table = build_table(rep, "paper", jobs, records)
        print(rep.markdown(table))
        covered = [j.task for j in jobs]
        print(json.dumps({"covered": covered, "not_covered": skipped, "seconds": round(time.perf_counter() - t0, 1)}))


if __name__ == "__main__":
    main()
