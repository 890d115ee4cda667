"""course.presentation.plots.cost_curves: break-even lines capped where buying never wins, costs
stacked to their totals, the overhead curve in percent against hours."""

from __future__ import annotations

import math

import matplotlib
import pytest

matplotlib.use("Agg")

from course.presentation.plots import cost_curves as plots  # noqa: E402


def test_breakeven_lines_cap_never_at_the_top_and_show_utilisation_in_percent():
    ax = plots.breakeven_vs_utilisation(
        [0.1, 0.5, 1.0], {"on-demand": [math.inf, 30.0, 15.0]}, band=(12, 18), cap_months=60
    )
    (line,) = ax.lines
    assert list(line.get_xdata()) == [10, 50, 100]
    assert list(line.get_ydata()) == [60, 30, 15]  # never (inf) drawn at the cap
    assert ax.get_ylim() == (0, 60)
    assert "claimed 12-18 months" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_stacked_usd_stacks_each_option_to_its_total():
    # Lesson 10, question 8: a DGX H100 priced at 8 x $35,000 (AI Infrastructure's midpoint).
    options = {"own": {"hardware": 8 * 35_000.0, "power": 40_000.0}, "rent": {"rent": 250_000.0}}
    ax = plots.stacked_usd(options)
    tops = {}
    for p in ax.patches:
        x = round(p.get_x() + p.get_width() / 2)
        tops[x] = max(tops.get(x, 0.0), p.get_y() + p.get_height())
    assert tops == {0: 320_000.0, 1: 250_000.0}
    assert ax.yaxis.get_major_formatter()(320_000.0, 0) == "$320,000"


def test_overhead_curve_is_in_percent_against_hours_with_marks():
    ax = plots.overhead_vs_interval([1800, 3600, 7200], [0.05, 0.03, 0.04], marks={"best": 3600})
    curve = ax.lines[0]
    assert list(curve.get_xdata()) == [0.5, 1, 2]
    assert list(curve.get_ydata()) == pytest.approx([5, 3, 4])
    assert any(list(line.get_xdata()) == [1, 1] for line in ax.lines[1:])
