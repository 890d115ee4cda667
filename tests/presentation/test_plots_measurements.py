"""course.presentation.plots.measurements: the measured records draw (Agg backend)."""

from __future__ import annotations

import matplotlib
import pytest
from measured import bandwidth_record

from course.calculators import overhead
from course.facts.units import KiB, MiB
from course.measure import matmul

matplotlib.use("Agg")


def _synthetic(fixed: float, rate: float, sizes=(2, 8, 32, 128, 512)):
    return [
        matmul.MatmulRecord(
            "x",
            "cpu",
            "fp32",
            n,
            1,
            2.0 * n**3,
            fixed + 2.0 * n**3 / rate,
            0.0,
            1,
            2.0 * n**3 / (fixed + 2.0 * n**3 / rate),
        )
        for n in sizes
    ]


def test_plots_draw_measured_records():
    from course.presentation import plots

    recs = _synthetic(2e-6, 1e10)
    ax = plots.grouped_bars(recs, x="size", hue="library")
    assert len(ax.patches) == len(recs) and ax.get_yscale() == "log"
    ax = plots.time_vs_size(recs, fits=[overhead.fit_fixed_cost(recs)])
    assert len(ax.lines) == 2
    threads = [
        matmul.MatmulRecord("torch", "cpu", "fp32", 512, t, 1.0, 1.0 / t, 0.01, 3, float(t))
        for t in (1, 2)
    ]
    ax = plots.thread_scaling(threads)
    assert ax.get_xlabel() == "threads"
    caches = {"L1d": 32 * KiB, "L3": 32 * MiB}
    ax = plots.bandwidth_vs_working_set(
        [bandwidth_record(4 * KiB, 1e11), bandwidth_record(64 * MiB, 2e10)], caches
    )
    assert len(ax.texts) == 2  # one label per cache level
    ax = plots.roofline(
        peaks={"peak": 1e11},
        bandwidths={"DRAM": 2e10},
        points=[{"name": "k", "intensity_flop_per_byte": 1.0, "flop_per_s": 1e9}],
    )
    assert ax.get_xscale() == "log"
    with pytest.raises(ValueError, match="at least one"):
        plots.grouped_bars([], x="size", hue="library")
    import matplotlib.pyplot as plt

    plt.close("all")
