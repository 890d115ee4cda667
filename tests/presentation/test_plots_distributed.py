"""Lesson 06's plots draw what they are given (one box per event, one line per collective)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from course.calculators import communication  # noqa: E402
from course.presentation import plots


def event(rank, stage, kind, mb, start, end):
    return {
        "rank": rank,
        "stage": stage,
        "kind": kind,
        "microbatch": mb,
        "start": start,
        "end": end,
    }


def test_pipeline_gantt_draws_a_box_per_event_and_a_panel_per_schedule():
    runs = {
        "GPipe": [
            event(0, 0, "F", 0, 0, 0.01),
            event(1, 1, "F", 0, 0.01, 0.02),
            event(1, 1, "B", 0, 0.02, 0.04),
            event(0, 0, "B", 0, 0.04, 0.06),
        ],
        "Interleaved1F1B": [
            event(0, 0, "F", 0, 0, 0.01),
            event(1, 1, "F", 0, 0.01, 0.02),
            event(0, 2, "F", 0, 0.02, 0.03),
            event(1, 3, "B", 0, 0.03, 0.05),
        ],
    }
    axes = plots.pipeline_gantt(runs, bubbles={"GPipe": "idle 50%"})
    assert len(axes) == 2
    assert len(axes[0].patches) == 4 and "idle 50%" in axes[0].get_title(loc="left")
    assert any("/s2" in t.get_text() for t in axes[1].texts)  # stages shown when a rank holds two
    plt.close("all")
    with pytest.raises(ValueError, match="runs"):
        plots.pipeline_gantt({})


def test_ddp_timeline_draws_backward_and_buckets_per_rank():
    events = [
        {"rank": r, "kind": "backward", "bucket": -1, "start": 0.001, "end": 0.01} for r in range(2)
    ] + [
        {
            "rank": r,
            "kind": "all-reduce",
            "bucket": b,
            "start": 0.002 * (b + 1),
            "end": 0.002 * (b + 2),
        }
        for r in range(2)
        for b in range(3)
    ]
    ax = plots.ddp_timeline(events)
    assert len(ax.patches) == 8
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert labels[0] == "rank 0 backward" and "rank 1 bucket 2" in labels
    plt.close("all")


def test_collective_times_draws_measurements_and_fits():
    sizes = [4096, 65536, 1048576]
    recs = [{"collective": "all_reduce", "bytes": s, "seconds": 1e-4 + s / 1e9} for s in sizes]
    fit = communication.fit_alpha_beta(sizes, [r["seconds"] for r in recs])
    ax = plots.collective_times(
        recs, fits={"all_reduce": lambda s: fit.intercept_seconds + s / 1e9}
    )
    assert len(ax.get_lines()) == 2
    plt.close("all")
