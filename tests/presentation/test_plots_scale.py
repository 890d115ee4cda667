"""course.presentation.plots.scale: goodput curves in percent against minutes, marks where given."""

from __future__ import annotations

import math

import matplotlib
import pytest

matplotlib.use("Agg")

from course.calculators import reliability  # noqa: E402
from course.presentation.plots import scale as plots  # noqa: E402


def test_goodput_curve_peaks_near_youngs_interval_and_marks_it_in_minutes():
    # Young (1974): the best interval is about sqrt(2 x checkpoint cost x MTBF); 60 s checkpoints
    # and a failure a day give sqrt(2 x 60 x 86,400) = 3,220 s = 53.7 min.
    ckpt, mtbf = 60.0, 86_400.0
    young = math.sqrt(2 * ckpt * mtbf)
    xs = [young * 2**k for k in (-3, -2, -1, 0, 1, 2, 3)]
    ys = [reliability.goodput_fraction(x, ckpt, mtbf) for x in xs]
    ax = plots.goodput_vs_interval({"60 s checkpoints": (xs, ys)}, marks={"Young": young})
    curve, mark = ax.lines
    assert list(curve.get_xdata()) == pytest.approx([x / 60 for x in xs])
    assert list(curve.get_ydata()) == pytest.approx([100 * y for y in ys])
    best = max(zip(curve.get_ydata(), curve.get_xdata(), strict=True))
    assert best[1] == pytest.approx(young / 60)  # the sampled curve peaks at Young's interval
    assert mark.get_xdata()[0] == pytest.approx(53.67, abs=0.01)
    assert ax.get_xscale() == "log"
