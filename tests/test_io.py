"""fsa/io.py atomic writes: the file appears whole or not at all, with the permissions a plain open() gives."""

from __future__ import annotations

import os
import stat

import pytest

from fsa2rnn.fsa.io import atomic_write, atomic_write_text


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def _mode(path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_new_file_gets_0666_minus_umask(tmp_path, umask_022):
    path = tmp_path / "out.txt"
    atomic_write_text(path, "hello")
    assert path.read_text() == "hello"
    assert _mode(path) == 0o644
    assert os.listdir(tmp_path) == ["out.txt"]


def test_replaced_file_keeps_its_mode(tmp_path, umask_022):
    path = tmp_path / "out.txt"
    path.write_text("old")
    path.chmod(0o640)
    atomic_write_text(path, "new")
    assert path.read_text() == "new" and _mode(path) == 0o640


def test_failed_write_leaves_nothing(tmp_path):
    path = tmp_path / "out.txt"
    path.write_text("old")

    def write(p):
        p.write_text("partial")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        atomic_write(path, write)
    assert path.read_text() == "old" and os.listdir(tmp_path) == ["out.txt"]
