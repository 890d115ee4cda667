"""course.presentation.plots.style: the one plot style (the Okabe-Ito palette) and the helpers
every plot module shares: records to rows, unit tick labels, log-log axes that always label
enough ticks."""

from __future__ import annotations

import dataclasses

import matplotlib

matplotlib.use("Agg")

import matplotlib as mpl  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from course.presentation.plots import style  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def test_the_palette_is_okabe_and_itos_and_the_style_applies_it():
    """Okabe & Ito 2008, "Color Universal Design": black, orange, sky blue, bluish green, yellow,
    blue, vermillion, reddish purple."""
    okabe_ito = [
        *("#000000", "#E69F00", "#56B4E9", "#009E73"),
        *("#F0E442", "#0072B2", "#D55E00", "#CC79A7"),
    ]
    assert sorted(style.PALETTE) == sorted(okabe_ito)
    with mpl.rc_context():
        style.use_style()
        assert mpl.rcParams["axes.prop_cycle"].by_key()["color"] == style.PALETTE
        assert not mpl.rcParams["axes.spines.top"] and mpl.rcParams["axes.grid"]
        _, ax = plt.subplots()
        assert tuple(ax.figure.get_size_inches()) == (7.0, 4.0)


def test_records_become_rows_and_none_is_refused():
    @dataclasses.dataclass
    class Rec:
        size: int
        seconds: float

    assert style.record_dicts([Rec(8, 0.5), {"size": 16, "seconds": 1.0}]) == [
        {"size": 8, "seconds": 0.5},
        {"size": 16, "seconds": 1.0},
    ]
    with pytest.raises(ValueError, match="at least one measurement"):
        style.record_dicts([])


def test_ticks_carry_their_units():
    """1e10 FLOP/s = 10 GFLOP/s; 2**15 bytes = 32 KiB; a time axis in ms."""
    assert style.prefix_formatter("FLOP/s")(1e10, 0) == "10 GFLOP/s"
    assert style.prefix_formatter("B", binary=True)(2**15, 0) == "32 KiB"
    _, ax = plt.subplots()
    style.ms_time_axis(ax)
    assert ax.xaxis.get_major_formatter()(0.0015, 0) == "1.5"
    assert "ms" in ax.get_xlabel()


def test_a_log_axis_under_two_decades_labels_the_1_2_5_steps():
    _, ax = plt.subplots()
    x = 2.0 ** np.arange(4, 10)
    ax.plot(x, np.linspace(3, 40, len(x)))
    style.log_log_axes(
        ax, x_ticks=None, y_ticks=None, xlabel="size", ylabel="time (s)", title="t", x_base=2
    )
    ticks = ax.yaxis.get_major_locator().tick_values(3, 40)
    assert {5.0, 10.0, 20.0} <= {round(float(t), 6) for t in ticks}
    assert ax.get_xscale() == ax.get_yscale() == "log" and ax.get_title() == "t"
