"""One writer per directory (fsa2rnn.fsa.lock): a second process is refused in one line naming the holder; the
lock of a holder that died is free; an unlinked lock file is never trusted."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from fsa2rnn.fsa import lock as L
from fsa2rnn.fsa.errors import DirectoryLockedError

HOLD = """
import sys, time
from fsa2rnn.fsa.lock import directory_lock
with directory_lock(sys.argv[1], "run directory"):
    print("held", flush=True)
    time.sleep(120)
"""


def _holder(folder):
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_process_is_refused_naming_the_holder_and_a_dead_holder_frees_it(tmp_path):
    run = tmp_path / "run"
    proc = _holder(run)
    try:
        with pytest.raises(DirectoryLockedError) as exc:
            with L.directory_lock(run, "run directory"):
                pass
        message = str(exc.value)
        assert "\n" not in message and f"process {proc.pid} on " in message and str(run) in message, message
        assert L.lock_holder(run)["pid"] == proc.pid
    finally:
        proc.send_signal(signal.SIGKILL)  # no cleanup runs: the kernel releases the lock, the file stays
        proc.wait()
    assert (run / L.LOCK_NAME).exists() and L.lock_holder(run) is None
    with L.directory_lock(run) as path:
        assert L.lock_holder(run)["pid"] == os.getpid() and path == run / L.LOCK_NAME
    assert not (run / L.LOCK_NAME).exists()  # released: nothing left behind
    assert list(run.iterdir()) == []


def test_the_same_process_cannot_take_it_twice(tmp_path):
    with L.directory_lock(tmp_path):
        with pytest.raises(DirectoryLockedError, match=f"process {os.getpid()} on"):
            with L.directory_lock(tmp_path):
                pass


def test_a_lock_file_unlinked_before_our_flock_is_not_trusted(tmp_path, monkeypatch):
    """The last holder removes the file between our open and our flock: we must lock the file at the path."""
    real = L.fcntl.flock
    calls = []

    def racing_flock(fd, op):
        if not calls:
            os.unlink(tmp_path / L.LOCK_NAME)  # what a releasing holder does
        calls.append(op)
        return real(fd, op)

    monkeypatch.setattr(L.fcntl, "flock", racing_flock)
    with L.directory_lock(tmp_path):
        monkeypatch.setattr(L.fcntl, "flock", real)
        assert len(calls) == 2  # retried once
        with pytest.raises(DirectoryLockedError):
            with L.directory_lock(tmp_path):
                pass


def test_an_unwritable_place_is_one_output_error(tmp_path):
    from fsa2rnn.fsa.errors import OutputFileError

    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputFileError, match="cannot create the directory"):
        with L.directory_lock(tmp_path / "file" / "run"):
            pass
