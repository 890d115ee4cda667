"""course.presentation.plots.gpu: occupancy, stride and memory plots show the numbers they are
given, checked on the CUDA guides' published occupancy case."""

from __future__ import annotations

import matplotlib
import pytest

matplotlib.use("Agg")

from course.calculators import occupancy  # noqa: E402
from course.presentation.plots import gpu as plots  # noqa: E402


def test_occupancy_curve_steps_from_75_to_62_5_percent_as_in_the_best_practices_guide():
    # CUDA C++ Best Practices Guide, "Calculating Occupancy", compute capability 7.0, 37 registers:
    # 128-thread blocks reach 75 %, 320-thread blocks 62.5 % (the guide rounds to 63 %).
    results = [
        occupancy.occupancy(t, r, compute_capability="7.0") for t in (128, 320) for r in (32, 37)
    ]
    ax = plots.occupancy_curve(results)
    small, large = ax.lines  # one line per block size, smallest first
    assert list(small.get_xdata()) == [32, 37] and small.get_ydata()[-1] == 75
    assert large.get_ydata()[-1] == pytest.approx(62.5)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "128 threads/block",
        "320 threads/block",
    ]


def test_stride_sweep_plots_bandwidth_relative_to_stride_one_beside_the_prediction():
    rows = [
        {"stride_elements": s, "useful_bytes_per_s": bw, "predicted_efficiency": p}
        for s, bw, p in [(1, 100e9, 1.0), (2, 50e9, 0.5), (32, 4e9, 1 / 32)]
    ]
    measured, predicted = plots.stride_sweep(rows).lines
    assert list(measured.get_ydata()) == [1.0, 0.5, 0.04]
    assert list(predicted.get_ydata()) == [1.0, 0.5, 1 / 32]


def test_memory_timeline_is_in_milliseconds():
    points = [{"time_us": 0, "allocated_bytes": 0}, {"time_us": 1500, "allocated_bytes": 2**30}]
    (line,) = plots.memory_timeline(points).lines
    assert list(line.get_xdata()) == [0, 1.5] and list(line.get_ydata()) == [0, 2**30]
    with pytest.raises(ValueError, match="at least one measurement"):
        plots.memory_timeline([])
