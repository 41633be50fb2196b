"""`train` and `reproduce` under SIGINT/SIGTERM and a second writer (docs/limits.md, fsa2rnn.fsa.signals,
fsa2rnn.nn.train.runlock): at each named moment — imports, setup, a training step, an evaluation, the table's
writing — the command prints one line (the signal, the moment, what was kept, the command that goes on) and exits
130 or 143, leaving what it says; the signal is raised at the moment by the test hook ``FSA2RNN_TEST_SIGNAL_AT``, so
every case is deterministic. A second `train` on a run directory in use is refused in one line naming the holder,
below the hostile ceilings, and the first finishes unaffected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.fsa import signals
from fsa2rnn.fsa.errors import DirectoryLockedError
from fsa2rnn.fsa.lock import LOCK_NAME, directory_lock
from fsa2rnn.nn.train import runlock

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_hostile  # noqa: E402

TINY = ["parity", "--steps", "4", "--d-model", "8", "--mlp-ratio", "0", "--batch", "4", "--train-length", "3..6",
        "--val-every", "2", "--no-lmax", "--eval-lengths", "8", "--samples", "8", "--quiet"]  # fmt: skip
STATUS = {"SIGINT": 130, "SIGTERM": 143}
DURING = {"imports": "the imports", "setup": "setup", "step": "training", "evaluation": "the evaluation",
          "table": "the table's writing"}  # fmt: skip


def _stopped(args: list[str], moment: str, sig: str, monkeypatch) -> str:
    """Run the command with the hook set at ``moment``; its one stderr line (asserted: status, prefix)."""
    monkeypatch.setenv(signals.TEST_HOOK, f"{moment}:{sig}")
    res = CliRunner().invoke(main, args)
    monkeypatch.delenv(signals.TEST_HOOK)
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == STATUS[sig], (res.exit_code, res.output[-600:], repr(res.exception))
    assert len(lines) == 1 and lines[0].startswith(f"interrupted ({sig}) during {DURING[moment]}: "), res.stderr
    return lines[0]


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("moment", ["imports", "setup", "step", "evaluation"])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_train_stopped_at_each_moment(moment, sig, tmp_path, monkeypatch):
    out = tmp_path / "run"
    line = _stopped(["train", *TINY, "--out", str(out)], moment, sig, monkeypatch)
    if moment in ("imports", "setup"):
        assert line.endswith("nothing was kept; run the same command to start again"), line
        assert not out.exists()  # nothing left behind, not even the folder the lock made
        return
    assert line.endswith(f"continue with: fsa2rnn train --out {out} --resume"), line
    assert (out / "model.safetensors").is_file() and not (out / "eval.json").exists()
    assert not (out / LOCK_NAME).exists()
    if sig == "SIGTERM":  # the command it prints goes on (once per moment)
        res = CliRunner().invoke(main, ["train", "--out", str(out), "--resume", "--quiet"])
        assert res.exit_code == 0 and (out / "eval.json").is_file(), res.output


REPRODUCE = ["reproduce", *bench_hostile._REP[1:], "--quiet"]


@pytest.mark.usefixtures("one_torch_thread")
@pytest.mark.parametrize("moment,sig", [("imports", "SIGTERM"), ("setup", "SIGINT"), ("step", "SIGTERM"),
                                        ("evaluation", "SIGINT"), ("table", "SIGTERM")])  # fmt: skip
def test_reproduce_stopped_at_each_moment(moment, sig, tmp_path, monkeypatch):
    out = tmp_path / "rep"
    run = out / "runs" / bench_hostile._REP_RUN
    line = _stopped([*REPRODUCE, "--out", str(out)], moment, sig, monkeypatch)
    command = f"fsa2rnn reproduce {' '.join(bench_hostile._REP[1:])} --out {out}"
    if moment == "table":  # held off until the table, its Markdown and its plot are all written
        assert line.endswith("nothing is left to do") and "1 of 1 runs finished" in line, line
        table = json.loads((out / "table.json").read_text())
        assert (out / "table.md").read_text() == CliRunner().invoke(main, [*REPRODUCE, "--out", str(out)]).stdout
        assert table["cells"] and (out / "plot.png").is_file()
        return
    assert line.endswith(f"continue with: {command}") and "no run had finished" in line, line
    if moment in ("imports", "setup"):
        assert not out.exists()  # the folder, runs/ and the run: nothing left behind
        return
    assert (run / "model.safetensors").is_file() and not (run / "reproduce.json").exists()
    assert not (out / LOCK_NAME).exists() and not (run / LOCK_NAME).exists()
    if moment == "step":  # the command it prints finishes the table
        res = CliRunner().invoke(main, [*REPRODUCE, "--out", str(out)])
        assert res.exit_code == 0 and (run / "reproduce.json").is_file() and (out / "table.md").is_file()


def test_deferred_signal_waits_for_the_block():
    order = []
    with pytest.raises(signals.Stopped) as exc:
        with signals.deferred():
            signals.signal.raise_signal(signals.signal.SIGTERM)
            order.append("after the signal")
    assert order == ["after the signal"] and signals.exit_status(exc.value) == 143


# ---------------------------------------------------------------------------------------------------- one writer
#: `fsa2rnn train` whose first step waits for the file named by $GO (so that the second process meets it running)
_WAITING_TRAIN = """
import os, sys, time
from fsa2rnn.nn.train import trainer
step = trainer._Trainer._train_step
def waiting(self):
    while not os.path.exists(os.environ["GO"]):
        time.sleep(0.05)
    return step(self)
trainer._Trainer._train_step = waiting
from fsa2rnn.cli.main import main
main(sys.argv[1:])
"""


def test_a_second_train_on_a_run_in_use_is_refused_naming_the_holder(tmp_path):
    out, go = tmp_path / "run", tmp_path / "go"
    env = {**os.environ, "GO": str(go), "OMP_NUM_THREADS": "1"}
    first = subprocess.Popen([sys.executable, "-c", _WAITING_TRAIN, "train", *TINY, "--out", str(out)], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (out / "config.json").exists():  # the lock is taken before anything is written
            assert first.poll() is None and time.monotonic() < deadline, first.communicate()
            time.sleep(0.05)
        rc, err, _, peak = bench_hostile.run_cli(["train", *TINY, "--seed", "7", "--out", str(out)],
                                                 address_space=bench_hostile.ADDRESS_SPACE)  # fmt: skip
        assert rc == 2 and len(err.strip().splitlines()) == 1, err
        assert err.startswith(f"error: the run directory '{out}' is in use by process {first.pid} on "), err
        assert peak < 500, peak
    finally:
        go.touch()
        _, first_err = first.communicate(timeout=300)
    assert first.returncode == 0, first_err
    assert json.loads((out / "config.json").read_text())["train"]["seed"] == 42 and (out / "eval.json").is_file()
    assert not (out / LOCK_NAME).exists()


def test_torchrun_workers_trust_their_launchers_lock(tmp_path, monkeypatch):
    run = tmp_path / "run"
    with directory_lock(run, runlock.WHAT):  # this process is the launcher
        monkeypatch.setenv("WORLD_SIZE", "2")
        monkeypatch.setenv("RANK", "0")
        with pytest.raises(DirectoryLockedError):  # a torchrun started by hand: rank 0 takes the lock itself
            runlock.check_run_free(run)
        monkeypatch.setenv(runlock.LAUNCHER_ENV, runlock.launcher_env(run)[runlock.LAUNCHER_ENV])
        runlock.check_run_free(run)  # rank 0 of our launcher: neither refused nor waiting
        with runlock.run_lock(run / "seed-1"):  # nor for a run under RUN (--seeds)
            assert not (run / "seed-1" / LOCK_NAME).exists()
        monkeypatch.setenv(runlock.LAUNCHER_ENV, f"1:{run}")  # another process named: not trusted
        with pytest.raises(DirectoryLockedError):
            runlock.check_run_free(run)
        monkeypatch.setenv("RANK", "1")
        monkeypatch.delenv(runlock.LAUNCHER_ENV)
        with runlock.run_lock(run):  # the other ranks write nothing and take nothing
            pass


def test_run_lock_is_reentrant_within_a_process(tmp_path):
    with runlock.run_lock(tmp_path / "run"):
        with runlock.run_lock(tmp_path / "run"):
            runlock.check_run_free(tmp_path / "run")
        assert (tmp_path / "run" / LOCK_NAME).exists()
    assert not (tmp_path / "run").exists()


def test_a_damaged_metrics_line_on_resume_is_named_before_torch(tmp_path):
    """A torn last line (a killed run) is dropped; a damaged line before it is refused, naming the file."""
    from fsa2rnn.fsa.errors import SpecError
    from fsa2rnn.nn.train.runfiles import read_metrics

    path = tmp_path / "metrics.jsonl"
    path.write_text('{"step": 1}\n{"step": 2, "lo')
    assert read_metrics(path) == [{"step": 1}]
    path.write_bytes(b'{"step": 1}\n{"step": 2}\xe9\n')
    with pytest.raises(SpecError, match=r"metrics.jsonl' is damaged: byte 23 is not UTF-8"):
        read_metrics(path)
