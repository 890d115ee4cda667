"""A stride sweep on this CPU: coalescing's physics, measured with cache lines instead of sectors.

:func:`stride_sweep` sums every ``stride``-th float32 of a buffer larger than the per-core L2
cache. Memory moves whole cache lines (64 bytes on x86), so once ``stride x 4`` bytes reach a
line, every element read costs a line: the *useful* bandwidth (bytes of the elements summed per
second) falls with the stride while the bandwidth of lines fetched stays roughly level. Each record
carries the prediction of ``course.calculators.coalescing.warp_access`` with a 64-byte "sector"
(the useful fraction of each line), so a lesson can set measurement beside calculation. Hardware
prefetchers and the L3 make the measured curve softer than the prediction: that difference is
what the finding reports. Timing through ``course.measure.timing.time_call``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from course.calculators import coalescing
from course.facts import validate
from course.facts.units import MiB
from course.measure.timing import Budget, Sweep, progress, time_call
from course.measure.topology import cache_line_bytes

COLUMNS = (
    "stride_elements",
    "useful_bytes",
    "line_bytes_moved",
    "seconds",
    "spread_seconds",
    "useful_bytes_per_s",
    "lines_bytes_per_s",
    "predicted_efficiency",
)


@dataclass(frozen=True)
class StrideRecord:
    """One stride: bytes the sum used, bytes of cache lines fetched, time, and the prediction."""

    stride_elements: int
    element_bytes: int
    line_bytes: int
    useful_bytes: int
    line_bytes_moved: int
    seconds: float
    spread_seconds: float
    useful_bytes_per_s: float
    lines_bytes_per_s: float
    predicted_efficiency: float  # useful bytes / line bytes, from the coalescing calculator


def stride_sweep(
    strides: Sequence[int] = (1, 2, 4, 8, 16, 32),
    *,
    buffer_bytes: int = 32 * MiB,
    budget_seconds: float = 4.0,
    threads: int | None = 1,
    passes: int = 2,
    show_progress: bool | None = None,
) -> Sweep:
    """Useful and line bandwidth of ``x[::stride].sum()`` over a float32 buffer, per stride.

    The strides are measured ``passes`` times, one pass after another, and each keeps its fastest
    pass (the one least disturbed by other programs on a shared machine)."""
    size = validate.positive_int("buffer (bytes)", buffer_bytes, minimum=MiB, maximum=2**32)
    steps = [validate.positive_int("stride", s, maximum=4096) for s in strides]
    budget = Budget(budget_seconds)
    line = cache_line_bytes()
    x = torch.rand(size // 4, generator=torch.Generator().manual_seed(0))
    sweep = Sweep("Stride sweep on cpu (float32 sum)", budget.seconds, columns=COLUMNS)
    n_passes = validate.positive_int("passes", passes, maximum=10)
    per_point = min(0.2, max(0.01, budget.seconds / (3 * len(steps) * n_passes)))
    best: dict[int, StrideRecord] = {}
    plan = [s for _ in range(n_passes) for s in steps]  # pass after pass: load drift hits all
    with progress(
        len(plan), desc="stride sweep", budget_seconds=budget.seconds, show=show_progress
    ) as bar:
        for i, s in enumerate(plan):
            if i and not budget.fits(3 * per_point):
                if s not in best:
                    sweep.skipped.append(f"stride {s}: {budget.remaining:.2g} s of budget left")
                bar.update(1)
                continue
            view = x[::s]
            timing = time_call(lambda v=view: v.sum(), threads=threads, min_run_time=per_point)
            n = view.numel()
            lines = min(n, -(-n * s * 4 // line))  # each line once, or one line per element
            useful = n * 4
            pred = coalescing.warp_access(4, s, 0, sector_bytes=line, line_bytes=line)
            moved = lines * line
            record = StrideRecord(
                s,
                4,
                line,
                useful,
                moved,
                timing.median_seconds,
                timing.iqr_seconds,
                useful / timing.median_seconds,
                moved / timing.median_seconds,
                pred.efficiency,
            )
            if s not in best or record.seconds < best[s].seconds:  # the least disturbed pass
                best[s] = record
            bar.update(1)
    sweep.records.extend(best[s] for s in steps if s in best)
    sweep.elapsed_seconds = budget.elapsed
    return sweep


__all__ = ["COLUMNS", "StrideRecord", "stride_sweep"]
