"""Findings on thread scaling: did more CPU threads make a matmul faster here, and why (lesson 01).

Takes the records of ``course.measure.matmul.thread_scaling`` (one per thread count).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from course.facts.units import fmt_flop_rate
from course.presentation.findings._common import RERUN, get, outcome, relative_spread, times


def scaling(records: Sequence[Any]) -> str:
    """The speed-up of the most threads measured over one thread, with the explanation that fits."""
    by_threads = {get(r, "threads"): r for r in records if get(r, "threads")}
    if 1 not in by_threads or len(by_threads) < 2:
        return (
            "Only one thread count was measured (this process may use one core only, or the "
            "budget ran out), so there is no scaling to read: rerun, or run on more cores."
        )
    one, most = by_threads[1], by_threads[max(by_threads)]
    n = get(most, "threads")
    ratio = get(most, "flop_per_s") / get(one, "flop_per_s")
    kind = outcome(ratio, relative_spread(one) + relative_spread(most))
    head = (
        f"{n} threads ran at {fmt_flop_rate(get(most, 'flop_per_s'))}, 1 thread at "
        f"{fmt_flop_rate(get(one, 'flop_per_s'))}: {times(ratio)} (ideal {n}×)"
    )
    if kind == "noisy":
        return f"{head}. The spreads overlap the difference: {RERUN}."
    if kind == "slower":
        return (
            f"{head}: more threads were *slower*. Another program held a core, and the "
            "threads of a matmul wait for the slowest one at every synchronisation point. On a "
            "shared machine, look at the spread before you believe a speed-up."
        )
    if kind == "same":
        return (
            f"{head}: no gain. Either another program held the other core(s), or the product "
            "is limited by something the threads share (memory bandwidth)."
        )
    if ratio >= 0.8 * n:
        return (
            f"{head}: nearly linear. A large matmul splits into independent tiles, one share "
            "per core; a CPU simply has few cores to share it among."
        )
    return (
        f"{head}: a gain, but less than {n}×. The cores share memory bandwidth and caches, "
        "clocks drop when more cores are busy, and a busy machine lends the threads only part "
        "of each core."
    )
