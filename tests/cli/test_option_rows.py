"""Every option of every command has a row: a hostile value of it, refused in one line (exit 2), or the reason it
takes none. The walk below reads each command's parameters (what ``--help`` lists), so that an option cannot arrive
without its row. A row is one of:

- a case of benchmarks/bench_hostile.py (a fresh process under an address-space limit, with its memory ceiling)
  whose arguments name the option;
- a row of fsa2rnn.nn.limits.LIMITS (``type=checked(name)``): refused while the command line is parsed — checked
  here with a value past its limit;
- a row of :data:`ROWS` below: a bad value run in-process (cheap, for values refused before any work);
- a flag (no value), or a reason in :data:`NO_ROW`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from fsa2rnn.cli.limit_options import Checked
from fsa2rnn.cli.main import COMMANDS, main
from fsa2rnn.nn.limits import LIMITS

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_hostile  # noqa: E402

_TRAIN = ("train", "grazzi:parity", "--out", "{tmp}/out")
_REPRODUCE = ("reproduce", "grazzi-table3", "--out", "{tmp}/rep")
_COMPILE = ("compile", "parity", "-o", "{tmp}/m.safetensors")

#: (command, option) → (arguments with the bad value, a phrase of the one error line)
ROWS: dict[tuple[str, str], tuple[tuple[str, ...], str]] = {
    ("show", "--max-states"): (("show", "parity", "--max-states", "0"), "0 is not in the range x>=1"),
    ("analyze", "spec"): (("analyze", "regex:a{999999999999999999}"), "expands to an NFA"),
    ("analyze", "--max-elements"): (("analyze", "parity", "--max-elements", "0"), "0 is not in the range x>=1"),
    ("analyze", "--max-memory"): (("analyze", "parity", "--max-memory", "nan"), "must be a finite number"),
    ("analyze", "--max-states"): (("analyze", "parity", "--max-states", "0"), "0 is not in the range x>=1"),
    ("decompose", "--dot"): (("decompose", "parity", "--dot", "{tmp}/x.txt"), "the extension chooses the format"),
    ("decompose", "--max-image-set"): (("decompose", "parity", "--max-image-set", "0"), "not in the range x>=1"),
    ("decompose", "--max-states"): (("decompose", "parity", "--max-states", "0"), "not in the range x>=1"),
    ("compile", "--construction"): ((*_COMPILE, "--target", "householder", "--construction", "x"), "unknown"),
    ("compile", "--heads"): ((*_COMPILE, "--target", "nfsm", "--heads", "x"), "heads must be one of"),
    ("compile", "--layers"): ((*_COMPILE, "--target", "nfsm", "--layers", "x"), "layers must be one of"),
    ("compile", "--margin"): ((*_COMPILE, "--target", "nfsm", "--margin", "nan"), "a positive finite number"),
    ("compile", "--initial"): ((*_COMPILE, "--target", "nfsm", "--initial", "x"), "unknown state 'x'"),
    ("compile", "--max-states"): ((*_COMPILE, "--target", "nfsm", "--max-states", "0"), "not in the range x>=1"),
    ("run", "--dtype"): (("run", "{model}", "--dtype", "float31"), "Did you mean 'float32'"),
    ("run", "--engine"): (("run", "{model}", "--engine", "numpy", "--dtype", "float32"), "runs at float64 only"),
    ("verify", "--spec"): (("verify", "{model}", "--spec", "parit"), "did you mean 'parity'?"),
    ("verify", "--dtype"): (("verify", "{model}", "--dtype", "x"), "is not one of"),
    ("verify", "--mode"): (("verify", "{model}", "--mode", "x"), "is not one of"),
    ("verify", "--perturbation"): (("verify", "{model}", "--perturbation", "x"), "is not one of"),
    ("verify", "--max-states"): (("verify", "{model}", "--max-states", "0"), "not in the range x>=1"),
    ("train", "--model"): ((*_TRAIN, "--model", "deltanett"), "deltanett"),
    ("train", "--model-args"): ((*_TRAIN, "--model", "fsa2rnn_toys.gru:GRULayer", "--model-args", "{x"),
                                "--model-args must be a JSON object"),
    ("train", "--eig"): ((*_TRAIN, "--eig", "x"), "--eig"),
    ("train", "--delta-form"): ((*_TRAIN, "--delta-form", "x"), "delta"),
    ("train", "--dlr-init"): ((*_TRAIN, "--model", "dlr", "--dlr-init", "x"), "--dlr-init must be one of"),
    ("train", "--wrapper"): ((*_TRAIN, "--wrapper", "x"), "--wrapper must be one of fsa2rnn, fla"),
    ("train", "--labels"): ((*_TRAIN, "--labels", "x"), "labels"),
    ("train", "--loss"): ((*_TRAIN, "--loss", "x"), "loss"),
    ("train", "--arm"): ((*_TRAIN, "--model", "nfsm", "--arm", "x"), "--arm must be one of"),
    ("train", "--head-family"): ((*_TRAIN, "--model", "nfsm", "--head-family", "x"), "--head-family must be"),
    ("train", "--lr-grid"): ((*_TRAIN, "--seeds", "1,2", "--lr-grid", "x"), "--lr-grid must be"),
    ("train", "--device"): ((*_TRAIN, "--device", "x"), "device"),
    ("train", "--init-from"): ((*_TRAIN, "--init-from", "{tmp}/none.safetensors"), "no such model file"),
    ("train", "--preset"): ((*_TRAIN, "--preset", "x"), "preset"),
    ("train", "--scale"): ((*_TRAIN, "--scale", "small"), "--scale needs a --preset"),
    ("train", "--protocol"): ((*_TRAIN, "--protocol", "x"), "protocol"),
    ("train", "--jobs"): ((*_TRAIN, "--jobs", "0"), "0 is outside its limit [1, 10,000]"),
    ("train", "--launcher"): ((*_TRAIN, "--launcher", "pbs"), "'pbs' is not one of"),
    ("train", "--launcher-args"): ((*_TRAIN, "--launcher-args", "[]"), "--launcher-args must be a JSON object"),
    ("eval", "--protocol"): (("eval", "{tmp}", "--protocol", "x"), "is not one of"),
    ("eval", "--model"): (("eval", "{tmp}", "--model", "x.y:"), "is not of the form package.module:Name"),
    ("compare", "--model"): (("compare", "{tmp}", "--model", "x:1"), "is not of the form package.module:Name"),
    ("compare", "--max-states"): (("compare", "{tmp}", "--max-states", "0"), "not in the range x>=1"),
    ("compare", "--method"): (("compare", "{tmp}", "--method", "x"), "is not one of"),
    ("theorems", "--only"): (("theorems", "--only", "brandoit.thm4.1.x"), "did you mean 'brandoit.thm4.1.i'"),
    ("reproduce", "--scale"): ((*_REPRODUCE, "--scale", "x"), "--scale must be one of"),
    ("reproduce", "--tasks"): ((*_REPRODUCE, "--tasks", "pairty"), "did you mean 'parity'?"),
    ("reproduce", "--models"): ((*_REPRODUCE, "--models", "x"), "unknown model of grazzi-table3"),
    ("reproduce", "--model-args"): ((*_REPRODUCE, "--models", "fsa2rnn_toys.gru:GRULayer", "--model-args", "[]"),
                                    "--model-args must be a JSON object"),
    ("reproduce", "--arm"): ((*_REPRODUCE, "--arm", "x"), "unknown arm of grazzi-table3"),
    ("reproduce", "--seeds"): ((*_REPRODUCE, "--seeds", "x"), "--seeds must be distinct integers"),
    ("reproduce", "--jobs"): ((*_REPRODUCE, "--jobs", "0"), "0 is outside its limit [1, 10,000]"),
    ("reproduce", "--launcher"): ((*_REPRODUCE, "--launcher", "pbs"), "'pbs' is not one of"),
    ("reproduce", "--launcher-args"): ((*_REPRODUCE, "--launcher-args", "{x"), "--launcher-args must be a JSON"),
}

#: (command, option) → why it has no hostile value of its own
NO_ROW = {
    ("compare", "--spec"): "read by resolve_spec once the run is loaded: the SPEC rows of show and verify --spec",
    ("compare", "--compiled"): "read by CompiledModel.load once the run is loaded: the MODEL rows of verify",
}

#: rows that fail today, each a known defect left to the issue that owns the code (strict: fixing it flips the row)
KNOWN: dict[tuple[str, str], str] = {}


def _parameters() -> list[tuple[str, click.Parameter]]:
    ctx = click.Context(main)
    return [(name, p) for name in COMMANDS for p in main.get_command(ctx, name).params]


def _label(p: click.Parameter) -> str:
    return p.opts[0] if isinstance(p, click.Option) else p.name


def _in_hostile_cases(command: str, label: str, p: click.Parameter) -> bool:
    for case in bench_hostile.CASES:
        if case.args[0] != command:
            continue
        if isinstance(p, click.Argument) or any(a in case.args for a in p.opts):
            return True
    return False


@pytest.mark.parametrize("command,param", _parameters(), ids=lambda v: v if isinstance(v, str) else _label(v))
def test_every_option_has_a_row(command, param):
    label = _label(param)
    covered = (
        (command, label) in ROWS
        or (command, label) in NO_ROW
        or (isinstance(param, click.Option) and param.is_flag)
        or isinstance(param.type, Checked)
        or _in_hostile_cases(command, label, param)
    )
    assert covered, f"`fsa2rnn {command} {label}` has no hostile row: add one to bench_hostile.CASES or ROWS"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("rows") / "m.safetensors"
    from fsa2rnn.compiler import compile_householder
    from fsa2rnn.fsa import resolve_spec

    compile_householder(resolve_spec("parity")).save(path)
    return path


def _rows():
    for key, (args, phrase) in ROWS.items():
        marks = [pytest.mark.xfail(strict=True, reason=KNOWN[key])] if key in KNOWN else []
        yield pytest.param(args, phrase, marks=marks, id=" ".join(key))


@pytest.mark.parametrize("args,phrase", _rows())
def test_a_bad_value_is_one_line(args, phrase, model, tmp_path):
    args = [a.replace("{tmp}", str(tmp_path)).replace("{model}", str(model)) for a in args]
    res = CliRunner().invoke(main, args)
    lines = res.stderr.strip().splitlines()
    assert res.exit_code == 2, (res.exit_code, res.output[-400:], repr(res.exception))
    assert len(lines) == 1 and lines[0].startswith("error: ") and phrase in lines[0], res.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "rep").exists()  # nothing left behind


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_every_limit_row_refuses_past_its_limit(name):
    """A value past the row's upper end (or below its lower) is refused by the row's click type, in one line."""
    from fsa2rnn.fsa.errors import FsaError
    from fsa2rnn.nn.limits import check

    b = LIMITS[name]
    bad = (b.hi * 10 + 10) if b.hi is not None else (b.lo - 1)
    with pytest.raises(FsaError, match="outside its limit"):
        check(name, bad)
    with pytest.raises(FsaError, match="must be"):
        check(name, "nan" if b.kind is float else "1.5x")
