"""How fast this machine's disk takes a checkpoint: sequential write bandwidth, synced to disk.

:func:`write_bandwidth` writes a file of ``size_bytes`` in 4 MiB chunks, calls ``fsync`` (so the
time includes reaching the device, not only the page cache), deletes it, and repeats; it returns
one record per repeat and the median. A checkpoint write is this kind of traffic: large,
sequential, written once. Lesson 12 sets it beside a parallel filesystem's sourced figure
(:mod:`course.facts.data.reliability`). Layer 3 (standard library only; no torch needed).
"""

from __future__ import annotations

import os
import statistics
import tempfile
import time
from dataclasses import dataclass

from course.facts import validate
from course.facts.units import MiB
from course.measure.timing import progress

CHUNK_BYTES = 4 * MiB


@dataclass(frozen=True)
class DiskWrite:
    """Repeated synced writes of one file size: per-repeat seconds and the median bandwidth."""

    size_bytes: int
    seconds: tuple[float, ...]
    median_bytes_per_s: float
    spread_fraction: float  # (max - min) / median of the repeats' times
    directory: str


def write_bandwidth(directory: str | None = None, *, size_bytes: int = 64 * MiB, repeats: int = 3,
                    show_progress: bool | None = None) -> DiskWrite:  # fmt: skip
    """Median bandwidth of ``repeats`` synced sequential writes of ``size_bytes`` in ``directory``
    (default: the system's temporary directory). The file is removed after each repeat."""
    size = validate.positive_int("size_bytes", size_bytes, minimum=CHUNK_BYTES, maximum=2**34)
    n = validate.positive_int("repeats", repeats, maximum=20)
    where = directory or tempfile.gettempdir()
    chunk = os.urandom(CHUNK_BYTES)  # incompressible
    seconds = []
    bar = progress(n, desc="disk write", budget_s=n * 2.0, show=show_progress)
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
    return DiskWrite(size_bytes=size, seconds=tuple(seconds), median_bytes_per_s=size / med,
                     spread_fraction=(max(seconds) - min(seconds)) / med, directory=where)  # fmt: skip


__all__ = ["CHUNK_BYTES", "DiskWrite", "write_bandwidth"]
