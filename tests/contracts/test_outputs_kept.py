"""Nothing lost (docs/guide/automata.md, "Errors and exit codes"): an output appears only once the report is printed,
a full disk or an unwritable folder is one line naming the path with the old file kept, an output that is an input
is refused, and names from the input are printed with their control characters escaped."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from fsa2rnn.cli.main import main
from fsa2rnn.fsa.errors import OutputFileError

NO_SPACE = 'Error while serializing: I/O error: No space left on device (os error 28)'


def test_a_report_that_cannot_be_printed_leaves_no_file(tmp_path):
    from fsa2rnn.cli.options import delivered

    out = tmp_path / "m.txt"
    out.write_text("old")
    with pytest.raises(OSError):
        with delivered(str(out), lambda p: p.write_text("new")):
            raise OSError(28, "No space left on device")  # what a print to /dev/full raises
    assert out.read_text() == "old" and os.listdir(tmp_path) == ["m.txt"]
    with delivered(str(out), lambda p: p.write_text("new")):
        assert out.read_text() == "old"  # not before the report is out
    assert out.read_text() == "new"


def test_a_full_disk_under_safetensors_is_one_line_naming_the_path(tmp_path, monkeypatch):
    """The error safetensors raises for a full disk becomes an OutputFileError naming the file; the old file stays
    (compile -o here; a training checkpoint goes through the same atomic_write)."""
    import safetensors.numpy
    from safetensors import SafetensorError

    def full(*args, **kwargs):
        raise SafetensorError(NO_SPACE)

    monkeypatch.setattr(safetensors.numpy, "save_file", full)
    out = tmp_path / "m.safetensors"
    out.write_text("OLD")
    res = CliRunner().invoke(main, ["compile", "parity", "--target", "householder", "-o", str(out)])
    assert res.exit_code == 2, res.output
    assert res.stderr.strip() == f"error: cannot write {str(out)!r}: No space left on device"
    assert out.read_text() == "OLD" and os.listdir(tmp_path) == ["m.safetensors"]


def test_a_training_checkpoint_on_a_full_disk_is_one_line(tmp_path, monkeypatch):
    import safetensors.torch
    from safetensors import SafetensorError

    from fsa2rnn.nn.train import checkpoint

    def full(*args, **kwargs):
        raise SafetensorError(NO_SPACE)

    monkeypatch.setattr(safetensors.torch, "save_file", full)
    monkeypatch.setattr(checkpoint, "save_file", full, raising=False)
    run = tmp_path / "run"
    res = CliRunner().invoke(main, ["train", "parity", "--steps", "2", "--d-model", "8", "--mlp-ratio", "0", "--batch",
                                    "4", "--train-length", "2..4", "--no-lmax", "--eval-lengths", "4", "--samples",
                                    "4", "--quiet", "--out", str(run)])  # fmt: skip
    assert res.exit_code == 2, (res.output, repr(res.exception))
    line = res.stderr.strip()
    assert line.count("\n") == 0 and line.startswith("error: cannot write ") and "No space left on device" in line
    assert "model.safetensors" in line


def test_a_read_only_folder_is_one_line(tmp_path, monkeypatch):
    from fsa2rnn.fsa.io import output_directory, output_target

    if os.geteuid() != 0:
        (tmp_path / "ro").mkdir(mode=0o555)
        with pytest.raises(OutputFileError, match="no permission to create files in"):
            output_target(tmp_path / "ro" / "m.safetensors")
    monkeypatch.setattr(os, "access", lambda path, mode: False)  # root writes anywhere: the check, pretended
    with pytest.raises(OutputFileError, match="cannot write in .* \\(read-only or no permission\\)"):
        output_directory(tmp_path / "new" / "run")
    res = CliRunner().invoke(main, ["reproduce", "grazzi-table3", "--out", str(tmp_path / "rep")])
    assert res.exit_code == 2 and "read-only or no permission" in res.stderr and not (tmp_path / "rep").exists()


def test_an_output_that_is_an_input_is_refused_before_anything_is_written(tmp_path):
    spec = tmp_path / "spec.dot"
    text = json.dumps({"states": 2, "symbols": ["a"], "transitions": {"a": [1, 0]}})
    spec.write_text(text)
    link = tmp_path / "link.dot"
    link.symlink_to(spec)
    for out in (spec, link):
        res = CliRunner().invoke(main, ["decompose", str(spec), "--dot", str(out)])
        assert res.exit_code == 2 and "writing it would destroy it" in res.stderr, res.output
    assert spec.read_text() == text


def test_names_are_printed_with_control_characters_escaped(tmp_path):
    spec = tmp_path / "ctl.json"
    spec.write_text(json.dumps({"states": ["a\x1b[31m", "b\u202e"], "symbols": ["x\ty"], "name": "n\x07",
                                "transitions": {"x\ty": [1, 0]}, "initial": "a\x1b[31m"}))  # fmt: skip
    for command in ("show", "decompose"):
        res = CliRunner().invoke(main, [command, str(spec)])
        assert res.exit_code == 0, res.output
        assert "a\\x1b[31m" in res.output and "\x1b" not in res.output and "\u202e" not in res.output
        assert "\x07" not in res.output and "n\\x07" in res.output
    res = CliRunner().invoke(main, ["show", "parity\x1b[2J"])
    assert res.exit_code == 2 and "\x1b" not in res.stderr and "\\x1b[2J" in res.stderr
