"""How fast this machine's disk takes a checkpoint: sequential write bandwidth, synced to disk.

:func:`write_bandwidth` writes a file of ``size_bytes`` in 4 MiB chunks, calls ``fsync`` (so the
time includes reaching the device, not only the page cache), deletes it, and repeats; it returns
one record per repeat and the median. A checkpoint write is this kind of traffic: large,
sequential, written once. Lesson 12 sets it beside a parallel filesystem's sourced figure
(:mod:`course.facts.data.failure_logs`). :func:`scratch_dir` gives a lesson (or a profiler trace)
a temporary folder that goes away when the Python process ends.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import statistics
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from course.facts import validate
from course.facts.units import MiB

CHUNK_BYTES = 4 * MiB


@dataclass(frozen=True)
class DiskWrite:
    """Repeated synced writes of one file size: per-repeat seconds and the median bandwidth."""

    size_bytes: int
    seconds: tuple[float, ...]
    median_bytes_per_s: float
    spread_fraction: float  # (max - min) / median of the repeats' times
    directory: str


def write_bandwidth(
    directory: str | None = None,
    *,
    size_bytes: int = 64 * MiB,
    repeats: int = 3,
    show_progress: bool | None = None,
) -> DiskWrite:
    """Median bandwidth of ``repeats`` synced sequential writes of ``size_bytes`` in ``directory``
    (default: the system's temporary directory). The file is removed after each repeat."""
    from course.measure.timing import progress  # imports torch: not needed by scratch_dir

    size = validate.positive_int("size_bytes", size_bytes, minimum=CHUNK_BYTES, maximum=2**34)
    n = validate.positive_int("repeats", repeats, maximum=20)
    where = directory or tempfile.gettempdir()
    chunk = os.urandom(CHUNK_BYTES)  # incompressible
    seconds = []
    bar = progress(n, desc="disk write", budget_seconds=n * 2.0, show=show_progress)
    for _ in range(n):
        fd, path = tempfile.mkstemp(prefix="course-disk-", dir=where)
        try:
            t0 = time.perf_counter()
            written = 0
            while written < size:
                written += os.write(fd, chunk[: min(CHUNK_BYTES, size - written)])
            os.fsync(fd)
            seconds.append(time.perf_counter() - t0)
        finally:
            os.close(fd)
            os.unlink(path)
        bar.update(1)
    bar.close()
    med = statistics.median(seconds)
    return DiskWrite(
        size_bytes=size,
        seconds=tuple(seconds),
        median_bytes_per_s=size / med,
        spread_fraction=(max(seconds) - min(seconds)) / med,
        directory=where,
    )


#: This process's scratch folders, deleted at exit and on SIGTERM.
_FOLDERS: list[Path] = []


def _remove_folders() -> None:
    while _FOLDERS:
        shutil.rmtree(_FOLDERS.pop(), ignore_errors=True)


def _on_sigterm(signum: int, frame: object) -> None:
    """Delete the folders, then die of the signal as the default action would."""
    _remove_folders()
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _watch_sigterm() -> None:
    """Run :func:`_on_sigterm` on SIGTERM (what jupyter sends a kernel slow to shut down, after
    the shutdown request; Python's default action runs no ``atexit``), only where nobody else
    handles the signal and only from the main thread (where signal handlers can be set)."""
    if threading.current_thread() is not threading.main_thread():
        return
    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _on_sigterm)


def scratch_dir(prefix: str = "course-") -> Path:
    """A new temporary folder, ``prefix`` + this process's id + random letters, deleted with
    everything in it when this process exits: normally (a script or test run ending, a notebook's
    kernel shut down) or on SIGTERM (jupyter's next step with a kernel slow to shut down).

    A process that is killed outright (SIGKILL: a kernel still alive after SIGTERM, or a crash)
    runs no clean-up, so each call also deletes the folders of the same ``prefix`` whose process
    no longer exists: at most one run's folder is ever left behind.
    """
    if not isinstance(prefix, str) or not prefix or os.sep in prefix:
        raise ValueError(f"prefix must be a file-name prefix without {os.sep!r}, got {prefix!r}")
    _reap(prefix)
    path = Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-"))
    if not _FOLDERS:
        atexit.register(_remove_folders)
    _FOLDERS.append(path)
    _watch_sigterm()
    return path


def _reap(prefix: str) -> None:
    """Delete this user's ``prefix<pid>-*`` folders whose process has exited."""
    root = Path(tempfile.gettempdir())
    for old in root.glob(f"{prefix}*-*"):
        pid = old.name[len(prefix) :].split("-", 1)[0]
        if not pid.isdigit() or not old.is_dir() or old.stat().st_uid != os.getuid():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:  # gone (a live process of another user raises PermissionError)
            shutil.rmtree(old, ignore_errors=True)
        except (PermissionError, OverflowError):
            continue


__all__ = ["CHUNK_BYTES", "DiskWrite", "scratch_dir", "write_bandwidth"]
