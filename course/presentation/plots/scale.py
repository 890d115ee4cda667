"""Lesson 12's figures, in the course style of :mod:`course.presentation.plots`: goodput against
the checkpoint interval, and the timeline of an elastic run (steps, checkpoints, failure, restart,
lost work)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from course.presentation.plots.style import PALETTE, new_axes


def goodput_vs_interval(
    curves: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    marks: Mapping[str, float] | None = None,
    ax=None,
    title: str = "Goodput against checkpoint interval",
):
    """Goodput (useful / wall time, %) against the interval between checkpoints (minutes, log x),
    one line per ``curves`` entry (label -> (intervals in seconds, goodput fractions)), dashed
    vertical lines at ``marks`` (label -> interval in seconds)."""
    ax = new_axes(ax)
    for i, (label, (xs, ys)) in enumerate(curves.items()):
        ax.plot(
            [x / 60 for x in xs],
            [100 * y for y in ys],
            color=PALETTE[i % len(PALETTE)],
            lw=2,
            label=label,
        )
    for j, (label, t) in enumerate((marks or {}).items()):
        ax.axvline(t / 60, color=PALETTE[(j + len(curves)) % len(PALETTE)], ls="--", label=label)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.set_xlabel("work between checkpoints (minutes, log scale)")
    ax.set_ylabel("goodput (%)")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


_COLOURS = {"step": PALETTE[0], "lost": PALETTE[3], "checkpoint": PALETTE[2], "restart": PALETTE[4]}


def restart_timeline(
    tl: Mapping, *, ax=None, title: str = "An elastic run: a rank killed, the group restarted"
):
    """One row per attempt: each training step (red if its work was lost and done again), each
    checkpoint write, and the gap from the failure to the resumed checkpoint
    (:func:`course.distributed.elastic.timeline`'s result)."""
    ax = new_axes(ax)
    lost = set(tl["lost_steps"])
    attempts = sorted({s[0] for s in tl["steps"]} | {a for a, _ in tl["starts"]})
    for attempt, step, t0, t1 in tl["steps"]:
        kind = "lost" if attempt == 0 and step in lost and tl["failures"] else "step"
        ax.barh(attempt, t1 - t0, left=t0, height=0.6, color=_COLOURS[kind], edgecolor="white")
    for attempt in attempts:  # steps are too short to label one by one: label each row's run
        mine = [s for s in tl["steps"] if s[0] == attempt]
        if mine:
            first, last = min(s[1] for s in mine), max(s[1] for s in mine)
            ax.text(
                min(s[2] for s in mine),
                attempt - 0.32,
                f"steps {first}-{last}" if last > first else f"step {first}",
                fontsize=8,
                va="bottom",
            )
    for _step, t0, t1 in tl["checkpoints"]:
        row = max((s[0] for s in tl["steps"] if s[2] <= t0), default=0)
        ax.barh(row + 0.4, t1 - t0, left=t0, height=0.2, color=_COLOURS["checkpoint"])
    for step, t, rank in tl["failures"]:
        ax.axvline(t, color="black", lw=1.5)
        ax.text(t, -0.55, f" rank {rank} killed at step {step}", fontsize=8, va="bottom")
    if tl["failures"] and tl["resumes"]:
        t_fail, t_back = tl["failures"][0][1], tl["resumes"][0][2]
        ax.barh(0.5, t_back - t_fail, left=t_fail, height=0.3, color=_COLOURS["restart"])
    ax.set_yticks(attempts, [f"attempt {a}" for a in attempts])
    ax.set_ylim(max(attempts) + 0.8, -0.8)
    ax.set_xlabel("seconds since the first event")
    handles = [
        Patch(color=_COLOURS["step"], label="training step"),
        Patch(color=_COLOURS["lost"], label="step lost, done again"),
        Patch(color=_COLOURS["checkpoint"], label="checkpoint write"),
        Patch(color=_COLOURS["restart"], label="failure to resumed"),
    ]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax.set_title(title)
    return ax


__all__ = ["goodput_vs_interval", "restart_timeline"]
