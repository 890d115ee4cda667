"""Matplotlib helpers and the course's one plot style.

Every lesson calls ``use_style()`` once in its setup cell and draws through the functions here, so
all figures look alike: readable sizes, a colour-blind-safe palette, light grids, units on axes.
Takes tidy records (lists of dicts or dataclasses), never measures or calculates.

The plots live in one module per subject; this package re-exports them all, so
``from course.presentation.plots import roofline`` works as before."""

from course.presentation.plots.cost_curves import (
    breakeven_vs_utilisation,
    overhead_vs_interval,
    stacked_usd,
)
from course.presentation.plots.distributed import collective_times, ddp_timeline, pipeline_gantt
from course.presentation.plots.gpu import (
    memory_timeline,
    occupancy_curve,
    profile_timeline,
    stride_sweep,
)
from course.presentation.plots.job_timelines import gpu_gantt, policy_bars
from course.presentation.plots.load_curves import day_fleet, load_curve
from course.presentation.plots.measurements import (
    bandwidth_vs_working_set,
    beside_reference,
    grouped_bars,
    labelled_bars,
    power_trace,
    rate_vs_batch,
    roofline,
    thread_scaling,
    time_vs_size,
)
from course.presentation.plots.memory_bars import bytes_vs_tokens, stacked_bytes
from course.presentation.plots.number_formats import (
    bit_layouts,
    format_ranges,
    loss_curves,
    magnitude_histogram,
    running_sums,
)
from course.presentation.plots.scale import goodput_vs_interval, restart_timeline
from course.presentation.plots.style import KIND_COLOURS, KIND_NAMES, PALETTE, STYLE, use_style

__all__ = [
    "gpu_gantt",
    "policy_bars",
    "PALETTE",
    "STYLE",
    "KIND_COLOURS",
    "KIND_NAMES",
    "bandwidth_vs_working_set",
    "beside_reference",
    "bit_layouts",
    "breakeven_vs_utilisation",
    "bytes_vs_tokens",
    "collective_times",
    "day_fleet",
    "ddp_timeline",
    "format_ranges",
    "goodput_vs_interval",
    "grouped_bars",
    "labelled_bars",
    "load_curve",
    "loss_curves",
    "magnitude_histogram",
    "memory_timeline",
    "occupancy_curve",
    "overhead_vs_interval",
    "pipeline_gantt",
    "power_trace",
    "profile_timeline",
    "rate_vs_batch",
    "restart_timeline",
    "roofline",
    "running_sums",
    "stacked_bytes",
    "stacked_usd",
    "stride_sweep",
    "thread_scaling",
    "time_vs_size",
    "use_style",
]
