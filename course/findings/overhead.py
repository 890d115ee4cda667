"""Findings on fixed per-call costs and crossovers: when the small-overhead option wins (lesson 01).

Takes ``course.measure.matmul.FixedCostFit`` objects (label, fixed_seconds, flop_per_s) and the
crossover sizes computed from them. Layer 4.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from course.findings._common import get, times
from course.units import fmt_flop_rate, fmt_seconds


def fixed_costs(
    fits: Mapping[str, Any], crossovers: Mapping[str, float], *, smallest: int = 1
) -> str:
    """Which option has the least overhead, and from which size each faster option overtakes.

    ``crossovers[name]`` is the size from which ``fits[name]`` beats the option with the least
    fixed cost (``course.measure.matmul.crossover_size``); ``smallest`` is the smallest size timed.
    """
    if len(fits) < 2:
        return "Fewer than two options were fitted (the budget ran out): rerun the cell."
    cheapest = min(fits, key=lambda k: get(fits[k], "fixed_seconds"))
    lines = [f"- Least fixed cost per call: **{cheapest}**, "
             f"{fmt_seconds(get(fits[cheapest], 'fixed_seconds'))}."]  # fmt: skip
    for name, n in crossovers.items():
        fit = fits[name]
        rate = (f"{name} works {times(get(fit, 'flop_per_s') / get(fits[cheapest], 'flop_per_s'))} "
                f"faster per FLOP ({fmt_flop_rate(get(fit, 'flop_per_s'))})")  # fmt: skip
        if name == cheapest or n <= smallest:
            lines.append(f"- {rate} and its fixed cost is no larger here, so it wins from the "
                         f"smallest size measured (n = {smallest}): Python's own per-call cost is "
                         "as large as a library call's.")  # fmt: skip
        elif math.isinf(n):
            lines.append(f"- {name} never overtakes {cheapest} in this fit: it is not faster per "
                         "FLOP either (a noisy fit: rerun).")  # fmt: skip
        else:
            lines.append(f"- {rate}; it overtakes {cheapest} from n ≈ {n:.0f}, where its larger "
                         "fixed cost is paid back.")  # fmt: skip
    return "\n".join(lines)
