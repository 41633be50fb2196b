"""fsa/io.py atomic writes: the file appears whole or not at all, with the permissions a plain open() gives; only a
regular file is ever replaced (a symlink is followed), and every bad path is one OutputFileError / one CLI line."""

from __future__ import annotations

import os
import stat

import pytest

from fsa2rnn.fsa.errors import OutputFileError
from fsa2rnn.fsa.io import (
    atomic_write,
    atomic_write_text,
    output_target,
    remove_staged_leftovers,
    staged_leftover,
    staged_write,
)


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


# ---------------------------------------------------------------- what an output path may replace (issue: -o /dev/full)
def _special_files(tmp_path):
    """A FIFO, a socket and a directory inside tmp_path, and /dev/null (a character device, never touched)."""
    import socket

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock"
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(sock_path))
    directory = tmp_path / "dir"
    directory.mkdir()
    return sock, {"a FIFO": fifo, "a socket": sock_path, "a directory": directory, "a character device": "/dev/null"}


def test_a_killed_writes_temporary_file_is_named_and_removed(tmp_path):
    """A write killed between its data and its rename leaves a temporary file: staged_leftover names its target
    (the real temporary name of staged_write, caught inside the write), and remove_staged_leftovers removes only the
    leftovers of the targets it is given."""
    seen = []
    with staged_write(tmp_path / "model.safetensors", lambda tmp: seen.append(tmp.name) or tmp.write_bytes(b"x")):
        assert (tmp_path / seen[0]).is_file()  # the write is done, the rename not yet: a kill here leaves it
    assert staged_leftover(seen[0]) == "model.safetensors" and not (tmp_path / seen[0]).exists()
    (tmp_path / ".model.safetensors.k1ll3d_x.tmp").write_bytes(b"half")
    for name in ("model.safetensors", ".model.safetensors", ".model.safetensors.tmp", ".a.b.tmp", ".x.ABCDEFGH.tmp"):
        assert staged_leftover(name) is None, name
    assert staged_leftover(".config.json.abc_1234.tmp") == "config.json"
    (tmp_path / ".notes.txt.abcdefgh.tmp").write_text("")
    (tmp_path / ".config.json.abcdefgh.tmp").mkdir()  # not a file: kept
    removed = remove_staged_leftovers(tmp_path, ["model.safetensors", "config.json"])
    assert removed == [".model.safetensors.k1ll3d_x.tmp"]
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".config.json.abcdefgh.tmp",
        ".notes.txt.abcdefgh.tmp",
        "model.safetensors",
    ]
    assert remove_staged_leftovers(tmp_path / "absent", ["model.safetensors"]) == []


def test_never_replaces_a_device_fifo_socket_or_directory(tmp_path):
    sock, paths = _special_files(tmp_path)
    try:
        for kind, path in paths.items():
            before = os.lstat(path)
            with pytest.raises(OutputFileError, match=f"is not a regular file \\({kind}\\)"):
                atomic_write_text(path, "x")
            after = os.lstat(path)
            assert stat.S_IFMT(after.st_mode) == stat.S_IFMT(before.st_mode) and after.st_ino == before.st_ino
            link = tmp_path / f"link-to-{kind.split()[-1]}"
            link.symlink_to(path)
            with pytest.raises(OutputFileError, match="a link to .* is not a regular file"):
                atomic_write_text(link, "x")
            assert link.is_symlink()
    finally:
        sock.close()
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".")) == []  # no temporary left behind


def test_symlink_is_followed_and_its_target_written_atomically(tmp_path, umask_022):
    target = tmp_path / "real.txt"
    target.write_text("old")
    target.chmod(0o640)
    link = tmp_path / "sub" / "link.txt"
    link.parent.mkdir()
    link.symlink_to(target)
    atomic_write_text(link, "new")
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert target.read_text() == "new" and _mode(target) == 0o640
    assert sorted(os.listdir(link.parent)) == ["link.txt"]  # the temporary went beside the target
    dangling = tmp_path / "dangling"
    dangling.symlink_to(tmp_path / "created.txt")
    atomic_write_text(dangling, "made")
    assert (tmp_path / "created.txt").read_text() == "made" and dangling.is_symlink()


def test_bad_paths_are_one_error_each(tmp_path):
    with pytest.raises(OutputFileError, match="the output path is empty"):
        output_target("")
    with pytest.raises(OutputFileError, match="the directory .*missing.* does not exist"):
        atomic_write_text(tmp_path / "missing" / "x.txt", "x")
    (tmp_path / "file").write_text("")
    with pytest.raises(OutputFileError, match="the directory .*file.* is not a directory"):
        atomic_write_text(tmp_path / "file" / "x.txt", "x")
    if os.geteuid() != 0:  # root may write anywhere
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        with pytest.raises(OutputFileError, match="no permission"):
            atomic_write_text(locked / "x.txt", "x")


@pytest.mark.parametrize(
    "args",
    [
        ["show", "parity", "--dot", "{out}"],
        ["decompose", "parity", "--dot", "{out}"],
        ["compile", "parity", "--target", "householder", "-o", "{out}"],
    ],
    ids=["show", "decompose", "compile"],
)
def test_every_writer_refuses_with_one_line(tmp_path, args):
    from click.testing import CliRunner

    from fsa2rnn.cli.main import main

    sock, paths = _special_files(tmp_path)
    cases = {**{k: str(v) for k, v in paths.items()}, "empty": "", "missing dir": str(tmp_path / "no" / "x")}
    expect = {"empty": "the output path is empty", "missing dir": "does not exist"}
    try:
        for kind, out in cases.items():
            res = CliRunner().invoke(main, [a.replace("{out}", out) for a in args])
            assert res.exit_code == 2, (kind, res.output)
            lines = res.stderr.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: "), (kind, res.stderr)
            assert expect.get(kind, "is not a regular file") in lines[0], (kind, lines[0])
            assert res.stdout == ""
    finally:
        sock.close()
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)
    assert stat.S_ISFIFO(os.stat(paths["a FIFO"]).st_mode) and (tmp_path / "dir").is_dir()
