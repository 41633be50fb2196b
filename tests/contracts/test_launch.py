"""Runs beyond one process (nn/train/launch, docs/cluster.md): the checked options, the local pool directly (order,
threads per run, a failure reported while the others go on, a dead worker), and `reproduce` with `--jobs 2`,
submitit's local executor and a local Ray instance giving the per-run figures of the sequential run; a failed run
retried alone by the next invocation; a killed reproduction finished by a second one that trains only what is
missing."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.fsa.errors import MissingDependencyError, SpecError
from fsa2rnn.nn.train.launch import Launcher, Task, parse_launcher, run_tasks, threads_per_run
from fsa2rnn.nn.train.launch import base as launch_base
from fsa2rnn.nn.train.reproduce import get_reproduction
from fsa2rnn.nn.train.reproduce.grazzi_s5 import GrazziS5

#: a tiny selection of the grazzi-s5 table: 4 runs of a few steps each
SELECTION = ["--scale", "tiny", "--tasks", "swaps,s3", "--models", "deltanet", "--arm", "-1..1", "--seeds", "42,43"]
THREADS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
ENV = {**os.environ, **THREADS}


# ------------------------------------------------------------------ tasks of the pool tests (module level: they pickle)
def square(x: int) -> int:
    return x * x


def slow_square(x: int) -> int:
    """A run that lasts a second: while the pool notices a dead worker, the other worker is still on its first run."""
    time.sleep(1.0)
    return x * x


def torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def broken(x: int) -> int:
    raise ValueError(f"bad input {x}\nsecond line of the error")


def die_once(marker: str) -> str:
    """Kill this worker process the first time (as the OOM killer or `kill -9` would), succeed afterwards."""
    if not Path(marker).exists():
        Path(marker).write_text("died")
        os.kill(os.getpid(), signal.SIGKILL)
    return "ok"


def per_run(table: dict) -> list[dict]:
    """Every run's figures (its wall time aside), in the table's order."""
    return [{k: v for k, v in r.items() if k != "seconds"} for c in table["cells"] for r in c["seeds"]]


# ------------------------------------------------------------------ the options
@pytest.mark.parametrize(
    "kind, jobs, args, phrase",
    [
        ("pbs", None, None, "--launcher must be one of local, slurm, ray"),
        ("local", 0, None, "--jobs must be an integer >= 1"),
        ("local", None, "{", "--launcher-args must be a JSON object"),
        ("local", None, "[1]", "must be a JSON object, got list"),
        ("local", None, '{"partition": "gpu"}', "unknown key 'partition' for --launcher local"),
        ("local", None, '{"threads_per_run": 0}', "threads_per_run must be >= 1"),
        ("local", None, '{"threads_per_run": true}', "threads_per_run must be int"),
    ],
)
def test_bad_launcher_options_are_refused_naming_the_option(kind, jobs, args, phrase):
    with pytest.raises(SpecError, match=phrase.replace("[", r"\[")):
        parse_launcher(kind, jobs, args)


def test_a_missing_engine_names_the_extra_to_install(monkeypatch, tmp_path):
    real = importlib.util.find_spec
    monkeypatch.setattr(launch_base.importlib.util, "find_spec", lambda n, *a: None if n == "submitit" else real(n, *a))
    with pytest.raises(MissingDependencyError, match=r"pip install 'fsa2rnn\[slurm\]'"):
        parse_launcher("slurm", None, None)
    res = CliRunner().invoke(main, ["reproduce", "grazzi-s5", *SELECTION, "--out", str(tmp_path / "o"),
                                    "--launcher", "slurm"])  # fmt: skip
    assert res.exit_code == 2 and res.output.count("\n") == 1, res.output
    assert res.output.startswith("error: ") and "pip install 'fsa2rnn[slurm]'" in res.output
    assert not (tmp_path / "o").exists()


def test_threads_per_run_divide_the_cores(monkeypatch):
    monkeypatch.setattr(launch_base, "cores", lambda: 16)
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)
    assert [threads_per_run(n) for n in (1, 2, 4, 16, 64)] == [16, 8, 4, 1, 1]
    assert threads_per_run(4, given=3) == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "2")  # an explicit OMP_NUM_THREADS caps it
    assert threads_per_run(2) == 2 and threads_per_run(16) == 1


# ------------------------------------------------------------------ the pool directly
def test_the_pool_keeps_the_order_sets_threads_and_reports_a_failure_while_the_others_go_on(capsys):
    tasks = [Task(f"run-{i}", square, (i,)) for i in range(5)]
    tasks.insert(2, Task("run-bad", broken, (7,)))
    tasks.append(Task("run-threads", torch_threads, ()))
    out = run_tasks(Launcher("local", 2, {"threads_per_run": 1}), tasks, desc="t", progress=False)
    assert [o.key for o in out] == [t.key for t in tasks]
    assert [o.value for o in out if o.ok and o.key.startswith("run-") and o.key[4:].isdigit()] == [0, 1, 4, 9, 16]
    bad = out[2]
    assert not bad.ok and bad.error == "ValueError: bad input 7" and "second line" in bad.detail
    assert out[-1].value == 1  # the worker's torch threads: threads_per_run
    assert "failed: run-bad: ValueError: bad input 7" in capsys.readouterr().err
    # the same tasks in this process (--jobs 1) give the same outcomes
    seq = run_tasks(Launcher(), tasks[:-1], desc="t", progress=False)
    assert [(o.value, o.error) for o in seq] == [(o.value, o.error) for o in out[:-1]]


def test_a_dead_worker_fails_its_run_and_the_runs_not_started_go_on(tmp_path):
    marker = tmp_path / "marker"
    tasks = [Task("dies", die_once, (str(marker),)), *[Task(f"sq-{i}", slow_square, (i,)) for i in range(6)]]
    out = run_tasks(Launcher("local", 2), tasks, desc="t", progress=False)
    assert not out[0].ok and "worker process of the pool died" in out[0].error
    # a run stopped with the pool fails the same way; every other one finished
    assert all(o.ok or "worker process of the pool died" in o.error for o in out)
    assert sum(o.ok for o in out) >= 5 and marker.exists()
    retry = [t for t, o in zip(tasks, out) if not o.ok]  # what a second invocation does
    assert all(o.ok for o in run_tasks(Launcher("local", 2), retry, desc="t", progress=False))


# ------------------------------------------------------------------ reproduce on every launcher
@pytest.fixture(scope="module")
def sequential(tmp_path_factory):
    """The tiny selection trained in this process, one run after another (the reference figures)."""
    out = tmp_path_factory.mktemp("seq") / "rep"
    res = CliRunner().invoke(main, ["reproduce", "grazzi-s5", *SELECTION, "--out", str(out), "--json", "--quiet"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _reproduce(out: Path, *extra: str, timeout: int = 600) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "fsa2rnn.cli.main", "reproduce", "grazzi-s5", *SELECTION, "--out", str(out), "--json",
           "--quiet", *extra]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=timeout)


@pytest.mark.slow
def test_jobs_2_gives_the_sequential_per_run_figures(sequential, tmp_path):
    res = _reproduce(tmp_path / "rep", "--jobs", "2")
    assert res.returncode == 0, res.stderr
    table = json.loads(res.stdout)
    assert len(per_run(table)) == 4 and all(r["status"] == "done" for r in per_run(table))
    assert per_run(table) == per_run(sequential)


@pytest.mark.slow
def test_submitits_local_executor_gives_the_same_figures(sequential, tmp_path):
    pytest.importorskip("submitit")
    args = json.dumps({"cluster": "local", "time": 10, "array_parallelism": 2})
    res = _reproduce(tmp_path / "rep", "--launcher", "slurm", "--launcher-args", args)
    assert res.returncode == 0, res.stderr
    assert per_run(json.loads(res.stdout)) == per_run(sequential)
    assert list((tmp_path / "rep" / "slurm").glob("*_log.out"))  # submitit's logs, under DIR/slurm


@pytest.mark.slow
def test_a_local_ray_instance_gives_the_same_figures(sequential, tmp_path):
    ray = pytest.importorskip("ray")
    from fsa2rnn.nn.train.reproduce.runner import reproduce

    rep = get_reproduction("grazzi-s5")
    jobs = rep.jobs("tiny", *rep.select("tiny", "swaps,s3", "deltanet", "-1..1", "42,43"))
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, runtime_env={"env_vars": THREADS})
    try:
        table = reproduce(rep, "tiny", jobs, tmp_path / "rep", progress=False, launcher=Launcher("ray"))
    finally:
        ray.shutdown()
    assert per_run(table) == per_run(sequential)


def test_a_failed_run_is_reported_and_the_next_invocation_retries_only_it(tmp_path, monkeypatch):
    out = tmp_path / "rep"
    args = ["reproduce", "grazzi-s5", "--scale", "tiny", "--tasks", "swaps", "--models", "deltanet", "--arm", "0..1",
            "--seeds", "42,43", "--out", str(out), "--quiet"]  # fmt: skip
    real = GrazziS5.result

    def fails_for_43(self, job, summary, evaluation):
        if job.seed == 43:
            raise RuntimeError("the figures cannot be read\nmore")
        return real(self, job, summary, evaluation)

    monkeypatch.setattr(GrazziS5, "result", fails_for_43)
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 1, res.output
    name = "swaps__deltanet__0..1__43"
    assert f"failed: {out / 'runs' / name}: RuntimeError: the figures cannot be read" in res.stderr
    assert "1 of 2 runs failed" in res.stderr
    table = json.loads((out / "table.json").read_text())
    assert [r["status"] for r in per_run(table)] == ["done", "failed"]
    assert "more" in (out / "failed" / f"{name}.txt").read_text()
    done = out / "runs" / "swaps__deltanet__0..1__42" / "reproduce.json"
    stamp = done.stat().st_mtime_ns

    monkeypatch.setattr(GrazziS5, "result", real)
    res = CliRunner().invoke(main, args)
    assert res.exit_code == 0, res.output
    assert [r["status"] for r in per_run(json.loads((out / "table.json").read_text()))] == ["done", "done"]
    assert done.stat().st_mtime_ns == stamp and not (out / "failed" / f"{name}.txt").exists()


@pytest.mark.slow
def test_a_killed_reproduction_is_finished_by_the_next_training_only_what_is_missing(sequential, tmp_path):
    out = tmp_path / "rep"
    cmd = [sys.executable, "-m", "fsa2rnn.cli.main", "reproduce", "grazzi-s5", *SELECTION, "--out", str(out),
           "--quiet", "--jobs", "2"]  # fmt: skip
    proc = subprocess.Popen(cmd, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 300
    while not list(out.glob("runs/*/reproduce.json")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(proc.pid, signal.SIGKILL)  # the command and its workers, at once
    proc.wait()
    before = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("runs/*/reproduce.json")}
    assert before and not (out / "table.json").exists()
    res = _reproduce(out, "--jobs", "2")
    assert res.returncode == 0, res.stderr
    after = {p.parent.name: p.stat().st_mtime_ns for p in out.glob("runs/*/reproduce.json")}
    assert len(after) == 4 and all(after[k] == v for k, v in before.items())  # the finished runs read back
    assert per_run(json.loads(res.stdout)) == per_run(sequential)


# ------------------------------------------------------------------ train --seeds/--lr-grid on the pool
_GRID = ["train", "grazzi:parity", "--model", "deltanet", "--d-model", "8", "--heads", "1", "--mlp-ratio", "0",
         "--steps", "3", "--batch", "4", "--train-length", "3..6", "--eval-lengths", "6", "--eval-range", "6..8",
         "--samples", "16", "--no-lmax", "--val-every", "3", "--lr-grid", "1e-2,1e-3", "--seeds", "1,2", "--json",
         "--quiet"]  # fmt: skip


@pytest.mark.slow
def test_a_learning_rate_grid_on_two_processes_gives_the_sequential_summary(tmp_path):
    seq = CliRunner().invoke(main, [*_GRID, "--out", str(tmp_path / "seq")])
    assert seq.exit_code == 0, seq.output
    cmd = [sys.executable, "-m", "fsa2rnn.cli.main", *_GRID, "--out", str(tmp_path / "par"), "--jobs", "2"]
    par = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=600)
    assert par.returncode == 0, par.stderr
    a, b = json.loads(seq.stdout), json.loads(par.stdout)
    for row in (*a["per_lr"], *b["per_lr"]):
        row["runs"] = [Path(r).relative_to(Path(r).parents[1]).as_posix() for r in row["runs"]]
    assert a == b


def test_nproc_and_jobs_together_are_refused(tmp_path):
    res = CliRunner().invoke(main, [*_GRID, "--out", str(tmp_path / "o"), "--nproc", "2", "--jobs", "2"])
    assert res.exit_code == 2 and "give --nproc (one run on N processes) or --jobs/--launcher" in res.output
