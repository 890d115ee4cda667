"""Findings on fixed per-call costs and crossovers: when the small-overhead option wins (lesson 01).

Takes ``course.calculators.overhead.FixedCostFit`` objects (label, fixed_seconds, flop_per_s) and
the crossover sizes computed from them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from course.facts.units import fmt_flop_rate, fmt_seconds
from course.presentation.findings._common import get, times


def fixed_costs(
    fits: Mapping[str, Any], crossovers: Mapping[str, float], *, baseline: str, smallest: int = 1
) -> str:
    """Which option has the least overhead, and from which size each other option beats
    ``baseline``.

    ``crossovers[name]`` is the size from which ``fits[name]`` beats ``fits[baseline]``
    (``course.calculators.overhead.crossover_size(fits[name], fits[baseline])``); ``smallest`` is
    the smallest size timed.
    """
    if len(fits) < 2 or baseline not in fits:
        return "Fewer than two options were fitted (the budget ran out): rerun the cell."
    cheapest = min(fits, key=lambda k: get(fits[k], "fixed_seconds"))
    lines = [
        f"- Least fixed cost per call: **{cheapest}**, "
        f"{fmt_seconds(get(fits[cheapest], 'fixed_seconds'))}."
    ]
    base = fits[baseline]
    for name, n in crossovers.items():
        fit = fits[name]
        rate = (
            f"{name} works {times(get(fit, 'flop_per_s') / get(base, 'flop_per_s'))} as fast as "
            f"the {baseline} per FLOP ({fmt_flop_rate(get(fit, 'flop_per_s'))})"
        )
        if math.isinf(n):
            lines.append(
                f"- {name} never overtakes the {baseline} in this fit: it is not faster per "
                "FLOP (a noisy fit: rerun)."
            )
        elif n <= smallest:
            lines.append(
                f"- {rate}, and its fixed cost is no larger, so it wins from the smallest "
                f"size measured (n = {smallest}): the {baseline}'s own per-call cost is as "
                "large as a library call's."
            )
        else:
            lines.append(
                f"- {rate}; it overtakes the {baseline} from n ≈ {n:.0f}, where its larger "
                "fixed cost is paid back."
            )
    return "\n".join(lines)
