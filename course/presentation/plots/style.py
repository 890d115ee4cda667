"""The course's one plot style and the helpers every plot module shares (axes, unit formatters)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

import matplotlib as mpl
import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

from course.facts import units

#: Okabe-Ito colour-blind-safe palette.
PALETTE = ["#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000"]


STYLE = {
    "figure.figsize": (7.0, 4.0),
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "axes.prop_cycle": mpl.cycler(color=PALETTE),
    "axes.grid": True,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 11,
    "grid.alpha": 0.3,
    "legend.frameon": False,
    "font.size": 10,
}


def use_style() -> None:
    """Apply the course style to every figure drawn after this call."""
    mpl.rcParams.update(STYLE)


def record_dict(record: Any) -> dict[str, Any]:
    """A measurement record (a dataclass or a mapping) as a plain dict."""
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return dataclasses.asdict(record)
    return dict(record)


def record_dicts(records: Iterable[Any]) -> list[dict[str, Any]]:
    """Records as dicts; no record is a ValueError (a plot needs one)."""
    rows = [record_dict(r) for r in records]
    if not rows:
        raise ValueError("records must contain at least one measurement to plot")
    return rows


def new_axes(ax=None, figsize=None):
    """``ax`` when the caller gives one, else the axes of a new figure (``figsize`` in inches)."""
    if ax is not None:
        return ax
    return plt.subplots(figsize=figsize)[1]


def prefix_formatter(unit: str, binary: bool = False) -> FuncFormatter:
    """Axis ticks like '10 GFLOP/s' or '32 KiB' instead of 1e10."""
    if unit == "B" and binary:
        return FuncFormatter(lambda v, _: units.fmt_bytes(v, binary=True, digits=0))
    if unit == "B/s":
        return FuncFormatter(lambda v, _: units.fmt_bandwidth(v, digits=0))
    if unit == "FLOP/s":
        return FuncFormatter(lambda v, _: units.fmt_flop_rate(v, digits=0))
    return FuncFormatter(lambda v, _: f"{v:g}")


def log_log_axes(ax, *, x_ticks, y_ticks, xlabel: str, ylabel: str, title: str, x_base: int = 2):
    """The course's log-log axes: x in powers of ``x_base``, y with ``y_ticks`` and no minor labels.

    ``x_ticks`` / ``y_ticks`` are tick formatters (None keeps matplotlib's for that axis).
    """
    ax.set_xscale("log", base=x_base)
    ax.set_yscale("log")
    if x_ticks is not None:
        ax.xaxis.set_major_formatter(x_ticks)
    if y_ticks is not None:
        ax.yaxis.set_major_formatter(y_ticks)
    ax.yaxis.set_minor_formatter(NullFormatter())
    lo, hi = ax.get_ylim()
    if hi / lo < 100:  # under two decades: label 1-2-5 steps, or the axis shows one number at most
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1, 2, 5)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)


def bytes_axis(axis) -> None:
    """Tick labels in bytes with a decimal prefix (``1 GB``)."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: units.fmt_bytes(v, digits=0)))


KIND_COLOURS = {
    "F": PALETTE[0],
    "B": PALETTE[1],
    "W": PALETTE[2],
    "backward": PALETTE[1],
    "all-reduce": PALETTE[3],
}


KIND_NAMES = {
    "F": "forward",
    "B": "backward",
    "W": "weight gradient",
    "backward": "backward",
    "all-reduce": "bucket all-reduce",
}


def ms_time_axis(ax) -> None:
    """The x axis of a timeline, labelled in milliseconds since the step started."""
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{1e3 * v:g}"))
    ax.set_xlabel("time since the step started (ms)")


__all__ = [
    "KIND_COLOURS",
    "KIND_NAMES",
    "PALETTE",
    "STYLE",
    "bytes_axis",
    "log_log_axes",
    "ms_time_axis",
    "new_axes",
    "prefix_formatter",
    "record_dict",
    "record_dicts",
    "use_style",
]
