"""Plots of money: break-even against utilisation, stacked costs, checkpoint overhead (lessons
09, 10)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.ticker import FuncFormatter

from course.facts import units
from course.presentation.plots.style import (
    PALETTE,
    new_axes,
)


def breakeven_vs_utilisation(
    utilisations: Sequence[float],
    series: Mapping[str, Sequence[float]],
    *,
    band: tuple[float, float] | None = None,
    cap_months: float = 120,
    ax=None,
    title: str = "Months until buying beats renting",
):
    """Break-even months (y, capped at ``cap_months``; ``inf`` = never) against utilisation (x, a
    fraction shown in percent), one line per rent option; ``band`` shades a claimed range."""
    ax = new_axes(ax)
    xs = [100 * u for u in utilisations]
    for i, (label, months) in enumerate(series.items()):
        ys = [min(m, cap_months) if m == m else cap_months for m in months]
        ax.plot(xs, ys, label=label, color=PALETTE[i % len(PALETTE)], lw=2)
    if band is not None:
        ax.axhspan(
            *band, color="#999999", alpha=0.2, label=f"claimed {band[0]:g}-{band[1]:g} months"
        )
    ax.set_ylim(0, cap_months)
    ax.set_xlim(0, 100)
    ax.set_xlabel("utilisation (% of hours the hardware is busy)")
    ax.set_ylabel(f"break-even (months; top = {cap_months:g} or never)")
    ax.set_title(title)
    ax.legend()
    return ax


def stacked_usd(options: Mapping[str, Mapping[str, float]], *, ax=None, title: str = ""):
    """One bar per option (own, on-demand, ...), stacked by cost component, in USD."""
    ax = new_axes(ax)
    parts = list(dict.fromkeys(p for comp in options.values() for p in comp))
    bottoms = [0.0] * len(options)
    for i, part in enumerate(parts):
        values = [comp.get(part, 0.0) for comp in options.values()]
        ax.bar(list(options), values, bottom=bottoms, label=part, color=PALETTE[i % len(PALETTE)])
        bottoms = [b + v for b, v in zip(bottoms, values, strict=True)]
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: units.fmt_usd(v)))
    ax.set_ylabel("cost over the lifetime")
    ax.set_title(title)
    ax.legend()
    return ax


def overhead_vs_interval(
    intervals_seconds: Sequence[float],
    overheads: Sequence[float],
    *,
    marks: Mapping[str, float] | None = None,
    ax=None,
    title: str = "Expected overhead against checkpoint interval",
):
    """Expected overhead (wall clock / work - 1, in percent) against the checkpoint interval (log x,
    in hours), with vertical lines at ``marks`` (label -> interval in seconds)."""
    ax = new_axes(ax)
    ax.plot(
        [t / 3600 for t in intervals_seconds], [100 * o for o in overheads], color=PALETTE[0], lw=2
    )
    for i, (label, t) in enumerate((marks or {}).items()):
        ax.axvline(t / 3600, color=PALETTE[(i + 1) % len(PALETTE)], ls="--", label=label)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.set_xlabel("work between checkpoints (hours, log scale)")
    ax.set_ylabel("expected overhead (%)")
    ax.set_title(title)
    if marks:
        ax.legend()
    return ax


__all__ = ["breakeven_vs_utilisation", "stacked_usd", "overhead_vs_interval"]
