"""Memory bandwidth on this machine: how fast data flows from each level of the memory hierarchy.

- :func:`working_set_sweep` reads a buffer of growing size again and again and reports bytes/s.
  While the buffer fits in a cache level the reads are served from there; once it outgrows the
  level the rate drops to the next one down, so the curve has *steps* near the cache sizes the
  operating system reports (``course.measure.devices.cpu_caches``). On a GPU the same sweep shows
  the L2 cache and device memory (HBM/GDDR).
- :func:`cache_plateaus` summarises a sweep per level (median bandwidth of the points that sit
  clearly inside it) for the roofline of lesson 02.
- :func:`host_device_sweep` (CUDA only) times copies between host memory and the GPU, from
  pageable and from pinned (page-locked) host memory: the PCIe or NVLink-C2C link.

How the read kernel works: ``x.expand(reps, n).sum()`` reads the same ``n`` floats ``reps`` times
in one call, so even a 4 KiB buffer moves 64 MiB per call and the fixed cost of a torch call
(a few microseconds) does not swamp the measurement. The CPU sweep runs on **one thread** by
default: L1 and L2 belong to one core, and on a shared machine a second thread waits for a core
that another program holds. With many threads a tiny working set is read in a few microseconds,
so waking the threads costs as much as the reading: ``python -m course measure`` on a 16-core host
once reported L1 at 143 GB/s below L2 at 494 GB/s that way. :func:`out_of_order` names a level
measured below the next one down, which is then the method's limit, not the hardware.

Used by lesson 02.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import torch

from course.facts import validate
from course.facts.units import KiB, MiB
from course.measure.timing import Budget, Sweep, check_device, median_of, progress, time_call

KERNELS = ("read", "copy")
#: Bytes each call of the read kernel moves at least (small buffers are read many times over).
READ_BYTES_PER_CALL = {"cpu": 64 * MiB, "cuda": 256 * MiB, "mps": 64 * MiB}

COLUMNS = (
    "kernel",
    "device",
    "working_set_bytes",
    "threads",
    "seconds",
    "spread_seconds",
    "bytes_per_s",
)


@dataclass(frozen=True)
class BandwidthRecord:
    """One measured point: a kernel over a working set, the median time per call and bytes/s."""

    kernel: str  # "read", "copy", "h2d" (host to device) or "d2h"
    device: str
    working_set_bytes: int  # size of the buffer the kernel touches
    bytes_moved: float  # bytes read + written per call
    seconds: float  # median seconds per call
    spread_seconds: float  # interquartile range of the seconds per call
    repeats: int
    bytes_per_s: float  # bytes_moved / seconds
    threads: int | None = None  # torch intra-op threads (None for copies over the host link)
    pinned: bool | None = None  # host memory page-locked (host <-> device copies only)


def default_working_sets(device: str = "cpu", caches: Mapping[str, int] | None = None) -> list[int]:
    """Powers of two from 4 KiB (CPU) or 64 KiB (GPU) to 8x the last cache level (>= 64 MiB)."""
    largest = max((caches or {}).values(), default=32 * MiB)
    top = min(max(8 * largest, 64 * MiB), 1024 * MiB)
    size = 4 * KiB if device == "cpu" else 64 * KiB
    sizes = []
    while size <= top:
        sizes.append(size)
        size *= 2
    return sizes


def read_callable(working_set_bytes: int, *, device: str = "cpu"):
    """A no-argument function that sums a float32 buffer of this size, re-read to >= a few MiB.

    Returns ``(fn, bytes_moved_per_call)``.
    """
    n = (
        validate.positive_int("working_set_bytes", working_set_bytes, minimum=64, maximum=2**34)
        // 4
    )
    kind = torch.device(check_device(device)).type
    x = torch.ones(n, dtype=torch.float32, device=device)
    reps = max(1, READ_BYTES_PER_CALL[kind] // (4 * n))
    view = x.expand(reps, n)  # stride 0 along the first dimension: the same memory, reps times
    return (lambda: view.sum()), float(4 * n * reps)


def copy_callable(working_set_bytes: int, *, device: str = "cpu"):
    """A no-argument function copying a float32 buffer into another; moves 2x its size per call."""
    n = (
        validate.positive_int("working_set_bytes", working_set_bytes, minimum=64, maximum=2**34)
        // 4
    )
    check_device(device)
    src = torch.ones(n, dtype=torch.float32, device=device)
    dst = torch.empty_like(src)
    return (lambda: dst.copy_(src)), float(2 * 4 * n)


def working_set_sweep(
    sizes: Iterable[int] | None = None,
    *,
    kernel: str = "read",
    device: str = "cpu",
    threads: int | None = 1,
    budget_seconds: float = 5.0,
    show_progress: bool | None = None,
) -> Sweep:
    """Bandwidth of ``kernel`` ('read' or 'copy') over working sets of growing size, in budget.

    Each point gets an equal share of the budget for measuring (at most 0.1 s); points that no
    longer fit are skipped and listed in ``Sweep.skipped``. ``threads=1`` by default (see the
    module docstring); pass ``None`` for torch's current thread count.
    """
    validate.choice("kernel", kernel, KERNELS)
    check_device(device)
    budget = Budget(budget_seconds)
    if sizes is None:
        from course.measure.devices import cpu_caches

        sizes = default_working_sets(device, cpu_caches() if device == "cpu" else None)
    size_list = sorted({validate.positive_int("size", s, minimum=64, maximum=2**34) for s in sizes})
    if not size_list:
        raise ValueError("sizes must name at least one working-set size in bytes")
    sweep = Sweep(
        f"Bandwidth ({kernel}) vs working set on {device}", budget.seconds, columns=COLUMNS
    )
    per_point = min(0.1, max(0.005, budget.seconds / (3 * len(size_list))))
    make = read_callable if kernel == "read" else copy_callable
    with progress(
        len(size_list),
        desc=f"{kernel} bandwidth",
        budget_seconds=budget.seconds,
        show=show_progress,
    ) as bar:
        for i, size in enumerate(size_list):
            # a point costs its measuring time plus allocation and a few calls (~3x per_point)
            if not budget.fits(3 * per_point) and i > 0:
                sweep.skipped.append(f"{size} bytes: {budget.remaining:.2g} s of budget left")
                bar.update(1)
                continue
            fn, moved = make(size, device=device)
            timing = time_call(fn, device=device, threads=threads, min_run_time=per_point)
            sweep.records.append(
                BandwidthRecord(
                    kernel=kernel,
                    device=device,
                    working_set_bytes=size,
                    bytes_moved=moved,
                    seconds=timing.median_seconds,
                    spread_seconds=timing.iqr_seconds,
                    repeats=timing.repeats,
                    bytes_per_s=moved / timing.median_seconds,
                    threads=timing.threads,
                )
            )
            del fn
            bar.update(1)
    sweep.elapsed_seconds = budget.elapsed
    return sweep


@dataclass(frozen=True)
class Plateau:
    """The bandwidth a sweep measured inside one level of the hierarchy."""

    level: str  # "L1d", "L2", "L3", or "memory" (beyond the last cache)
    capacity_bytes: int | None  # the level's size as the OS reports it (None for main memory)
    bytes_per_s: float  # median of the points inside the level
    points: int  # how many sweep points that median is over


def cache_plateaus(sweep: Sweep, caches: Mapping[str, int]) -> list[Plateau]:
    """Median bandwidth per level: points between 2x the level above and half this level's size.

    Main memory ("memory") takes the points at 4x the last cache or more. Points on the
    boundaries are left out, because there the data is split between two levels. A level with no
    point clearly inside it is left out of the result.
    """
    levels = sorted(caches.items(), key=lambda kv: kv[1])
    out, lower = [], 0
    for name, size in levels:
        inside = [
            r.bytes_per_s for r in sweep.records if 2 * lower <= r.working_set_bytes <= size / 2
        ]
        if inside:
            out.append(Plateau(name, size, median_of(inside), len(inside)))
        lower = size
    beyond = [r.bytes_per_s for r in sweep.records if r.working_set_bytes >= 4 * lower]
    if beyond:
        out.append(Plateau("memory", None, median_of(beyond), len(beyond)))
    return out


def out_of_order(plateaus: Sequence[Plateau], tolerance: float = 0.10) -> list[str]:
    """Levels measured more than ``tolerance`` slower than the level below them (a method
    artefact)."""
    return [
        a.level
        for a, b in zip(plateaus, plateaus[1:], strict=False)
        if a.bytes_per_s < (1 - tolerance) * b.bytes_per_s
    ]


def host_device_sweep(
    sizes: Sequence[int] = (1 * MiB, 16 * MiB, 256 * MiB),
    *,
    device: str = "cuda",
    pinned: Sequence[bool] = (False, True),
    budget_seconds: float = 5.0,
) -> Sweep:
    """Copy bandwidth host -> device ("h2d") and back ("d2h"), from pageable and pinned memory.

    CUDA only (ValueError elsewhere). Pinned (page-locked) host memory lets the GPU's copy engine
    read it directly; pageable memory is first staged through a pinned buffer by the driver.
    """
    if not torch.device(check_device(device)).type == "cuda":
        raise ValueError(f"host_device_sweep needs a CUDA device, got {device!r}")
    budget = Budget(budget_seconds)
    cases = [(s, p, d) for s in sorted(sizes) for p in pinned for d in ("h2d", "d2h")]
    sweep = Sweep(
        f"Host <-> {device} copy bandwidth", budget.seconds, columns=COLUMNS + ("pinned",)
    )
    per_point = min(0.1, budget.seconds / (3 * len(cases)))
    with progress(len(cases), desc="host<->device", budget_seconds=budget.seconds) as bar:
        for size, pin, direction in cases:
            if not budget.fits(3 * per_point):
                sweep.skipped.append(f"{direction} {size} bytes pinned={pin}: out of budget")
                bar.update(1)
                continue
            host = torch.ones(size // 4, dtype=torch.float32, pin_memory=pin)
            dev = torch.empty(size // 4, dtype=torch.float32, device=device)
            dst, src = (dev, host) if direction == "h2d" else (host, dev)
            fn = functools.partial(dst.copy_, src, non_blocking=pin)
            timing = time_call(fn, device=device, min_run_time=per_point)
            sweep.records.append(
                BandwidthRecord(
                    direction,
                    device,
                    size,
                    float(size),
                    timing.median_seconds,
                    timing.iqr_seconds,
                    timing.repeats,
                    size / timing.median_seconds,
                    None,
                    pin,
                )
            )
            bar.update(1)
    sweep.elapsed_seconds = budget.elapsed
    return sweep


__all__ = [
    "COLUMNS",
    "KERNELS",
    "READ_BYTES_PER_CALL",
    "BandwidthRecord",
    "Plateau",
    "cache_plateaus",
    "copy_callable",
    "default_working_sets",
    "host_device_sweep",
    "out_of_order",
    "read_callable",
    "working_set_sweep",
]
