"""Lesson 14's figures: one bar per GPU a job held, over the seconds it held it; one bar per
policy."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from course.calculators import scheduling as sch  # noqa: E402
from course.presentation.plots import job_timelines as plots  # noqa: E402

JOBS = [
    {
        "name": "train",
        "account": "alice",
        "start_seconds": 0,
        "end_seconds": 9,
        "gpu_indices": [0, 1],
    },
    {"name": "small", "account": "carol", "start_seconds": 0, "end_seconds": 1, "gpu_indices": [2]},
]


def test_gantt_draws_a_bar_per_gpu_held_and_labels_it():
    ax = plots.gpu_gantt(JOBS, gpus=4).axes[0]
    bars = [(p.get_y() + p.get_height() / 2, p.get_x(), p.get_width()) for p in ax.patches]
    assert sorted(bars) == [(0, 0, 9), (1, 0, 9), (2, 0, 1)]
    labels = {t.get_text() for t in ax.texts}
    assert labels == {"train (alice)", "small"}  # too short for its account
    assert ax.get_xlim()[0] == 0


def test_policy_bars_show_each_schedule():
    mix = [sch.SimJob("a", 0, 2, 100, 200), sch.SimJob("b", 0, 4, 50, 60)]
    runs = [sch.simulate(mix, 4, p) for p in ("fifo", "backfill")]
    fig = plots.policy_bars(runs)
    assert [t.get_text() for t in fig.axes[0].get_xticklabels()] == ["fifo", "backfill"]
