"""Mutation testing of fsa2rnn: ``python -m mutation run|sample|list|show|report`` (docs/mutation.md).

The runner copies the checkout (tracked and untracked, not ignored files) into a work folder named ``fsa2rnn`` and
runs pytest there with that folder's parent first on PYTHONPATH, so the tests import the mutated copy, never the
checkout an editable install points at (guard_plugin stops a run that would). Each mutant is written into the copy,
its covering tests run (fastest first, ``-x``), and the file restored. Results are appended to
``DIR/results.jsonl`` as they come: a run that is stopped resumes where it was (a mutant is run again only when
its module or its test files changed, or it survived and the tests changed)."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from . import config
from .engine import Mutant, by_name, diff, enumerate_mutants, mutated_source, source_sha

REPO = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().parent
SCORES = HERE / "scores.json"
EQUIVALENT = HERE / "equivalent.txt"
SAMPLE = HERE / "sample.txt"
DOCS = REPO / "docs" / "mutation.md"
KILLED, TIMEOUT, SURVIVED, UNCOVERED = "killed", "timeout", "survived", "not covered"


# ---------------------------------------------------------------------------------------------------- the copies
def _files(repo: Path) -> list[str]:
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    return [f for f in out if f and (repo / f).is_file()]


def make_copy(dest: Path) -> Path:
    """A fresh copy of the checkout at ``dest/fsa2rnn`` (its pristine state), returned."""
    tree = dest / "fsa2rnn"
    if tree.exists():
        shutil.rmtree(tree)
    for f in _files(REPO):
        target = tree / f
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / f, target)
    return tree


def _env(tree: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PYTHONPATH=os.pathsep.join([str(tree.parent), str(tree / "mutation")]),
        MUTATION_ROOT=str(tree),
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        **extra,
    )
    return env


def _pytest(
    tree: Path, args: list[str], env: dict[str, str], timeout: float, fatal: bool = True
) -> tuple[int | None, str, float]:
    """(exit code or None on timeout, output, seconds) of pytest in ``tree``; the whole process group is killed on
    timeout. Exit codes 3 and 4 (an internal error, the guard, a test id not found) stop the run when ``fatal``."""
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "guard_plugin", "--no-header", "-q", *args]
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        out, _ = proc.communicate(timeout=timeout)
        code: int | None = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        code = None
    if fatal and code == 4 and "mutation guard" in out:  # the tests would not test the copy: stop everything
        raise SystemExit(f"mutation: pytest exited {code} in {tree}:\n{out[-3000:]}")
    return code, out, time.perf_counter() - start


# ---------------------------------------------------------------------------------------------------- tracing
def _sha_files(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(p.name.encode() + p.read_bytes())
    return h.hexdigest()[:16]


def tests_sha(module: str, root: Path = REPO) -> str:
    return _sha_files([root / t for t in config.TESTS[module]])


def trace(modules: list[str], tree: Path, work: Path) -> dict[str, dict]:
    """Per module, ``{nodeid: {outcome, seconds, lines}}`` over its test files on the unmutated copy. Cached per test
    file (by its contents) with the lines of each module traced (by the module's contents); the test files whose
    cache lacks a module are traced again, in one pytest run."""
    files = sorted({t for m in modules for t in config.TESTS[m]})
    shas = {m: source_sha((tree / m).read_text()) for m in modules}

    def cache(f: str) -> Path:
        return work / "trace" / f"{f.replace('/', '.')}-{_sha_files([tree / f])}.json"

    def usable(f: str) -> bool:
        if not cache(f).exists():
            return False
        have = json.loads(cache(f).read_text())["modules"]
        return all(have.get(m) == shas[m] for m in modules if f in config.TESTS[m])

    missing = [f for f in files if not usable(f)]
    if missing:
        (work / "trace").mkdir(parents=True, exist_ok=True)
        out = work / "trace" / "run.tmp"
        env = _env(
            tree, MUTATION_TRACE_FILES=os.pathsep.join(str(tree / m) for m in modules), MUTATION_TRACE_OUT=str(out)
        )
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # the unmutated modules' bytecode, reused by the mutant runs
        print(f"mutation: tracing {len(modules)} modules over {len(missing)} test files …", flush=True)
        code, text, secs = _pytest(tree, ["-p", "trace_plugin", *missing], env, timeout=4 * 3600)
        if code not in (0, 1) or not out.exists():
            raise SystemExit(f"mutation: the trace run failed (exit {code}):\n{text[-3000:]}")
        data = json.loads(out.read_text())
        for f in missing:
            tests = {k: v for k, v in data.items() if k.split("::")[0] == f}
            lines = {k: {m: v["lines"].get(str(tree / m), []) for m in modules} for k, v in tests.items()}
            cache(f).write_text(
                json.dumps(
                    {
                        "modules": shas,
                        "tests": {
                            k: {"outcome": v["outcome"], "seconds": v["seconds"], "lines": lines[k]}
                            for k, v in tests.items()
                        },
                    }
                )
            )
        out.unlink()
        print(f"mutation: traced {len(data)} tests in {secs:.0f} s", flush=True)
    data = {k: v for f in files for k, v in json.loads(cache(f).read_text())["tests"].items()}
    return {
        m: {k: {"outcome": v["outcome"], "seconds": v["seconds"], "lines": v["lines"].get(m, [])}
            for k, v in data.items() if k.split("::")[0] in config.TESTS[m]}
        for m in modules
    }  # fmt: skip


def select_tests(m: Mutant, traced: dict, func_lines: tuple[int, int]) -> list[str]:
    """The passing, not too slow tests that execute the mutant's lines (module-level code: any line of the module,
    and the tests that read its constants, ``config.CONSTANT_TESTS``; else, if none runs the lines themselves, any
    line of the enclosing function), fastest first."""
    ok = {k: v for k, v in traced.items() if v["outcome"] == "passed" and v["seconds"] <= config.MAX_TEST_SECONDS}
    if m.function == "<module>":
        hit = [k for k, v in ok.items() if v["lines"] or k.split("::")[0] in config.CONSTANT_TESTS]
    else:
        span = set(range(m.line, m.end_line + 1))
        hit = [k for k, v in ok.items() if span & set(v["lines"])]
        if not hit:
            lo, hi = func_lines
            hit = [k for k, v in ok.items() if any(lo <= x <= hi for x in v["lines"])]
    return sorted(hit, key=lambda k: ok[k]["seconds"])


def _function_spans(root: Path, module: str) -> dict[str, tuple[int, int]]:
    import parso

    spans: dict[str, tuple[int, int]] = {}

    def rec(node, prefix: str) -> None:  # type: ignore[no-untyped-def]
        for child in getattr(node, "children", []):
            if child.type in ("funcdef", "classdef"):
                name = f"{prefix}{child.name.value}"
                spans[name] = (child.start_pos[0], child.end_pos[0])
                rec(child, name + ".")
            elif child.type == "decorated":
                rec(child, prefix)
            else:
                rec(child, prefix)

    rec(parso.parse((root / module).read_text()), "")
    return spans


# ---------------------------------------------------------------------------------------------------- running
def run_mutant(m: Mutant, tree: Path, tests: list[str], traced: dict, argfile: Path, fatal: bool = True) -> dict:
    """Write the mutant into the copy, run ``tests`` (-x), restore; the result record."""
    if not tests:
        return {"outcome": UNCOVERED, "killer": None, "seconds": 0.0, "tests": 0}
    target = tree / m.module
    original = target.read_text()
    pyc = target.parent / "__pycache__"
    budget = 30 + 3 * sum(traced[t]["seconds"] for t in tests)
    argfile.write_text("\n".join(tests) + "\n")
    try:
        target.write_text(mutated_source(tree, m))
        for p in pyc.glob(f"{target.stem}.*.pyc"):
            p.unlink()
        code, out, secs = _pytest(tree, ["-x", f"@{argfile}"], _env(tree, PYTHONDONTWRITEBYTECODE="1"), budget, fatal)
    finally:
        target.write_text(original)
        for p in pyc.glob(f"{target.stem}.*.pyc"):
            p.unlink()
    if code is None:
        return {"outcome": TIMEOUT, "killer": None, "seconds": round(secs, 2), "tests": len(tests)}
    if code == 4 and "not found" in out:
        return {"outcome": "missing test", "killer": None, "seconds": round(secs, 2), "tests": len(tests)}
    if code == 0:
        return {"outcome": SURVIVED, "killer": None, "seconds": round(secs, 2), "tests": len(tests)}
    killer = next((ln.split(" ", 1)[1].split(" - ")[0] for ln in out.splitlines()
                   if ln.startswith(("FAILED ", "ERROR "))), None)  # fmt: skip
    if code != 1 and killer is None:
        killer = f"pytest exit {code}: {out.strip().splitlines()[-1][:200] if out.strip() else ''}"
    return {"outcome": KILLED, "killer": killer, "seconds": round(secs, 2), "tests": len(tests)}


def load_results(work: Path) -> dict[str, dict]:
    path = work / "results.jsonl"
    out: dict[str, dict] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                r = json.loads(line)
                out[r["name"]] = r
    return out


def change_sha(root: Path, m: Mutant) -> str:
    """What the mutant changes (its diff), hashed: a recorded result applies to a mutant of the same name only if
    the change is the same (names are stable, but a rule of the engine may renumber occurrences)."""
    return hashlib.sha256(diff(root, m).encode()).hexdigest()[:12]


def _done(r: dict | None, module_sha: str, t_sha: str, change: str | None = None) -> bool:
    if r is None or r["module_sha"] != module_sha or ("change" in r and change and r["change"] != change):
        return False
    return r["outcome"] in (KILLED, TIMEOUT) or r["tests_sha"] == t_sha


def cmd_run(args: argparse.Namespace) -> int:
    work = Path(args.dir).resolve()
    work.mkdir(parents=True, exist_ok=True)
    modules = args.modules or config.PHASES[args.phase]
    for m in modules:
        if m not in config.TESTS:
            raise SystemExit(f"mutation: no test files configured for {m} (mutation/config.py TESTS)")
    trees = [make_copy(work / f"copy{j}") for j in range(args.jobs)]
    for tree in trees:  # bytecode of the unmutated modules (the mutated one's is deleted before each run)
        subprocess.run([sys.executable, "-m", "compileall", "-q", "-x", r"/\.", str(tree)], check=False,
                       env={k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"})  # fmt: skip
    state = _RunState(work, load_results(work))
    traced = trace(modules, trees[0], work)
    for module in modules:
        _run_module(module, trees, state, args.limit, traced[module])
    state.close()
    total = sum(r.get("cpu", 0.0) for r in load_results(work).values())
    print(f"mutation: {total / 3600:.2f} CPU-hours recorded for the mutants in {work}", flush=True)
    return cmd_report(argparse.Namespace(dir=str(work), modules=modules, write=True))


class _RunState:
    """The results so far, the log they are appended to, and the CPU seconds of the children (RUSAGE_CHILDREN,
    charged to the result recorded when they were reaped: the sum over results is the run's CPU time)."""

    def __init__(self, work: Path, results: dict[str, dict]) -> None:
        self.work, self.results = work, results
        self.log = (work / "results.jsonl").open("a")
        self.lock = threading.Lock()
        self.cpu = _children_cpu()

    def record(self, rec: dict) -> None:
        with self.lock:
            now = _children_cpu()
            rec["cpu"], self.cpu = round(now - self.cpu, 2), now
            self.results[rec["name"]] = rec
            self.log.write(json.dumps(rec) + "\n")
            self.log.flush()

    def close(self) -> None:
        self.log.close()


def _run_module(module: str, trees: list[Path], state: _RunState, limit: int, traced: dict) -> None:
    root = trees[0]  # the snapshot this run tests (the checkout may change meanwhile)
    spans = _function_spans(root, module)
    msha, tsha = source_sha((root / module).read_text()), tests_sha(module, root)
    changes = {m.name: change_sha(root, m) for m in enumerate_mutants(root, module)}  # before any file is mutated
    todo = [m for m in enumerate_mutants(root, module)
            if not _done(state.results.get(m.name), msha, tsha, changes[m.name])]  # fmt: skip
    todo = todo[:limit] if limit else todo
    print(f"mutation: {module}: {len(todo)} mutants to run", flush=True)
    jobs: queue.Queue[Mutant] = queue.Queue()
    for m in todo:
        jobs.put(m)

    errors: list[BaseException] = []

    def worker(j: int) -> None:
        while not errors:
            try:
                m = jobs.get_nowait()
            except queue.Empty:
                return
            tests = select_tests(m, traced, spans.get(m.function, (0, 0)))
            try:
                r = run_mutant(m, trees[j], tests, traced, state.work / f"args{j}.txt")
            except BaseException as exc:  # noqa: BLE001 (SystemExit included: a thread would end silently)
                errors.append(exc)
                return
            state.record({"name": m.name, "module": m.module, "line": m.line, "module_sha": msha, "tests_sha": tsha,
                          "change": changes[m.name], **r})  # fmt: skip
            n = len(todo) - jobs.qsize()
            print(f"[{n}/{len(todo)}] {r['outcome']:<11} {m.name} ({r['seconds']:.0f} s)", flush=True)

    threads = [threading.Thread(target=worker, args=(j,)) for j in range(len(trees))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def _children_cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    s = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime + s.ru_utime + s.ru_stime


# ---------------------------------------------------------------------------------------------------- reports
def load_equivalent() -> dict[str, str]:
    """Mutant name → the one-line reason it is equivalent (mutation/equivalent.txt: ``NAME  reason``)."""
    out = {}
    for line in EQUIVALENT.read_text().splitlines() if EQUIVALENT.exists() else []:
        if line.strip() and not line.startswith("#"):
            name, _, why = line.partition("  ")
            out[name.strip()] = why.strip()
    return out


def module_report(module: str, results: dict[str, dict], equivalent: dict[str, str]) -> tuple[dict, str]:
    """(the counts, a Markdown report) of one module from the current mutants' results."""
    mutants = enumerate_mutants(REPO, module)
    msha = source_sha((REPO / module).read_text())
    counts = {KILLED: 0, TIMEOUT: 0, SURVIVED: 0, "equivalent": 0, "not run": 0}
    survivors, equivs, stale = [], [], []
    for m in mutants:
        r = results.get(m.name)
        if r is None or r["module_sha"] != msha or ("change" in r and r["change"] != change_sha(REPO, m)):
            counts["not run"] += 1
        elif r["outcome"] in (KILLED, TIMEOUT):
            counts[r["outcome"]] += 1
            if m.name in equivalent:
                stale.append(m.name)
        elif m.name in equivalent:
            counts["equivalent"] += 1
            equivs.append(f"- `{m.name}`: {equivalent[m.name]}")
        else:
            counts[SURVIVED] += 1
            survivors.append(f"- `{m.name}` (line {m.line}{', no test runs it' if r['outcome'] == UNCOVERED else ''})")
    total = len(mutants)
    scored = total - counts["equivalent"] - counts["not run"]
    score = (counts[KILLED] + counts[TIMEOUT]) / scored if scored else None
    stats = {"mutants": total, **counts, "score": None if score is None else round(score, 4), "source_sha": msha}
    lines = [f"# {module}", "", f"{total} mutants: " + ", ".join(f"{v} {k}" for k, v in counts.items())]
    if score is not None:
        lines.append(f"score (killed + timed out) / (mutants − equivalent − not run) = {score:.1%}")
    lines += ["", "## survived", *survivors, "", "## equivalent", *equivs]
    if stale:
        lines += ["", "## listed as equivalent but killed (remove from mutation/equivalent.txt)",
                  *[f"- `{n}`" for n in stale]]  # fmt: skip
    return stats, "\n".join(lines) + "\n"


def cmd_report(args: argparse.Namespace) -> int:
    work = Path(args.dir).resolve()
    results = load_results(work)
    equivalent = load_equivalent()
    scores = json.loads(SCORES.read_text()) if SCORES.exists() else {}
    modules = args.modules or sorted({r["module"] for r in results.values()})
    for module in modules:
        stats, text = module_report(module, results, equivalent)
        (work / "reports").mkdir(exist_ok=True)
        (work / "reports" / f"{module.replace('/', '.')}.md").write_text(text)
        print(text.split("\n## survived")[0])
        if args.write and stats["not run"] == 0 and stats["score"] is not None:
            # the floor: the best score measured, never lowered here (a lower score stays below it: CI fails)
            scores[module] = {**stats, "floor": max(scores.get(module, {}).get("floor", 0.0), stats["score"])}
    if args.write:
        SCORES.write_text(json.dumps(dict(sorted(scores.items())), indent=1) + "\n")
        write_docs_table(scores)
    return 0


def write_docs_table(scores: dict) -> None:
    """The table between the markers of docs/mutation.md, from the tracked scores."""
    if not DOCS.exists():
        return
    head = (
        "| module | mutants | killed | timed out | survived | equivalent | score | floor |\n"
        "|---|---|---|---|---|---|---|---|\n"
    )
    rows = "".join(
        f"| `{m}` | {s['mutants']} | {s['killed']} | {s['timeout']} | {s['survived']} | {s['equivalent']} | "
        f"{s['score']:.1%} | {s['floor']:.1%} |\n"
        for m, s in scores.items()
    )
    text = DOCS.read_text()
    a, b = "<!-- scores: begin -->\n", "<!-- scores: end -->"
    if a in text and b in text:
        DOCS.write_text(text.split(a)[0] + a + head + rows + b + text.split(b)[1])


# ---------------------------------------------------------------------------------------------------- the CI sample
def cmd_sample(args: argparse.Namespace) -> int:
    """Every sampled mutant must be killed by the tests recorded for it; every tracked score at least its floor."""
    bad = []
    scores = json.loads(SCORES.read_text()) if SCORES.exists() else {}
    for module, s in scores.items():
        if s["score"] < s["floor"]:
            bad.append(f"{module}: score {s['score']:.1%} fell below its floor {s['floor']:.1%}")
    sample = Path(args.sample) if args.sample else SAMPLE
    entries = [ln.split("  ") for ln in sample.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    work = Path(args.dir).resolve()
    tree = make_copy(work / "sample")
    start = time.perf_counter()
    for name, *tests in entries:
        tests = [t for part in tests for t in part.split()]
        try:
            m = by_name(REPO, name)
        except KeyError as exc:
            bad.append(f"{exc.args[0]}")
            continue
        fake = {t: {"seconds": 20.0} for t in tests}
        r = run_mutant(m, tree, tests, fake, work / "sample-args.txt", fatal=False)
        print(f"{r['outcome']:<9} {name} ({r['seconds']:.0f} s)", flush=True)
        if r["outcome"] == "missing test":
            bad.append(
                f"{name}: its killing test {' '.join(tests)} is gone (python -m mutation pick renews the sample)"
            )
        elif r["outcome"] not in (KILLED, TIMEOUT):
            bad.append(f"{name} survived {' '.join(tests)}")
    print(f"mutation sample: {len(entries)} mutants in {time.perf_counter() - start:.0f} s")
    for b in bad:
        print(f"error: {b}", file=sys.stderr)
    return 1 if bad else 0


def cmd_plant(args: argparse.Namespace) -> int:
    """Plant one textual change (``old`` → ``new``, exactly one occurrence) in a copy and run ``tests`` there:
    exit 0 when a test fails (killed), 1 when all pass (survived)."""
    work = Path(args.dir).resolve()
    tree = make_copy(work / "plant")
    if args.target.count("::") == 3:  # a mutant's name, then the tests
        m = by_name(tree, args.target)
        args.module, args.old, args.new, args.tests = m.module, "", "", args.rest
        (tree / m.module).write_text(mutated_source(tree, m))
        print(diff(REPO, m))
    elif len(args.rest) < 3:
        raise SystemExit("mutation: plant MODULE OLD NEW TESTS… (or plant MUTANT TESTS…)")
    else:
        args.module, (args.old, args.new, *args.tests) = args.target, args.rest
    target = tree / args.module
    text = target.read_text()
    if not args.old:
        pass
    elif text.count(args.old) != 1:
        raise SystemExit(f"mutation: {args.old!r} occurs {text.count(args.old)} times in {args.module}, not once")
    else:
        target.write_text(text.replace(args.old, args.new))
    code, out, secs = _pytest(tree, ["-x", *args.tests], _env(tree), 3600)
    killer = next((ln for ln in out.splitlines() if ln.startswith(("FAILED ", "ERROR "))), None)
    verdict = "killed" if code != 0 else "survived"
    what = args.target if not args.old else f"{args.module}: {args.old!r} -> {args.new!r}"
    print(f"{verdict} in {secs:.0f} s: {what}" + (f"\n  {killer}" if killer else ""))
    return 0 if code != 0 else 1


def cmd_pick(args: argparse.Namespace) -> int:
    """Print a sample: per module, ``per_module`` killed mutants with the test that killed each (``NAME  TEST``),
    spread over functions and operators (a fixed order: by a hash of the name), for mutation/sample.txt."""
    results = load_results(Path(args.dir).resolve())
    modules = args.modules or sorted({r["module"] for r in results.values()})
    for module in modules:
        msha = source_sha((REPO / module).read_text())
        killed = [r for r in results.values() if r["module"] == module and r["module_sha"] == msha
                  and r["outcome"] == KILLED and r["killer"] and "::" in r["killer"]]  # fmt: skip
        killed.sort(key=lambda r: hashlib.sha256(r["name"].encode()).hexdigest())
        seen: set[tuple[str, str]] = set()
        picked = []
        for r in killed:  # first one per (function, operator), then any
            key = tuple(r["name"].split("::")[1:3])
            if key not in seen and len(picked) < args.per_module:
                seen.add(key)
                picked.append(r)
        for r in picked:
            print(f"{r['name']}  {r['killer']}")
    return 0


# ---------------------------------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m mutation", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="mutate the modules and run their covering tests (resumable)")
    r.add_argument("--phase", default="1", choices=sorted(config.PHASES))
    r.add_argument("--modules", nargs="*", help="module paths (default: the phase's)")
    r.add_argument("--dir", default=str(REPO / "out" / "mutants"), help="work folder: copies, traces, results")
    r.add_argument("--jobs", type=int, default=1)
    r.add_argument("--limit", type=int, default=0, help="at most this many mutants per module (0: all)")
    s = sub.add_parser("sample", help="the CI step: the sampled mutants must be killed, no score below its floor")
    s.add_argument("--dir", default=str(REPO / "out" / "mutants"))
    s.add_argument("--sample", help="a sample file other than mutation/sample.txt")
    rep = sub.add_parser("report", help="per-module reports from the results; --write updates the tracked scores")
    rep.add_argument("--dir", default=str(REPO / "out" / "mutants"))
    rep.add_argument("--modules", nargs="*")
    rep.add_argument("--write", action="store_true")
    ls = sub.add_parser("list", help="the mutants of a module, by name")
    ls.add_argument("module")
    sh = sub.add_parser("show", help="the diff of a mutant")
    sh.add_argument("name")
    pl = sub.add_parser("plant", help="plant one textual change (or a mutant: plant NAME TESTS…) in a copy, run tests")
    pl.add_argument("target", help="a module path (then OLD NEW TESTS…), or a mutant's name (then TESTS…)")
    pl.add_argument("rest", nargs="+")
    pl.add_argument("--dir", default=str(REPO / "out" / "mutants"))
    pk = sub.add_parser("pick", help="print a CI sample: killed mutants with their killing tests")
    pk.add_argument("--dir", default=str(REPO / "out" / "mutants"))
    pk.add_argument("--modules", nargs="*")
    pk.add_argument("--per-module", type=int, default=4)
    args = p.parse_args(argv)
    if args.cmd == "pick":
        return cmd_pick(args)
    if args.cmd == "plant":
        return cmd_plant(args)
    if args.cmd == "run":
        return cmd_run(args)
    if args.cmd == "sample":
        return cmd_sample(args)
    if args.cmd == "report":
        return cmd_report(args)
    if args.cmd == "list":
        for m in enumerate_mutants(REPO, args.module):
            print(m.name)
        return 0
    print(diff(REPO, by_name(REPO, args.name)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
