"""Hostile input to every command (docs/limits.md, docs/guide/automata.md): every case is one line `error: …`, exit
2 (1 where the output cannot be written), nothing left behind or replaced, refused before the memory is spent.

The refusals (benchmarks/bench_hostile.py's cases) run the CLI in a child process under an address-space limit
(RLIMIT_AS, 2 GiB: a guard that is wrong fails fast on its allocation instead of eating the machine) and a hang
timeout, with the case's stdin, stdout, file-size limit and environment, and each stays below its memory ceiling
(500 MiB; the child's own peak, ``os.wait4``); benchmarks/bench_hostile.py prints their seconds beside the 5 s target.
The rest run in-process: Ctrl-C and ``--resume`` reproducing an uninterrupted run's records exactly, flags that
disagree with ``--init-from`` or the resumed run, short messages, progress, the torch-free task list.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.nn.limits import LIMITS, default_train_max, limits_table

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_hostile  # noqa: E402

MIB = 1 << 20


@pytest.fixture(scope="module")
def hostile_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("hostile")
    bench_hostile.write_fixtures(d)
    return d


@pytest.mark.parametrize("case", [c for c in bench_hostile.CASES if c.suite], ids=lambda c: c.name)
def test_refused_in_one_line_before_memory_is_spent(case, hostile_dir):
    case = case.resolved(hostile_dir)
    rc, err, seconds, peak_mib = bench_hostile.run_limited(case)
    lines = err.strip().splitlines()
    assert rc == case.code, (rc, err[-500:])
    assert len(lines) == 1 and lines[0].startswith("error: ") and case.expect in lines[0], err
    assert peak_mib < case.mib, f"{case.name}: peak {peak_mib:.0f} MiB"
    for leftover in case.absent:
        assert not (hostile_dir / leftover).exists(), leftover
    for path, text in case.kept:
        assert (hostile_dir / path).read_text() == text, path  # nothing replaced
    assert not [p for p in os.listdir(hostile_dir) if p.startswith(".") and p.endswith(".tmp")]  # nor half-written


def test_run_into_a_full_device_is_one_line(tmp_path):
    model = tmp_path / "p.safetensors"
    assert CliRunner().invoke(main, ["compile", "parity", "--target", "nfsm", "-o", str(model)]).exit_code == 0
    with open("/dev/full", "w") as full:
        res = subprocess.run([sys.executable, "-m", "fsa2rnn.cli", "run", str(model)], input='["1", "0"]\n',
                             stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)  # fmt: skip
    assert res.returncode == 1 and res.stderr.strip() == "error: cannot write the output: No space left on device"


# ---------------------------------------------------------------------------------------------------- the table
def test_every_limit_is_documented_and_stated_in_help():
    doc = (ROOT / "docs" / "limits.md").read_text()
    assert limits_table() in doc  # the page shows the table as it is
    res = CliRunner().invoke(main, ["train", "--help"])
    assert "--d-model" in res.output and "[1, 2^13]" in res.output
    for command, option in (("eval", "--cap"), ("compare", "--words"), ("verify", "--eta")):
        text = " ".join(CliRunner().invoke(main, [command, "--help"]).output.split())
        assert option in text and LIMITS[option.lstrip("-")].text() in text, (command, option)


def test_torch_free_copies_of_constants_agree():
    from fsa2rnn.cli.verify import LMAX_START
    from fsa2rnn.realize import conditions

    assert LMAX_START == conditions.LMAX_START


def test_default_training_length_without_torch_matches_every_task():
    from fsa2rnn.nn.tasks import PAPER_TASKS, get_task

    for name in [*PAPER_TASKS, "parity", "S3", "parity:accept"]:
        assert default_train_max(name) == get_task(name).default_train_length[1], name


def test_task_list_needs_no_torch_and_is_current():
    from fsa2rnn.cli.tasks import catalog
    from fsa2rnn.nn.tasks import list_tasks

    assert catalog() == json.loads(json.dumps(list_tasks(builtin=True))), "run `python -m fsa2rnn.cli.tasks`"
    code = ("import sys; sys.modules['torch'] = None\nfrom click.testing import CliRunner\n"
            "from fsa2rnn.cli.main import main\nr = CliRunner().invoke(main, ['tasks', '--json'])\n"
            "print(r.exit_code, len(__import__('json').loads(r.stdout)['tasks']))")  # fmt: skip
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    # fsa2rnn's own tasks without torch; the test plug-in's task needs torch, so it is one error line on stderr
    assert res.stdout.split() == ["0", str(len(list_tasks(builtin=True)))], res.stderr


# ---------------------------------------------------------------------------------------------------- short messages
def test_checkpoint_mismatch_and_alphabet_mismatch_are_short():
    import torch

    from fsa2rnn.nn.train.checkpoint import state_mismatch
    from fsa2rnn.realize.compare import _alphabet_difference

    want = {f"w{i}": torch.zeros(3, 4) for i in range(50)}
    got = {**want, "w7": torch.zeros(4, 4)}
    assert state_mismatch(want, got) == "tensor 'w7' has shape [4, 4], the model's [3, 4]"
    assert state_mismatch(want, {k: v for k, v in want.items() if k != "w3"}) == "no tensor 'w3'"
    assert state_mismatch(want, want) is None
    mine, theirs = [f"s{i}" for i in range(120)], [f"s{i}" for i in range(2, 121)]
    text = _alphabet_difference(mine, theirs)
    assert text == ": 's0', 's1' only in the first; 's120' only in the second" and len(text) < 80


def test_theorems_only_is_repeatable(monkeypatch):
    import fsa2rnn.realize.theorems as T

    ids = [e.id for e in T.select(None)][:2]
    ran = []

    def fake(entry, thorough):
        ran.append(entry.id)
        return {"id": entry.id, "kind": entry.kind, "status": "checked", "seconds": 0.0, "evidence": "stub"}

    monkeypatch.setattr(T, "run_theorem", fake)
    res = CliRunner().invoke(main, ["theorems", "--only", ids[1], "--only", ids[0], "--json", "--quiet"])
    assert res.exit_code == 0, res.output
    assert ran == [ids[1], ids[0]]


def test_plot_extension_chooses_the_format(tmp_path):
    from fsa2rnn.cli.options import check_plot
    from fsa2rnn.fsa.errors import SpecError

    assert check_plot(str(tmp_path / "a.PDF")) == "pdf" and check_plot(str(tmp_path / "a.svg")) == "svg"
    with pytest.raises(SpecError, match="extension chooses the format"):
        check_plot(str(tmp_path / "a.txt"))


# ---------------------------------------------------------------------------------------------------- interruption
TINY = ["parity", "--steps", "30", "--d-model", "16", "--mlp-ratio", "0", "--batch", "8", "--train-length", "3..10",
        "--log-every", "1", "--val-every", "10", "--checkpoint-every", "1000", "--no-lmax", "--eval-lengths", "16",
        "--samples", "16", "--quiet"]  # fmt: skip


def _records(run: Path) -> list[dict]:
    return [{k: v for k, v in json.loads(line).items() if k != "tokens_per_s"} for line in open(run / "metrics.jsonl")]


def _interrupt_at(run: Path, step: int) -> threading.Thread:
    """SIGINT to this process once ``run`` has logged ``step`` records (the trainer's handler takes it)."""

    def watch() -> None:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            try:
                if sum(1 for _ in open(run / "metrics.jsonl")) >= step:
                    os.kill(os.getpid(), signal.SIGINT)
                    return
            except OSError:
                pass
            time.sleep(0.01)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


@pytest.mark.usefixtures("one_torch_thread")
def test_ctrl_c_then_resume_reproduces_the_uninterrupted_run(tmp_path):
    full, part = tmp_path / "full", tmp_path / "part"
    assert CliRunner().invoke(main, ["train", *TINY, "--out", str(full)]).exit_code == 0
    watcher = _interrupt_at(part, 7)
    res = CliRunner().invoke(main, ["train", *TINY, "--out", str(part)])
    watcher.join()
    assert res.exit_code == 130, res.output
    assert "interrupted (SIGINT) during training: stopped at step" in res.stderr
    assert f"fsa2rnn train --out {part} --resume" in res.stderr
    stopped = int(res.stderr.split("stopped at step ")[1].split()[0])
    assert 7 <= stopped < 30 and (part / "model.safetensors").exists() and not (part / "eval.json").exists()
    # a flag that disagrees with the stored run is refused, naming it; none at all continues it
    res = CliRunner().invoke(main, ["train", "--out", str(part), "--resume", "--lr", "0.5"])
    assert res.exit_code == 2 and "--resume" in res.stderr and "--lr 0.001, not 0.5" in res.stderr
    res = CliRunner().invoke(main, ["train", "--out", str(part), "--resume", "--quiet"])
    assert res.exit_code == 0, res.output
    assert _records(part) == _records(full)
    assert json.loads((part / "eval.json").read_text()) == json.loads((full / "eval.json").read_text())


def test_run_stopped_before_its_first_checkpoint_blocks_nothing(tmp_path, monkeypatch):
    from fsa2rnn.nn.train import trainer

    out = tmp_path / "run"

    def boom(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(trainer._Trainer, "_train_step", boom)
    res = CliRunner().invoke(main, ["train", *TINY, "--out", str(out)])
    assert res.exit_code != 0 and not out.exists()  # nothing kept
    monkeypatch.undo()
    # a run killed before any checkpoint (config.json and metrics.jsonl only): --resume refuses, a new run replaces it
    out.mkdir()
    (out / "config.json").write_text("{}")
    (out / "metrics.jsonl").write_text('{"step": 1}\n')
    res = CliRunner().invoke(main, ["train", *TINY, "--out", str(out), "--resume"])
    assert res.exit_code == 2 and "holds no checkpoint" in res.stderr
    res = CliRunner().invoke(main, ["train", *TINY, "--steps", "2", "--val-every", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert json.loads((out / "config.json").read_text())["train"]["steps"] == 2


def test_init_from_refuses_a_given_flag_even_at_its_default(tmp_path):
    model = tmp_path / "p.safetensors"
    assert CliRunner().invoke(main, ["compile", "parity", "--target", "householder", "-o", str(model)]).exit_code == 0
    res = CliRunner().invoke(main, ["train", "grazzi:parity", "--init-from", str(model), "--d-model", "64",
                                    "--out", str(tmp_path / "r")])  # fmt: skip
    assert res.exit_code == 2 and "--d-model 64 conflicts with --init-from" in res.stderr
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------------------------------------------- structure
def _module_imports(path: Path) -> set[str]:
    """The fsa2rnn.nn.train modules a module imports at load (top-level statements only; relative resolved)."""
    import ast

    out = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ImportFrom):
            if node.level == 1 and node.module:
                out.add(node.module.split(".")[0])
            elif node.level == 1:
                out |= {a.name for a in node.names}
            elif node.level == 0 and (node.module or "").startswith("fsa2rnn.nn.train."):
                out.add(node.module.split(".")[3])
    return out


def test_trainer_has_a_leaf_run_files_module_and_no_import_cycle():
    folder = ROOT / "nn" / "train"
    graph = {p.stem: _module_imports(p) & {q.stem for q in folder.glob("*.py")} for p in folder.glob("*.py")}
    assert graph["runfiles"] == set()  # the leaf: run files and seed streams (nn never imports realize: test_layering)
    state: dict[str, int] = {}

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for nxt in graph[node]:
            assert state.get(nxt) != 1, f"import cycle: {' → '.join([*path, node, nxt])}"
            if nxt not in state:
                visit(nxt, [*path, node])
        state[node] = 2

    for node in graph:
        if node not in state:
            visit(node, [])


def test_moved_public_names_still_import():
    import fsa2rnn.nn.train as T

    for name in ("load_run", "evaluate_run", "accuracy_at_lengths", "failing_length_of", "nfsm_tables_exact",
                 "read_run_record", "stream_seed", "TrainConfig", "train"):  # fmt: skip
        assert callable(getattr(T, name)) or isinstance(getattr(T, name), type), name


#: numeric options with a limit of their own elsewhere: the regex DFA-state cap (refused as the subset construction
#: reaches it, docs/limits.md of the symbolic commands)
OWN_LIMITS = {"max_states"}


@pytest.mark.parametrize("command", ["train", "eval", "compare", "verify", "theorems", "tasks", "run", "reproduce"])
def test_every_numeric_option_has_a_row_in_the_limits_table(command):
    """A new numeric option of these commands must be declared with ``type=checked(name)`` (cli/limit_options.py)."""
    import click

    from fsa2rnn.cli.limit_options import Checked

    cmd = main.get_command(click.Context(main), command)
    plain = [
        p.name
        for p in cmd.params
        if isinstance(p.type, (click.types.IntParamType, click.types.FloatParamType))
        and not isinstance(p.type, Checked)
        and p.name not in OWN_LIMITS
    ]
    assert not plain, f"{command}: numeric options without a stated limit: {plain}"


def test_verify_lmax_progress_on_stderr_and_not_in_the_json(tmp_path, monkeypatch):
    """`verify --eta --lmax` reports its L_max search like the other commands (fsa2rnn.fsa.progress: a line per
    interval when stderr is not a terminal; the interval set to 0 here); --quiet silences it; stdout is the same."""
    from fsa2rnn.fsa import progress

    model = tmp_path / "z5.safetensors"
    runner = CliRunner()
    assert runner.invoke(main, ["compile", "Z5", "--target", "householder", "-o", str(model)]).exit_code == 0
    args = ["verify", str(model), "--eta", "0.01", "--lmax", "--cap", "256", "--length", "50", "--json"]
    monkeypatch.setattr(progress, "LOG_INTERVAL", 0.0)
    loud = runner.invoke(main, args)
    quiet = runner.invoke(main, [*args, "--quiet"])
    progress.set_quiet(False)
    assert loud.exit_code == quiet.exit_code == 1, loud.output  # Z5 Householder: not robust at η = 0.01
    lines = loud.stderr.splitlines()
    assert any(line.startswith("L_max search:") and "sym" in line for line in lines), loud.stderr
    assert any(line.startswith("L_max search (witness):") for line in lines), loud.stderr
    assert quiet.stderr == ""
    assert json.loads(loud.stdout) == json.loads(quiet.stdout)
    assert json.loads(loud.stdout)["robust"]["l_max"] == 59
