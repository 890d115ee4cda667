"""Plots of what happens inside the GPU: a profiled step's timeline and memory, a stride sweep,
occupancy (lesson 11)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from course.facts import units
from course.presentation.plots.style import (
    PALETTE,
    new_axes,
    record_dicts,
)


def profile_timeline(
    events: Sequence[Mapping],
    *,
    ax=None,
    title: str = "One training step, from the profiler's trace",
):
    """A step's events (``course.measure.profiling.timeline_from_trace``): the top row the
    ``record_function`` phases (depth 0), the bottom row the operators they call (depth 1)."""
    rows = [r for r in record_dicts(events) if r["depth"] <= 1]
    ax = new_axes(ax)
    phases = list(dict.fromkeys(r["name"] for r in rows if r["depth"] == 0))
    colour = {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(phases)}
    for r in rows:
        ax.barh(
            1 - r["depth"],
            r["duration_us"] / 1e3,
            left=r["start_us"] / 1e3,
            height=0.6,
            color=colour.get(r["name"], "#888888"),
            edgecolor="white",
            linewidth=0.3,
        )
    ax.set_yticks([0, 1], ["operators", "phases"])
    ax.set_xlabel("milliseconds since the step began")
    ax.legend(
        handles=[Patch(color=colour[p], label=p) for p in phases],
        fontsize=8,
        ncol=max(1, len(phases)),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
    )
    ax.set_title(title)
    return ax


def memory_timeline(
    points: Sequence[Mapping], *, ax=None, title: str = "Memory allocated during the profiled steps"
):
    """Total bytes allocated against time (``course.measure.profiling.memory_from_trace``)."""
    rows = record_dicts(points)
    ax = new_axes(ax)
    ax.step([r["time_us"] / 1e3 for r in rows], [r["allocated_bytes"] for r in rows], where="post")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: units.fmt_bytes(v, digits=2)))
    ax.set_xlabel("milliseconds since profiling began")
    ax.set_ylabel("allocated")
    ax.set_title(title)
    return ax


def stride_sweep(
    records: Iterable[Any],
    *,
    ax=None,
    title: str = "Strided reads: useful bandwidth against the prediction",
):
    """Measured useful bandwidth per stride (relative to stride 1) beside the coalescing
    calculator's predicted efficiency (``course.measure.strides.StrideRecord``)."""
    rows = sorted(record_dicts(records), key=lambda r: r["stride_elements"])
    ax = new_axes(ax)
    base = next((r["useful_bytes_per_s"] for r in rows if r["stride_elements"] == 1), None)
    xs = [r["stride_elements"] for r in rows]
    if base:
        ax.plot(
            xs,
            [r["useful_bytes_per_s"] / base for r in rows],
            marker="o",
            label="measured: useful bandwidth / stride 1",
        )
    ax.plot(
        xs,
        [r["predicted_efficiency"] for r in rows],
        marker="s",
        linestyle="--",
        label="predicted: useful bytes per line fetched",
    )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("stride (float32 elements, log scale)")
    ax.set_ylabel("fraction of stride 1 (log scale)")
    ax.legend(fontsize=8)
    ax.set_title(title)
    return ax


def occupancy_curve(
    results: Iterable[Any],
    *,
    x: str = "registers_per_thread",
    ax=None,
    title: str = "Occupancy against registers per thread",
):
    """Occupancy (%) against ``x`` (a field of ``course.calculators.occupancy.Occupancy``), a line
    per block size, the limiting resource written at each change."""
    rows = record_dicts(results)
    ax = new_axes(ax)
    for i, t in enumerate(sorted({r["threads_per_block"] for r in rows})):
        sel = sorted((r for r in rows if r["threads_per_block"] == t), key=lambda r: r[x])
        ax.plot(
            [r[x] for r in sel],
            [100 * r["occupancy_fraction"] for r in sel],
            drawstyle="steps-post",
            color=PALETTE[i % len(PALETTE)],
            label=f"{t} threads/block",
        )
    ax.set_xlabel(x.replace("_", " "))
    ax.set_ylabel("occupancy (% of max warps)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8)
    ax.set_title(title)
    return ax


__all__ = ["profile_timeline", "memory_timeline", "stride_sweep", "occupancy_curve"]
