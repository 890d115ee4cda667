"""Lesson 14's figure: which job held which GPU when, on a real Slurm node or in a simulated pool,
in the course style (:mod:`course.presentation.plots`).
"""

from __future__ import annotations

from collections.abc import Sequence

from course.presentation.plots.style import PALETTE


def gpu_gantt(jobs: Sequence[dict], gpus: int, title: str = "Who held which GPU"):
    """One row per GPU index, one bar per job over the seconds it held that GPU (``name``,
    ``start_seconds``, ``end_seconds``, ``gpu_indices``), labelled with the job and its account."""
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 0.6 * gpus + 1.4))
    span = max((j["end_seconds"] for j in jobs), default=1)
    for i, job in enumerate(jobs):
        colour = PALETTE[i % len(PALETTE)]
        width = max(job["end_seconds"] - job["start_seconds"], 0.2)
        wide = width > 0.12 * span  # room for "name (account)"; the name alone, turned, otherwise
        label = f"{job['name']} ({job.get('account', '')})" if wide else job["name"]
        size, turn = (8, 0) if wide else (6.5, 90)
        for g in job["gpu_indices"]:
            ax.barh(
                g, width, left=job["start_seconds"], color=colour, edgecolor="white", height=0.8
            )
            x = job["start_seconds"] + width / 2
            ax.text(x, g, label, ha="center", va="center", fontsize=size, rotation=turn)
    ax.set(
        xlabel="seconds after submission",
        ylabel="GPU index",
        yticks=range(gpus),
        ylim=(-0.6, gpus - 0.4),
        xlim=(0, span * 1.02),
        title=title,
    )
    ax.invert_yaxis()
    fig.tight_layout()
    return fig


def policy_bars(schedules: Sequence, title: str = "One job mix, two policies"):
    """Mean wait (hours) and utilisation of each ``Schedule`` of the scheduling calculator."""
    from matplotlib import pyplot as plt

    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.2))
    names = [s.policy for s in schedules]
    a.bar(names, [s.mean_wait_seconds / 3600 for s in schedules], color=PALETTE[:2])
    a.set(ylabel="hours", title="Mean wait in the queue")
    b.bar(names, [100 * s.utilisation for s in schedules], color=PALETTE[:2])
    b.set(ylabel="% of GPU-time", ylim=(0, 100), title="Utilisation")
    fig.suptitle(title)
    fig.tight_layout()
    return fig
