"""Careful timing and time-boxed sweeps: the shared machinery of every measurement in the course.

- :func:`time_call` times one function the way a benchmark should: warm-up calls first, the device
  synchronised before each clock reading (GPU work is asynchronous), many repeats, and the
  *median* and *interquartile range* (IQR) reported, never one bare ``time.time()`` difference.
  It is a thin layer over ``torch.utils.benchmark.Timer.blocked_autorange``, which picks how many
  calls to put between two clock readings so that the clock's own cost is negligible.
- :class:`Budget` and :class:`Sweep` keep a sweep inside a time budget: a point whose predicted
  cost does not fit what is left is skipped, and the sweep says so instead of running long.
- :func:`progress` is a ``tqdm.auto`` bar, shown only for sweeps that may take more than ~2 s.

Used by ``matmul``, ``bandwidth`` and ``kernels`` (lessons 01 and 02).
"""

from __future__ import annotations

import dataclasses
import math
import os
import statistics
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils import benchmark
from tqdm.auto import tqdm

from course.facts import units, validate
from course.facts.report import Table

#: Sweeps with a budget above this many seconds show a progress bar.
PROGRESS_THRESHOLD_SECONDS = 2.0


def synchronize(device: str) -> None:
    """Wait until ``device`` has finished all queued work (a no-op on the CPU)."""
    kind = torch.device(device).type
    if kind == "cuda":
        torch.cuda.synchronize()
    elif kind == "mps":
        torch.mps.synchronize()


def check_device(device: str) -> str:
    """``device`` if torch can use it here ('cpu', 'cuda', 'cuda:1', 'mps'); ValueError
    otherwise."""
    if not isinstance(device, str):
        raise ValueError(f"device must be a string such as 'cpu' or 'cuda', got {device!r}")
    try:
        kind = torch.device(device).type
    except RuntimeError:
        raise ValueError(f"device must be 'cpu', 'cuda' or 'mps', got {device!r}") from None
    if kind == "cuda" and not torch.cuda.is_available():
        raise ValueError("device 'cuda' is not available here: torch sees no CUDA GPU")
    if kind == "mps" and not (torch.backends.mps.is_available()):
        raise ValueError("device 'mps' is not available here: this is not Apple silicon")
    if kind not in ("cpu", "cuda", "mps"):
        raise ValueError(f"device must be 'cpu', 'cuda' or 'mps', got {device!r}")
    return device


#: Fewest timed runs of one call: below three, an interquartile range says nothing (one run has
#: a spread of 0, which would let any difference beat "noise" in the findings).
MIN_REPEATS = 3


@dataclass(frozen=True)
class Timing:
    """Seconds per call of one timed function: median and spread over ``repeats`` measurements.

    Each of the ``repeats`` measurements times ``calls_per_repeat`` back-to-back calls and divides,
    so ``median_seconds`` is per call. ``iqr_seconds`` is the interquartile range (75th minus 25th
    percentile) of the per-call times: half the measurements fall inside it.
    """

    median_seconds: float
    iqr_seconds: float
    min_seconds: float
    max_seconds: float
    repeats: int
    calls_per_repeat: int
    device: str
    threads: int

    @property
    def relative_spread(self) -> float:
        """IQR / median: 0.02 means the middle half of the runs lie within 2 % of each other."""
        return self.iqr_seconds / self.median_seconds if self.median_seconds > 0 else math.inf

    def __str__(self) -> str:
        return (
            f"{units.fmt_seconds(self.median_seconds)} per call "
            f"(median; IQR {units.fmt_seconds(self.iqr_seconds)}, "
            f"{self.repeats} runs x {self.calls_per_repeat} calls, {self.device}, "
            f"{self.threads} thread{'s' if self.threads != 1 else ''})"
        )


def time_call(
    fn: Callable[[], Any],
    *,
    device: str = "cpu",
    threads: int | None = None,
    min_run_time: float = 0.2,
    warmup: int = 1,
) -> Timing:
    """Time ``fn()`` (no arguments) on ``device``: warm-up, synchronised repeats, median and IQR.

    ``threads`` sets torch's intra-op threads during the measurement (default: torch's current
    setting; note that ``torch.utils.benchmark.Timer`` alone would default to 1). ``min_run_time``
    is the least time, in seconds, spent in the measured repeats; a call that itself takes longer
    is timed :data:`MIN_REPEATS` times after the warm-up, so its spread is measured, not 0 by
    default. The clock is read through ``torch.utils.benchmark``'s timer, which synchronises
    CUDA/MPS before each reading.
    """
    check_device(device)
    n_threads = torch.get_num_threads() if threads is None else threads
    validate.positive_int("threads", n_threads, maximum=4096)
    run_time = validate.number("min_run_time", min_run_time, minimum=0, maximum=600)
    validate.positive_int("warmup", warmup, minimum=0, maximum=1000)
    previous = torch.get_num_threads()
    torch.set_num_threads(n_threads)
    try:
        for _ in range(warmup):  # first calls pay for allocation, caches, lazy initialisation
            fn()
        synchronize(device)
        timer = benchmark.Timer("fn()", globals={"fn": fn}, num_threads=n_threads)
        measurement = timer.blocked_autorange(min_run_time=run_time)
        runs = [measurement]
        while sum(len(m.times) for m in runs) < MIN_REPEATS:  # a slow call: run it again
            runs.append(timer.timeit(measurement.number_per_run))
        (measurement,) = benchmark.Measurement.merge(runs)
    finally:
        torch.set_num_threads(previous)
    times = list(measurement.times)
    return Timing(
        median_seconds=float(measurement.median),
        iqr_seconds=float(measurement.iqr),
        min_seconds=min(times),
        max_seconds=max(times),
        repeats=len(times),
        calls_per_repeat=int(measurement.number_per_run),
        device=device,
        threads=n_threads,
    )


class Budget:
    """A time box for a sweep: how long it has run, what is left, and whether a step still fits."""

    def __init__(self, seconds: float):
        self.seconds = validate.number(
            "budget_seconds", seconds, minimum=0, maximum=3600, strict_min=True
        )
        self.start = time.perf_counter()

    @property
    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    @property
    def remaining(self) -> float:
        return max(0.0, self.seconds - self.elapsed)

    def fits(self, predicted_seconds: float) -> bool:
        """True when a step predicted to take ``predicted_seconds`` ends inside the budget."""
        return predicted_seconds <= self.remaining


def progress(total: int, *, desc: str, budget_seconds: float, show: bool | None = None) -> tqdm:
    """A ``tqdm.auto`` bar over ``total`` steps, shown when the budget exceeds ~2 s (or if
    ``show``)."""
    visible = budget_seconds > PROGRESS_THRESHOLD_SECONDS if show is None else show
    return tqdm(total=total, desc=desc, disable=not visible, leave=False)


def usable_cores() -> int:
    """CPU cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def load_average() -> float | None:
    """The 1-minute load average (runnable processes), or None where the OS does not report it."""
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return None


def record_dict(record: Any) -> dict[str, Any]:
    """A record (dataclass or mapping) as a plain dict, the form ``course.presentation.plots``
    draws."""
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return dataclasses.asdict(record)
    return dict(record)


@dataclass
class Sweep:
    """The tidy result of a time-boxed sweep: one record per measured point, and what was skipped.

    ``records`` are frozen dataclasses of one type (``MatmulRecord``, ``BandwidthRecord``, ...);
    ``skipped`` says, in words, each point left out and why (usually: it would not fit the budget).
    In a notebook the sweep shows itself as a table with units (a :class:`Table`).
    """

    title: str
    budget_seconds: float
    records: list[Any] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    elapsed_seconds: float = 0.0
    columns: Sequence[str] = ()
    load_average: float | None = field(default_factory=load_average)

    def rows(self) -> list[dict[str, Any]]:
        """Every record as a dict (for plots, pandas or a CSV file)."""
        return [record_dict(r) for r in self.records]

    def where(self, **conditions: Any) -> list[Any]:
        """Records whose fields equal the given values: ``sweep.where(library="numpy")``."""
        return [r for r in self.records if all(getattr(r, k) == v for k, v in conditions.items())]

    def best(self, key: str = "flop_per_s", **conditions: Any) -> Any:
        """The record with the largest ``key`` among those matching ``conditions``."""
        matching = self.where(**conditions)
        if not matching:
            raise ValueError(f"no record matches {conditions!r} in {self.title!r}")
        return max(matching, key=lambda r: getattr(r, key))

    def _columns(self) -> list[str]:
        if self.columns:
            return list(self.columns)
        return [f.name for f in dataclasses.fields(self.records[0])] if self.records else []

    def _footer(self) -> str:
        text = (
            f"{len(self.records)} points in {self.elapsed_seconds:.1f} s "
            f"(budget {self.budget_seconds:.1f} s); times are medians, spread is the IQR"
        )
        cores = usable_cores()
        if self.load_average is not None and self.load_average > 0.75 * cores:
            text += (
                f"; machine busy at the start (load {self.load_average:.1f} on {cores} "
                "cores): other programs shared the cores, expect noise"
            )
        if self.skipped:
            shown = "; ".join(self.skipped[:3]) + ("; ..." if len(self.skipped) > 3 else "")
            text += f"; skipped {len(self.skipped)} (see .skipped): {shown}"
        return text

    def table(self) -> Table:
        """The records as a :class:`course.facts.report.Table`, the footer as its note."""
        return Table(
            self.records,
            title=self.title,
            columns=self._columns(),
            note=self._footer(),
            missing={"threads": "default"},  # numpy left at its own thread count
        )

    def to_pandas(self):
        """The records as a ``pandas.DataFrame``, one column per field (SI units)."""
        return self.table().to_pandas()

    def __str__(self) -> str:
        return str(self.table())

    def __repr__(self) -> str:
        return str(self)

    def _repr_html_(self) -> str:
        return self.table()._repr_html_()


def median_of(values: Iterable[float]) -> float:
    """The median of some numbers (NaN when there are none)."""
    values = list(values)
    return statistics.median(values) if values else math.nan


__all__ = [
    "PROGRESS_THRESHOLD_SECONDS",
    "Budget",
    "Sweep",
    "Timing",
    "check_device",
    "load_average",
    "median_of",
    "progress",
    "record_dict",
    "synchronize",
    "time_call",
    "usable_cores",
]
