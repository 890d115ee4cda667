"""Plots of distributed training: pipeline Gantt charts, DDP timelines, collective times (lesson
06)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter

from course.facts import units
from course.presentation.plots.style import (
    KIND_COLOURS,
    KIND_NAMES,
    PALETTE,
    log_log_axes,
    ms_time_axis,
    new_axes,
    prefix_formatter,
    record_dicts,
)


def pipeline_gantt(
    runs: Mapping[str, Sequence[Mapping]],
    *,
    bubbles: Mapping[str, float] = None,
    title: str = "Measured pipeline schedules (2 CPU processes, gloo)",
):
    """One Gantt panel per schedule: a row per rank, a box per micro-batch's forward (F) or
    backward (B), labelled with the micro-batch and (for interleaved schedules) the stage.
    ``runs`` maps a schedule name to the events of all ranks (``course.distributed.pipeline``);
    ``bubbles`` (name -> measured idle fraction, formula) goes in each panel's title."""
    if not runs:
        raise ValueError("runs must contain at least one schedule's events to plot")
    fig, axes = plt.subplots(
        len(runs), 1, figsize=(8, 1.5 + 1.3 * len(runs)), sharex=True, squeeze=False
    )
    for ax, (name, events) in zip(axes[:, 0], runs.items(), strict=True):
        ranks = sorted({e["rank"] for e in events})
        multi = len({e["stage"] for e in events}) > len(ranks)
        for e in events:
            y = ranks.index(e["rank"])
            ax.barh(
                y,
                e["end"] - e["start"],
                left=e["start"],
                height=0.7,
                color=KIND_COLOURS[e["kind"]],
                edgecolor="white",
                linewidth=0.5,
            )
            label = f"{e['microbatch']}" + (f"/s{e['stage']}" if multi else "")
            ax.text(
                e["start"] + (e["end"] - e["start"]) / 2,
                y,
                label,
                ha="center",
                va="center",
                fontsize=7,
                color="white",
            )
        ax.set_yticks(range(len(ranks)), [f"rank {r}" for r in ranks])
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
        extra = f" — {bubbles[name]}" if bubbles and name in bubbles else ""
        ax.set_title(f"{name}{extra}", fontsize=10, loc="left")
    handles = [Patch(color=KIND_COLOURS[k], label=KIND_NAMES[k]) for k in "FB"]
    axes[0, 0].legend(
        handles=handles, loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=8, ncol=2
    )
    ms_time_axis(axes[-1, 0])
    fig.suptitle(title, fontsize=12, fontweight="bold")
    fig.tight_layout()
    return axes[:, 0]


def ddp_timeline(
    events: Sequence[Mapping],
    *,
    ax=None,
    title: str = "DDP: gradient buckets all-reduced during the backward pass",
):
    """A row per rank for the backward pass and a row per gradient bucket's all-reduce
    (``course.distributed.ddp.ddp_timeline`` events of all ranks)."""
    rows = record_dicts(events)
    ax = new_axes(ax)
    labels: list[str] = []
    for e in sorted(rows, key=lambda e: (e["rank"], e["kind"] != "backward", e["bucket"])):
        label = (
            f"rank {e['rank']} backward"
            if e["kind"] == "backward"
            else f"rank {e['rank']} bucket {e['bucket']}"
        )
        labels.append(label)
        ax.barh(
            len(labels) - 1,
            e["end"] - e["start"],
            left=e["start"],
            height=0.7,
            color=KIND_COLOURS[e["kind"]],
        )
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.invert_yaxis()
    handles = [
        Patch(color=KIND_COLOURS[k], label=KIND_NAMES[k]) for k in ("backward", "all-reduce")
    ]
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ms_time_axis(ax)
    ax.set_title(title)
    return ax


def collective_times(
    records: Iterable[Any],
    *,
    fits: Mapping[str, Any] = None,
    ax=None,
    title: str = "Collectives on this machine (gloo, loopback)",
):
    """Median seconds against message bytes (log-log), a line per collective; ``fits`` (name ->
    an object with ``seconds(bytes)``, e.g. a lambda of the alpha-beta model) drawn dashed."""
    rows = record_dicts(records)
    ax = new_axes(ax)
    names = list(dict.fromkeys(r["collective"] for r in rows))
    for i, name in enumerate(names):
        sel = sorted((r for r in rows if r["collective"] == name), key=lambda r: r["bytes"])
        xs = [r["bytes"] for r in sel]
        ax.plot(
            xs,
            [r["seconds"] for r in sel],
            marker="o",
            color=PALETTE[i % len(PALETTE)],
            label=name.replace("_", "-"),
        )
        if fits and name in fits:
            ax.plot(
                xs,
                [fits[name](x) for x in xs],
                linestyle="--",
                color=PALETTE[i % len(PALETTE)],
                label=f"{name.replace('_', '-')}: α-β fit",
            )
    log_log_axes(
        ax,
        x_ticks=prefix_formatter("B", binary=True),
        y_ticks=FuncFormatter(lambda v, _: units.fmt_seconds(v)),
        xlabel="message size (log scale)",
        ylabel="median seconds (log scale)",
        title=title,
    )
    ax.legend(fontsize=8)
    return ax


__all__ = ["pipeline_gantt", "ddp_timeline", "collective_times"]
