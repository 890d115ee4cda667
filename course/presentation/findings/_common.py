"""Shared helpers of the findings modules: read a record, classify a ratio, format it.

A ratio of two measured rates is one of four outcomes: ``"faster"``, ``"slower"``, ``"same"``
(within :data:`SAME` of each other) or ``"noisy"`` (the interquartile spreads of the two timings
are wide enough to explain the difference: the machine was busy, rerun).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from course.calculators import queueing
from course.facts.report import interval_column

#: Ratios within 10 % of 1 read as "about the same".
SAME = 0.10
#: A timing whose interquartile range exceeds 25 % of its median is noisy.
NOISY = 0.25

RERUN = "the machine was busy while it ran (wide spread): rerun the cell and compare"


def get(record: Any, name: str, default: Any = None) -> Any:
    """Field ``name`` of a record that is a dataclass, an object or a mapping (``default`` if
    absent)."""
    if isinstance(record, Mapping):
        return record.get(name, default)
    return getattr(record, name, default)


def relative_spread(record: Any) -> float:
    """IQR / median of a record's time per call (0 when the record has no spread)."""
    seconds = get(record, "seconds") or get(record, "median_seconds")
    spread = get(record, "spread_seconds")
    if spread is None:
        spread = get(record, "iqr_seconds", 0.0)
    return float(spread or 0.0) / seconds if seconds else 0.0


def outcome(ratio: float, spread: float = 0.0) -> str:
    """'faster', 'slower', 'same' or 'noisy' for a rate ratio (new / baseline).

    ``spread`` is the sum of the two timings' relative spreads: when it exceeds :data:`NOISY` and
    is as large as the difference itself, the difference cannot be told from noise.
    """
    if not math.isfinite(ratio) or ratio <= 0:
        return "noisy"
    difference = abs(math.log(ratio))
    if spread > NOISY and difference < math.log1p(spread):
        return "noisy"
    if difference < math.log1p(SAME):
        return "same"
    return "faster" if ratio > 1 else "slower"


def noisy(median_seconds: float, iqr_seconds: float) -> bool:
    """True when one timing cannot be trusted: no finite positive median, or an interquartile
    range over :data:`NOISY` of the median."""
    if not (math.isfinite(median_seconds) and median_seconds > 0):
        return True
    return not math.isfinite(iqr_seconds) or iqr_seconds / median_seconds > NOISY


def compare_seconds(
    base_seconds: float, base_iqr: float, new_seconds: float, new_iqr: float
) -> str:
    """'faster', 'slower', 'same' or 'noisy': a new timing against a baseline, by :func:`outcome`'s
    one rule (the two relative spreads added up are the noise the difference must beat)."""
    if not all(math.isfinite(x) and x > 0 for x in (base_seconds, new_seconds)):
        return "noisy"
    spread = base_iqr / base_seconds + new_iqr / new_seconds
    return outcome(base_seconds / new_seconds, spread if math.isfinite(spread) else math.inf)


def times(ratio: float) -> str:
    """A ratio as '3.1×', '40×' or '0.58×' (never rounded to a misleading 1.0×)."""
    if ratio >= 10:
        return f"{ratio:,.0f}×"
    if ratio >= 0.1:
        return f"{ratio:.2g}×" if ratio < 1 else f"{ratio:.1f}×"
    return f"{ratio:.2g}×"


def by_factor(ratio: float) -> str:
    """'3.1× faster' or '40× slower' for a rate ratio."""
    return f"{times(ratio)} faster" if ratio >= 1 else f"{times(1 / ratio)} slower"


def join(names: Iterable[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    items = list(names)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def bound(record: Any, name: str, q: float, count: str = "measured") -> str:
    """What follows a printed percentile ``name`` of a record: its 95 % interval where the record
    carries one (``name`` with ``_ci`` for ``_seconds``), else ``(n too small: n < need)`` where
    the ``count`` samples it rests on cannot bound it (``queueing.samples_for_bound``), else
    ``(interval not recorded)``: every percentile a finding prints says how far to trust it."""
    ci = get(record, interval_column(name), "") if interval_column(name) else ""
    if ci:
        return f" {ci}"
    n = get(record, count, 0) or get(record, "completed", 0) or 0
    need = queueing.samples_for_bound(q)
    return f" (n too small: {n:,} < {need:,})" if n < need else " (interval not recorded)"
