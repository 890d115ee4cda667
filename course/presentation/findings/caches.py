"""Findings on the memory hierarchy: cache sizes, bandwidth per level and where the steps fall.

Takes ``course.measure.bandwidth.cache_plateaus`` (level, capacity_bytes, bytes_per_s, points) and
states this machine's levels and the step between each pair, flagging a level measured *below* the
next one down, which is a method artefact, not hardware (lesson 02).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import Any

from course.facts.units import fmt_bandwidth, fmt_bytes
from course.presentation.findings._common import SAME, get, times


def _name(plateau: Any) -> str:
    size = get(plateau, "capacity_bytes")
    level = get(plateau, "level")
    return f"{level} ({fmt_bytes(size, binary=True)})" if size else "main memory"


def steps(plateaus: Sequence[Any]) -> list[tuple[str, str, float]]:
    """(upper level, lower level, upper / lower bandwidth) for each adjacent pair of plateaus."""
    return [
        (get(a, "level"), get(b, "level"), get(a, "bytes_per_s") / get(b, "bytes_per_s"))
        for a, b in pairwise(plateaus)
    ]


def in_order(plateaus: Sequence[Any], tolerance: float = SAME) -> bool:
    """True when no level reads more than ``tolerance`` slower than the level below it."""
    return all(ratio >= 1 - tolerance for _, _, ratio in steps(plateaus))


def hierarchy(plateaus: Sequence[Any]) -> str:
    """This machine's measured levels and the step between each pair, as Markdown."""
    if not plateaus:
        return (
            "No cache level had a sweep point clearly inside it (the budget ran out, or the OS "
            "reports no cache sizes): rerun with a larger budget."
        )
    lines = [
        f"- {_name(p)}: {fmt_bandwidth(get(p, 'bytes_per_s'))} (median of "
        f"{get(p, 'points')} points)"
        for p in plateaus
    ]
    for upper, lower, ratio in steps(plateaus):
        if ratio > 1 + SAME:
            lines.append(f"- {upper} → {lower}: a step, {times(ratio)} slower below.")
        elif ratio >= 1 - SAME:
            lines.append(
                f"- {upper} → {lower}: no clear step (within 10 %). Hardware prefetchers "
                "hide part of a step for a sequential read, and other programs share the "
                "lower levels; rerun to see whether it appears."
            )
        else:
            lines.append(
                f"- {upper} → {lower}: **inverted** ({upper} measured {times(1 / ratio)} "
                f"slower than {lower}). That is the method, not the hardware: at tiny "
                "working sets each call's fixed cost (and, with several threads, waking "
                "them) is counted as time spent reading. Rerun; if it persists, this "
                f"method cannot resolve {upper} on this machine."
            )
    if get(plateaus[-1], "capacity_bytes"):
        lines.append(
            "- No point reached main memory (4× the last cache or more): the budget ran "
            "out, or the last cache is too large for the sweep's largest buffer (1 GiB); "
            "the last row is then the last cache, not DRAM."
        )
    return "\n".join(lines)
