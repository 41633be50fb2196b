"""Model-file integrity (one hash over header and tensors, every target), verification against the target automaton
stored at compile time (never the model against itself), and `run` refusing states outside the readout.

Files are edited here by an independent reader of the safetensors layout (8-byte little-endian header length, JSON
header with each tensor's byte range), not through fsa2rnn's own loader.
"""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.compiler import compile_diagonal, compile_householder, compile_nfsm, compile_pdssm
from fsa2rnn.compiler.model import CompiledModel
from fsa2rnn.fsa import ModelFileError, resolve_spec

TARGETS = ("householder", "diagonal", "nfsm", "pdssm")
#: a float tensor and an integer table of each target's flip-flop model
FLOAT_TENSOR = {"householder": "L0.A", "diagonal": "L0.lam_re", "nfsm": "layers.0.weight", "pdssm": "pd.D"}
INT_TENSOR = {"householder": "readout.states", "diagonal": "L0.exponents", "nfsm": "readout.states", "pdssm": "pd.P"}
COMPILERS = {"householder": compile_householder, "diagonal": compile_diagonal, "nfsm": compile_nfsm,
             "pdssm": compile_pdssm}  # fmt: skip
#: targets whose readout can lack a state (a PD-SSM reads every coordinate as a state)
PARTIAL_READOUT = ("householder", "diagonal", "nfsm")


@pytest.fixture
def runner():
    return CliRunner()


def _one_line_error(res, *messages: str) -> None:
    assert res.exit_code == 2, res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert all(m in lines[0] for m in messages), lines[0]
    assert "Traceback" not in res.stderr and "null" not in res.stdout


def _compiled_file(runner, tmp_path, target: str, spec: str = "flipflop"):
    out = tmp_path / f"{target}.safetensors"
    res = runner.invoke(main, ["compile", spec, "--target", target, "-o", str(out)])
    assert res.exit_code == 0, res.output
    return out


def _layout(data: bytes) -> tuple[int, dict]:
    (n,) = struct.unpack("<Q", data[:8])
    return 8 + n, json.loads(data[8 : 8 + n])


def _flip_tensor_byte(path, name: str) -> None:
    data = bytearray(path.read_bytes())
    base, header = _layout(bytes(data))
    begin, _ = header[name]["data_offsets"]
    data[base + begin] ^= 0x01  # the lowest bit of the first element (little-endian)
    path.write_bytes(bytes(data))


def _edit_header(path, edit) -> None:
    """Rewrite the fsa2rnn header (JSON in the safetensors metadata) with ``edit(header)``, tensors unchanged."""
    data = path.read_bytes()
    base, header = _layout(data)
    meta = header["__metadata__"]
    h = json.loads(meta["fsa2rnn"])
    edit(h)
    meta["fsa2rnn"] = json.dumps(h)
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + data[base:])


def _run_and_verify(runner, path):
    return [
        runner.invoke(main, ["run", str(path)], input='["set", "read"]\n'),
        runner.invoke(main, ["verify", str(path), "--length", "20", "--words", "2"]),
    ]


@pytest.mark.parametrize("target", TARGETS)
def test_intact_file_runs_and_verifies(runner, tmp_path, target):
    path = _compiled_file(runner, tmp_path, target)
    run, verify = _run_and_verify(runner, path)
    assert run.exit_code == 0 and json.loads(run.stdout) == ["1", "1"], run.output
    assert verify.exit_code == 0, verify.output
    assert "automaton: stored in the model file" in verify.stdout


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind", ["float", "integer"])
def test_flipped_tensor_byte_is_bad_input(runner, tmp_path, target, kind):
    path = _compiled_file(runner, tmp_path, target)
    _flip_tensor_byte(path, (FLOAT_TENSOR if kind == "float" else INT_TENSOR)[target])
    for res in _run_and_verify(runner, path):
        _one_line_error(res, "integrity hash", "modified")


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "edit",
    [
        lambda h: h["states"].__setitem__(0, "renamed"),
        lambda h: h["automaton"]["transitions"]["read"].reverse(),
        lambda h: h["summary"].__setitem__("verified", False),
        lambda h: h.__setitem__("extra", 1),
    ],
    ids=["rename-state", "edit-stored-automaton", "edit-summary", "add-key"],
)
def test_edited_header_is_bad_input(runner, tmp_path, target, edit):
    path = _compiled_file(runner, tmp_path, target)
    _edit_header(path, edit)
    for res in _run_and_verify(runner, path):
        _one_line_error(res, "integrity hash", "modified")


@pytest.mark.parametrize("target", TARGETS)
def test_missing_hash_and_old_format_refused(runner, tmp_path, target):
    path = _compiled_file(runner, tmp_path, target)
    _edit_header(path, lambda h: h.pop("sha256"))
    for res in _run_and_verify(runner, path):
        _one_line_error(res, "no 'sha256' integrity hash")

    def old(h):
        h.pop("sha256")
        h.pop("automaton")
        h["format"] = "fsa2rnn.model/1"

    path = _compiled_file(runner, tmp_path, target)
    _edit_header(path, old)
    for res in _run_and_verify(runner, path):
        _one_line_error(res, "fsa2rnn.model/1", "recompile")


def test_hash_covers_header_and_tensors_in_memory():
    """The hash is recomputed from the canonical header: key order and JSON spacing do not matter, any value does;
    load_model refuses an in-memory model edited after it was sealed, seal() accepts the edit."""
    from fsa2rnn.nn import load_model

    m = compile_nfsm(resolve_spec("flipflop"))
    m.check_integrity(required=True)
    reordered = CompiledModel(dict(reversed(list(m.header.items()))), dict(m.tensors))
    reordered.check_integrity(required=True)
    m.tensors["readout.states"] = m.tensors["readout.states"][::-1].copy()
    with pytest.raises(ModelFileError, match="modified"):
        load_model(m)
    load_model(m.seal())


# ---------------------------------------------------------------- verify against the stored target


def _read_acts_as_set(target: str) -> CompiledModel:
    """The flip-flop model whose `read` row is a copy of its `set` row: the model of another automaton, with an
    intact hash (re-sealed), as a compiler bug or a training run would leave it."""
    a = resolve_spec("flipflop")
    m = compile_nfsm(a, heads="single") if target == "nfsm" else COMPILERS[target](a)
    s, r = a.symbol_index("set"), a.symbol_index("read")
    t = {k: v.copy() for k, v in m.tensors.items()}
    if target == "nfsm":
        t["layers.0.weight"][:, r] = t["layers.0.weight"][:, s]
    elif target == "pdssm":
        t["pd.P"][r] = t["pd.P"][s]
    else:  # single-layer models: row i of every per-row tensor is the row of symbol i
        for name, arr in t.items():
            if name.startswith("L0.") and name != "L0.keys" and arr.ndim >= 1 and len(arr) == a.n_symbols:
                arr[r] = arr[s]
    return CompiledModel(dict(m.header), t).seal()


@pytest.mark.parametrize("target", TARGETS)
def test_model_of_another_automaton_fails_verify_without_spec(runner, tmp_path, target):
    from fsa2rnn.realize.verify import automaton_from_model

    a = resolve_spec("flipflop")
    bad = _read_acts_as_set(target)
    realized = automaton_from_model(bad)  # what the weights do: a consistent automaton, read = set
    assert np.array_equal(realized.delta("read"), a.delta("set")) and not np.array_equal(
        realized.delta("read"), a.delta("read")
    )
    path = tmp_path / "bad.safetensors"
    bad.save(path)
    res = runner.invoke(main, ["verify", str(path), "--json", "--length", "50"])
    assert res.exit_code == 1, res.output
    report = json.loads(res.stdout)
    assert report["automaton"] == "stored in the model file" and not report["ok"]
    if target == "nfsm":
        assert not report["extraction"]["match"] and not report["certificate"]["certified"]
        assert report["certificate"]["failing_word"] is not None
    else:
        assert not report["exact"]["ok"]
    res = runner.invoke(main, ["verify", str(path), "--spec", "flipflop", "--json", "--length", "50"])
    assert res.exit_code == 1 and json.loads(res.stdout)["automaton"] == "from --spec"


def test_failing_certificate_alone_exits_1(runner, tmp_path):
    """Tables that realize the automaton at bfloat16 but whose margins are not certified there: exit 1."""
    from cases import random_automaton

    m = compile_nfsm(random_automaton(7, 3, 5), margin=1e-3, heads="single", layers="single")
    path = tmp_path / "m.safetensors"
    m.save(path)
    res = runner.invoke(main, ["verify", str(path), "--dtype", "float16", "--json", "--length", "200"])
    report = json.loads(res.stdout)
    assert report["extraction"]["match"] and not report["certificate"]["certified"]
    assert res.exit_code == 1 and not report["ok"]


def test_stored_automaton_is_the_compiled_one():
    for spec in ("flipflop", "T3", "Z5"):
        a = resolve_spec(spec)
        for target, compiler in COMPILERS.items():
            if target == "diagonal" and spec == "T3":
                continue  # T3 has a non-abelian group: no diagonal model
            got = compiler(a).target_automaton()
            assert np.array_equal(got.transitions, a.transitions) and got.states == a.states, (spec, target)
            assert got.initial == a.initial and got.symbols == a.symbols
    b = compile_householder(resolve_spec("flipflop"), initial="1").target_automaton()
    assert b.initial == 1  # the model's initial state, given by --initial


# ---------------------------------------------------------------- run: no null states


@pytest.mark.parametrize("engine", ["numpy", "torch"])
@pytest.mark.parametrize("target", PARTIAL_READOUT)
def test_run_refuses_a_state_outside_the_readout(runner, tmp_path, target, engine):
    """A model (intact hash) whose readout lacks state "1": `run` fails on the line that reaches it, never null —
    on the numpy executor and on the torch modules alike."""
    m = COMPILERS[target](resolve_spec("flipflop"))
    t = dict(m.tensors)
    keys = "readout.codes" if target == "nfsm" else "readout.keys"
    keep = t["readout.states"] != 1
    t[keys], t["readout.states"] = t[keys][keep], t["readout.states"][keep]
    path = tmp_path / "m.safetensors"
    CompiledModel(dict(m.header), t).save(path)
    res = runner.invoke(main, ["run", str(path), "--engine", engine], input='["reset"]\n["reset", "set", "read"]\n')
    assert res.exit_code == 2 and res.stdout.strip().splitlines() == ['["0"]'], res.output
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: stdin line 2: after symbol 2"), res.stderr
    assert "outside its readout" in lines[0] and "Traceback" not in res.stderr


def test_state_names_helper():
    from fsa2rnn.cli.readout import state_names

    names = ["p", "q"]
    assert state_names(np.array([[0, 1, -1]]), names, lengths=[2]) == [["p", "q"]]
    assert state_names(np.array([[1, 0], [0, -1]]), names, lengths=[2, 1]) == [["q", "p"], ["p"]]
    with pytest.raises(ModelFileError, match="line 7: after symbol 2 the model's state at float16"):
        state_names(np.array([[0, -1]]), names, labels=["line 7"], dtype="float16")
    with pytest.raises(ModelFileError, match="word 2: after symbol 1"):
        state_names(np.array([[0, 1], [2, 0]]), names)  # index 2 is out of range too
