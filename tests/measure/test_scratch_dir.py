"""A lesson's temporary folder goes away with its process (lesson 12's work folder, lesson 11's
Chrome trace): nothing piles up in /tmp from run to run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from course.measure.storage import scratch_dir


def test_a_scratch_dir_is_deleted_with_everything_in_it_when_its_process_exits():
    code = (
        "from course.measure.storage import scratch_dir; d = scratch_dir('course-test-'); "
        "(d / 'sub').mkdir(); (d / 'sub' / 'f.bin').write_bytes(b'x'); print(d)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    path = Path(out.stdout.strip())
    assert path.name.startswith("course-test-") and path.parent.is_dir()
    assert not path.exists()


def test_a_scratch_dir_exists_while_its_process_runs(tmp_path, monkeypatch):
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    d = scratch_dir("course-lesson12-")
    assert d.is_dir() and d.parent == tmp_path and d.name.startswith("course-lesson12-")
    with pytest.raises(ValueError, match="prefix"):
        scratch_dir("a/b")


def test_a_killed_runs_folder_is_deleted_by_the_next_run(tmp_path, monkeypatch):
    """SIGKILL (or a kernel stopped for being slow to shut down) runs no clean-up: the next
    scratch_dir of the same prefix deletes folders whose process is gone, and only those."""
    import os
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout.strip()
    left = tmp_path / f"course-lesson12-{dead}-abc123"
    (left / "dcp").mkdir(parents=True)
    mine = tmp_path / f"course-lesson12-{os.getpid()}-xyz789"  # this process: alive
    other = tmp_path / f"course-trace-{dead}-abc123"  # another prefix: not this call's
    mine.mkdir(), other.mkdir()
    new = scratch_dir("course-lesson12-")
    assert new.name.startswith(f"course-lesson12-{os.getpid()}-")
    assert not left.exists() and mine.is_dir() and other.is_dir() and new.is_dir()


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no catchable SIGTERM")
def test_a_kernel_stopped_with_sigterm_leaves_no_folder():
    """jupyter asks a kernel to shut down, and sends SIGTERM when it is slow to go (Python's
    default action runs no atexit): a kernel-like process blocked in a wait, terminated so, still
    deletes its folder, and dies of the signal as it would have."""
    import signal

    code = (
        "import sys, time; from course.measure.storage import scratch_dir; "
        "d = scratch_dir('course-test-'); (d / 'trace.json').write_text('{}'); "
        "print(d, flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    try:
        path = Path(proc.stdout.readline().strip())
        assert path.name.startswith("course-test-") and (path / "trace.json").is_file()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == -signal.SIGTERM
    finally:
        proc.kill()
        proc.stdout.close()
    assert not path.exists()


@pytest.mark.skipif(sys.platform == "win32", reason="Windows has no catchable SIGTERM")
def test_a_sigterm_handler_set_by_someone_else_is_left_alone():
    code = (
        "import signal; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "from course.measure.storage import scratch_dir; scratch_dir('course-test-'); "
        "print(signal.getsignal(signal.SIGTERM) is signal.SIG_IGN)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "True", out.stderr
