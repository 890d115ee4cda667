"""Findings of lesson 11 (inside the GPU): kernels against torch, the stride sweep against the
coalescing calculator, and a profiled fix measured before and after.

Each function takes the records a ``course.measure`` function returned (or dicts with the same
fields) and returns Markdown; every outcome has its branch, including "not measured" and "noise
wins".
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from course.presentation.findings._common import SAME, get, times

MISSING = "Not measured here: the cell above did not produce records (see its message)."


def kernel_checks(checks: Iterable[Any] | None, status: str = "") -> str:
    """Whether every Triton kernel matched torch (``triton_kernels.KernelCheck`` records)."""
    rows = list(checks or [])
    if not rows:
        return f"Kernels not run here: {status or 'triton is not available'}."
    bad = [get(r, "kernel") for r in rows if not get(r, "matches")]
    mode = get(rows[0], "mode", "")
    if not bad:
        worst = max(get(r, "max_abs_error") for r in rows)
        return (
            f"All {len(rows)} kernels matched torch ({mode}); the largest difference was "
            f"{worst:.2g}, within each kernel's tolerance."
        )
    return (
        f"{len(bad)} of {len(rows)} kernels did **not** match torch ({mode}): "
        f"{', '.join(bad)}. Look at the masks and the offsets first."
    )


def stride_vs_prediction(records: Sequence[Any] | None, *, noisy_spread: float = 0.5) -> str:
    """Measured useful bandwidth per stride (relative to stride 1) against the calculator.

    Compares at the largest stride measured. The prediction assumes every line fetched costs the
    same; prefetchers and caches make the CPU do better than predicted at small strides.
    """
    rows = sorted(list(records or []), key=lambda r: get(r, "stride_elements"))
    base = next((r for r in rows if get(r, "stride_elements") == 1), None)
    if base is None or len(rows) < 2:
        return MISSING
    last = rows[-1]
    spread = max(get(r, "spread_seconds", 0) / get(r, "seconds") for r in (base, last))
    measured = get(last, "useful_bytes_per_s") / get(base, "useful_bytes_per_s")
    predicted = get(last, "predicted_efficiency")
    s = get(last, "stride_elements")
    head = (
        f"At stride {s}, useful bandwidth was {measured:.2g} of stride 1's; the calculator "
        f"predicts {predicted:.2g} (one {get(last, 'line_bytes')}-byte line per "
        f"{get(last, 'element_bytes')}-byte element)."
    )
    if spread > noisy_spread:
        return head + " The timings spread widely (a busy machine): rerun before reading more."
    ratio = measured / predicted
    if abs(math.log(ratio)) < math.log(2):
        return head + " Measurement and prediction agree within 2×: whole lines move, used or not."
    if ratio > 1:
        return head + (
            f" The CPU did {times(ratio)} better than predicted: its prefetchers and "
            "out-of-order cores overlap line fetches, and part of the buffer sits in "
            "a cache. The waste is still there; it is hidden, not removed."
        )
    return head + (
        f" The CPU did {times(1 / ratio)} worse than predicted: each strided element "
        "also costs a load instruction and a page walk (TLB misses), which the "
        "line count leaves out."
    )


def fix_speedup(paired: Any | None, what: str = "the fixed step") -> str:
    """The before/after of a fix from ``profiling.paired_times`` (ratios slow / fixed per pair)."""
    ratios = list(get(paired, "ratios", None) or []) if paired is not None else []
    if len(ratios) < 3:
        return MISSING
    med, low, high = (get(paired, k) for k in ("median_ratio", "low_ratio", "high_ratio"))
    span = (
        f"median of {len(ratios)} interleaved pairs {times(med)}, middle half {low:.2f}-{high:.2f}"
    )
    if low > 1 + SAME:
        return f"{what.capitalize()} was {times(med)} faster ({span}): the fix worked."
    if high < 1 / (1 + SAME):
        return (
            f"{what.capitalize()} was {times(1 / med)} *slower* ({span}): the 'fix' cost "
            "more than it saved here. Profile again."
        )
    if low >= 1 / (1 + SAME) and high <= 1 + SAME:
        return f"No difference beyond {SAME:.0%} ({span}): the change did not matter here."
    return (
        f"Noise wins: the pairs disagree ({span}). The machine was busy; rerun the cell "
        "before concluding."
    )


def top_phase(phase_us: Mapping[str, float] | None) -> str:
    """Which ``record_function`` phase took the longest in a profile (median microseconds)."""
    phases = {k: v for k, v in (phase_us or {}).items() if v and v > 0}
    if not phases:
        return MISSING
    name, longest = max(phases.items(), key=lambda kv: kv[1])
    total = sum(phases.values())
    return (
        f"In this profile the **{name}** phase took the largest share of the step: "
        f"{longest / 1e3:.3g} ms of {total / 1e3:.3g} ms ({longest / total:.0%})."
    )


__all__ = ["fix_speedup", "kernel_checks", "stride_vs_prediction", "top_phase"]
