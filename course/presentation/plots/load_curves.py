"""Lesson 13's figures, in the course style (:mod:`course.presentation.plots`): a load curve, the
batch-latency frontier of each tensor-parallel degree, and a day of traffic on a fixed and an
autoscaled fleet. Kept apart from ``plots.py`` only to keep that
shared module small; same palette, same conventions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from course.presentation.plots.style import PALETTE, record_dicts


def _x(row: dict) -> float:
    r = row.get("realised_per_s", math.nan)
    return r if r is not None and math.isfinite(r) else row["offered_per_s"]


def _medians(rows: list[dict], name: str) -> tuple[list[float], list[float]]:
    """Per offered load (its repeats together): the mean realised rate and the median of
    ``name``, sorted by rate."""
    groups: dict[float, list[dict]] = {}
    for r in rows:
        groups.setdefault(round(r["offered_per_s"], 9), []).append(r)
    out = []
    for g in groups.values():
        ys = sorted(v for v in (r.get(name, math.nan) for r in g) if math.isfinite(v))
        mid = len(ys) // 2
        y = math.nan if not ys else ys[mid] if len(ys) % 2 else (ys[mid - 1] + ys[mid]) / 2
        out.append((sum(_x(r) for r in g) / len(g), y))
    out.sort()
    return [x for x, _ in out], [y for _, y in out]


def load_curve(
    points: Iterable[Any],
    *,
    knee: float | None = None,
    predicted: Callable[[float, float], float] | None = None,
    title: str = "One server under rising load",
):
    """Three panels against the arrival rate each point really had (its realised rate):
    throughput, TTFT (p50, p99) and ITL (p50, p99). Every repeat is a marker; the line joins the
    medians over repeats. A percentile its point could not carry (NaN) is left out.

    ``predicted(rate, quantile)`` (optional) draws a model's TTFT beside the measured one; ``knee``
    marks the rate where p99 TTFT left its low-load level.
    """
    from matplotlib import pyplot as plt

    rows = sorted(record_dicts(points), key=_x)
    x = [_x(r) for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    a, b, c = axes
    a.plot(x, x, ls=":", color="grey", label="arrived = served")
    for name, style, colour, label in (
        ("requests_per_s", "o", PALETTE[0], "completed"),
        ("goodput_per_s", "s", PALETTE[2], "goodput (met the SLO)"),
    ):
        a.plot(x, [r.get(name, math.nan) for r in rows], style, color=colour, alpha=0.5, ms=4)
        a.plot(*_medians(rows, name), "-", color=colour, label=label)
    a.set(xlabel="arrival rate, realised (requests/s)", ylabel="requests/s", title="Throughput")
    for q, style, colour in ((50, "o", PALETTE[0]), (99, "^", PALETTE[3])):
        for ax, name in ((b, f"ttft_p{q}_seconds"), (c, f"itl_p{q}_seconds")):
            ax.plot(x, [r[name] * 1e3 for r in rows], style, color=colour, alpha=0.5, ms=4)
            mx, my = _medians(rows, name)
            ax.plot(mx, [v * 1e3 for v in my], "-", color=colour, label=f"p{q} measured")
        if predicted is not None:
            dense = [x[0] + (x[-1] - x[0]) * i / 60 for i in range(61)]
            ys = [predicted(v, q / 100) * 1e3 for v in dense]
            b.plot(
                dense,
                [y if math.isfinite(y) else math.nan for y in ys],
                ls="--",
                color=colour,
                alpha=0.6,
                label=f"p{q} M/M/c model",
            )
    b.set(
        xlabel="arrival rate, realised (requests/s)",
        ylabel="ms",
        yscale="log",
        title="Time to first token",
    )
    c.set(xlabel="arrival rate, realised (requests/s)", ylabel="ms", title="Inter-token latency")
    for ax in axes:
        if knee is not None and math.isfinite(knee):
            ax.axvline(knee, color="grey", lw=1, ls="-.")
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def day_fleet(
    rates_per_s: Sequence[float],
    results: Sequence[Any],
    *,
    step_seconds: float,
    requests_per_s_per_replica: float,
    title: str = "A day of traffic",
):
    """The day's request rate (left axis) and the ready replicas of each policy (right axis)."""
    from matplotlib import pyplot as plt

    hours = [(i + 0.5) * step_seconds / 3600 for i in range(len(rates_per_s))]
    fig, ax = plt.subplots(figsize=(9, 3.8))
    ax.plot(hours, rates_per_s, color="grey", label="requests/s (left)")
    ax.set(xlabel="hour of the day", ylabel="requests/s", title=title, xlim=(0, 24))
    right = ax.twinx()
    for i, r in enumerate(results):
        policy = r.policy if hasattr(r, "policy") else r["policy"]
        ready = r.ready_replicas if hasattr(r, "ready_replicas") else r["ready_replicas"]
        right.step(hours, ready, where="mid", color=PALETTE[i], label=f"{policy} replicas (right)")
    need = [math.ceil(v / requests_per_s_per_replica) for v in rates_per_s]
    right.step(hours, need, where="mid", color=PALETTE[3], ls=":", label="needed for the SLO")
    right.set_ylabel("replicas ready")
    lines = ax.get_legend_handles_labels()
    more = right.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, loc="upper left")
    fig.tight_layout()
    return fig


def tp_frontier(
    curves: Sequence[Sequence[Any]],
    chosen: Sequence[Any] = (),
    *,
    title: str = "Latency against throughput per GPU",
):
    """Each TP degree's decode tokens/s per GPU against its inter-token latency, batch by batch
    (``fleet.batch_latency_frontier``), with each degree's chosen batch (``fleet.TPOption``)
    marked: the latency-throughput Pareto frontier."""
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    for i, curve in enumerate(c for c in curves if c):
        rows = record_dicts(curve)
        colour = PALETTE[i % len(PALETTE)]
        x = [r["itl_seconds"] * 1e3 for r in rows]
        y = [r["output_tokens_per_s_per_gpu"] for r in rows]
        ax.plot(x, y, "o-", color=colour, ms=3, label=f"TP{rows[0]['tp']}")
        ax.annotate(f"batch {rows[-1]['batch']:,}", (x[-1], y[-1]), fontsize=7, color=colour)
    for j, r in enumerate(record_dicts(chosen) if chosen else []):
        ax.plot(
            r["itl_seconds"] * 1e3,
            r["batch"] / r["itl_seconds"] / r["tp"],
            "*",
            ms=14,
            color="black",
            label=None if j else "batch within KV room and TPOT SLO",
        )
    ax.set(
        xlabel="inter-token latency, one decode step (ms)",
        ylabel="decode tokens/s per GPU",
        xscale="log",
        yscale="log",
        title=title,
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


__all__ = ["day_fleet", "load_curve", "tp_frontier"]
