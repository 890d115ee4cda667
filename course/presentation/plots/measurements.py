"""Plots of measurements on this machine: rates, thread scaling, bandwidth, rooflines, power
(lessons 01, 02, 05)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import matplotlib.pyplot as plt
from matplotlib.ticker import FuncFormatter, NullFormatter

from course.facts import units
from course.presentation.plots.style import (
    PALETTE,
    log_log_axes,
    new_axes,
    prefix_formatter,
    record_dict,
    record_dicts,
)


def grouped_bars(
    records: Iterable[Any],
    *,
    x: str,
    y: str = "flop_per_s",
    hue: str,
    ax=None,
    log: bool = True,
    ylabel: str = "FLOP/s (log scale)",
    title: str = "",
    label: Callable[[Any], str] = str,
):
    """Bars of ``y`` grouped by ``x`` (one bar per ``hue`` value), on a log axis by default.

    The log axis lets a pure-Python loop (~1e7 FLOP/s) and BLAS (~1e11) share one chart.
    """
    rows = record_dicts(records)
    xs = list(dict.fromkeys(r[x] for r in rows))
    hues = list(dict.fromkeys(r[hue] for r in rows))
    ax = new_axes(ax)
    width = 0.8 / len(hues)
    for i, h in enumerate(hues):
        values = {r[x]: r[y] for r in rows if r[hue] == h}
        pos = [j + (i - (len(hues) - 1) / 2) * width for j, v in enumerate(xs) if v in values]
        ax.bar(
            pos,
            [values[v] for v in xs if v in values],
            width=width,
            label=label(h),
            color=PALETTE[i % len(PALETTE)],
        )
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    if log:
        ax.set_yscale("log")
    if y.endswith("flop_per_s"):
        ax.yaxis.set_major_formatter(prefix_formatter("FLOP/s"))
        ax.yaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel(x.replace("_", " "))
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(title=hue.replace("_", " "))
    return ax


def thread_scaling(records: Iterable[Any], *, ax=None, title: str = "Speed-up with threads"):
    """Speed-up (rate with N threads / rate with 1) against N, with the ideal line y = N.

    Error bars come from each point's interquartile range (records need ``threads``,
    ``flop_per_s``, ``seconds`` and ``spread_seconds``).
    """
    rows = sorted(record_dicts(records), key=lambda r: r["threads"])
    base = next((r for r in rows if r["threads"] == 1), None)
    if base is None:
        raise ValueError("thread_scaling needs a record with threads=1 as the baseline")
    ax = new_axes(ax)
    n = [r["threads"] for r in rows]
    speedup = [r["flop_per_s"] / base["flop_per_s"] for r in rows]
    err = [s * r["spread_seconds"] / r["seconds"] for s, r in zip(speedup, rows, strict=True)]
    ax.errorbar(n, speedup, yerr=err, marker="o", capsize=4, label="measured (median, IQR)")
    ax.plot(n, n, linestyle="--", color="grey", label="ideal: N threads, N x faster")
    ax.set_xticks(n)
    ax.set_xlabel("threads")
    ax.set_ylabel("speed-up over 1 thread")
    ax.set_ylim(bottom=0)
    ax.set_title(title)
    ax.legend()
    return ax


def bandwidth_vs_working_set(
    records: Iterable[Any],
    caches: Mapping[str, int] | None = None,
    *,
    ax=None,
    title: str = "Read bandwidth vs working-set size",
):
    """Bytes/s against working-set size (log-log), with the OS's cache sizes as vertical lines.

    Records need ``working_set_bytes``, ``bytes_per_s``, ``seconds`` and ``spread_seconds``;
    several kernels or devices in one list are drawn as separate lines.
    """
    rows = record_dicts(records)
    ax = new_axes(ax)

    def key_of(r: dict[str, Any]) -> tuple[str, ...]:
        pinned = {True: "pinned", False: "pageable"}.get(r.get("pinned"), "")
        return (r.get("kernel", ""), r.get("device", ""), pinned)

    keys = list(dict.fromkeys(key_of(r) for r in rows))
    for i, key in enumerate(keys):
        sel = sorted((r for r in rows if key_of(r) == key), key=lambda r: r["working_set_bytes"])
        xs = [r["working_set_bytes"] for r in sel]
        ys = [r["bytes_per_s"] for r in sel]
        # IQR of the time -> relative error of the rate
        rel = [r["spread_seconds"] / (2 * r["seconds"]) for r in sel]
        lo = [y * min(0.9, e) for y, e in zip(ys, rel, strict=True)]
        hi = [y * e for y, e in zip(ys, rel, strict=True)]
        ax.errorbar(
            xs,
            ys,
            yerr=[lo, hi],
            marker="o",
            capsize=3,
            color=PALETTE[i % len(PALETTE)],
            label=" ".join(k for k in key if k) or None,
        )
    for name, size in sorted((caches or {}).items(), key=lambda kv: kv[1]):
        ax.axvline(size, color="grey", linestyle=":", linewidth=1)
        ax.annotate(
            f"{name} {units.fmt_bytes(size, binary=True, digits=0)}",
            (size, 0.97),
            xycoords=("data", "axes fraction"),
            rotation=90,
            va="top",
            ha="right",
            fontsize=9,
            color="dimgrey",
        )
    log_log_axes(
        ax,
        x_ticks=prefix_formatter("B", binary=True),
        y_ticks=prefix_formatter("B/s"),
        xlabel="working set (log scale)",
        ylabel="bandwidth (log scale)",
        title=title,
    )
    if len(keys) > 1 or any(k for key in keys for k in key):
        ax.legend()
    return ax


def time_vs_size(
    records: Iterable[Any],
    *,
    hue: str = "library",
    ax=None,
    fits: Sequence[Any] = (),
    title: str = "Seconds per call vs matrix size",
):
    """Seconds per call against matrix size (log-log), one line per ``hue`` value.

    ``fits`` (``FixedCostFit`` objects) are drawn as dashed model curves fixed + 2n^3 / rate.
    """
    rows = record_dicts(records)
    ax = new_axes(ax)
    hues = list(dict.fromkeys(r[hue] for r in rows))
    for i, h in enumerate(hues):
        sel = sorted((r for r in rows if r[hue] == h), key=lambda r: r["size"])
        ax.plot(
            [r["size"] for r in sel],
            [r["seconds"] for r in sel],
            marker="o",
            color=PALETTE[i % len(PALETTE)],
            label=str(h),
        )
    sizes = sorted({r["size"] for r in rows})
    grid = [sizes[0] * (sizes[-1] / sizes[0]) ** (k / 50) for k in range(51)]
    for i, fit in enumerate(fits):
        ax.plot(
            grid,
            [fit.seconds(2 * n**3) for n in grid],
            linestyle="--",
            color=PALETTE[(i + len(hues)) % len(PALETTE)],
            label=f"model: {fit.label}",
        )
    log_log_axes(
        ax,
        x_ticks=FuncFormatter(lambda v, _: f"{v:g}"),
        y_ticks=FuncFormatter(lambda v, _: units.fmt_seconds(v)),
        xlabel="matrix size n (n x n @ n x n)",
        ylabel="seconds per call (log scale)",
        title=title,
    )
    ax.legend()
    return ax


def roofline(
    *,
    peaks: Mapping[str, float],
    bandwidths: Mapping[str, float],
    points: Iterable[Any] = (),
    ax=None,
    intensity_range: tuple[float, float] = (1e-2, 1e4),
    title: str = "Roofline",
):
    """A roofline: FLOP/s attainable against arithmetic intensity (FLOP/byte), log-log.

    ``peaks``: label -> FLOP/s (horizontal roofs); ``bandwidths``: label -> bytes/s (slanted
    roofs, each capped by the highest peak). ``points``: records with ``intensity_flop_per_byte``
    and ``flop_per_s`` (and a ``name``), drawn as markers: measured kernels or estimates.
    """
    if not peaks or not bandwidths:
        raise ValueError("roofline needs at least one peak and one bandwidth")
    ax = new_axes(ax)
    lo, hi = intensity_range
    xs = [lo * (hi / lo) ** (k / 200) for k in range(201)]
    top = max(peaks.values())
    for i, (name, bw) in enumerate(sorted(bandwidths.items(), key=lambda kv: -kv[1])):
        ax.plot(
            xs,
            [min(top, x * bw) for x in xs],
            color=PALETTE[i % len(PALETTE)],
            label=f"{name}: {units.fmt_bandwidth(bw)}",
        )
    for name, peak in peaks.items():
        ax.axhline(peak, color="black", linestyle="--", linewidth=1)
        ax.annotate(
            f"{name}: {units.fmt_flop_rate(peak)}",
            (lo, peak),
            xytext=(4, 4),
            textcoords="offset points",
            fontsize=9,
        )
    rows = [record_dict(p) for p in points]
    markers = "osD^vP*X"
    for j, r in enumerate(rows):
        ax.scatter(
            r["intensity_flop_per_byte"],
            r["flop_per_s"],
            marker=markers[j % 8],
            s=50,
            color=PALETTE[(j + 2) % len(PALETTE)],
            edgecolor="black",
            zorder=3,
            label=r.get("name", f"point {j + 1}"),
        )
    log_log_axes(
        ax,
        x_ticks=None,
        y_ticks=prefix_formatter("FLOP/s"),
        x_base=10,
        xlabel="arithmetic intensity (FLOP/byte, log scale)",
        ylabel="FLOP/s (log scale)",
        title=title,
    )
    ax.legend(fontsize=8, loc="lower right")
    return ax


def rate_vs_batch(
    records: Iterable[Any],
    *,
    ax=None,
    peak: float | None = None,
    title: str = "Batching: FLOP/s of one linear layer vs batch",
    label: str = "measured (median)",
    peak_label: str = "matmul peak measured here",
):
    """FLOP/s against batch size (log-log), with a measured or datasheet peak as a dashed line.

    Call it again with the same ``ax`` and another ``label`` to draw a second machine beside.
    """
    rows = sorted(record_dicts(records), key=lambda r: r["batch"])
    ax = new_axes(ax)
    ax.plot([r["batch"] for r in rows], [r["flop_per_s"] for r in rows], marker="o", label=label)
    if peak:
        ax.axhline(
            peak,
            color="black",
            linestyle="--",
            linewidth=1,
            label=f"{peak_label}: {units.fmt_flop_rate(peak)}",
        )
    log_log_axes(
        ax,
        x_ticks=FuncFormatter(lambda v, _: f"{v:g}"),
        y_ticks=prefix_formatter("FLOP/s"),
        xlabel="batch (vectors per weight read)",
        ylabel="FLOP/s (log scale)",
        title=title,
    )
    ax.legend()
    return ax


def labelled_bars(
    labels,
    values,
    *,
    spreads=None,
    ax=None,
    ylabel: str = "",
    title: str = "",
    log: bool = False,
    fmt=None,
):
    """One bar per label with its value written on top (``fmt(value)``), optional error bars
    (``spreads``, e.g. interquartile ranges), optionally on a log axis."""
    labels, values = list(labels), list(values)
    ax = new_axes(ax)
    colours = [PALETTE[i % len(PALETTE)] for i in range(len(labels))]
    bars = ax.bar(
        range(len(labels)),
        values,
        color=colours,
        yerr=None if spreads is None else list(spreads),
        capsize=4,
    )
    for bar, v in zip(bars, values, strict=True):
        ax.annotate(
            (fmt or "{:.3g}".format)(v),
            (bar.get_x() + bar.get_width() / 2, v),
            ha="center",
            va="bottom",
            fontsize=9,
            xytext=(0, 2),
            textcoords="offset points",
        )
    ax.set_xticks(range(len(labels)), labels)
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return ax


def power_trace(
    power: Mapping[str, Any],
    *,
    phases=("sustained_bf16_8192",),
    limit: float | None = None,
    boost_mhz: float | None = None,
    title: str = "",
):
    """Watts and SM clock against time for a ``power.json``-shaped record (idle, then each phase),
    with the power cap and the boost clock as dashed lines. Two stacked axes; returns them."""
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(7.0, 5.0))
    series = [("idle", power.get("idle_samples") or [])]
    series += [(p.replace("_", " "), (power.get(p) or {}).get("samples") or []) for p in phases]
    t0 = min((s[0][0] for _, s in series if s), default=0.0)
    for i, (name, samples) in enumerate(series):
        if not samples:
            continue
        t = [s[0] - t0 for s in samples]
        colour = PALETTE[i % len(PALETTE)]
        top.plot(t, [s[1] for s in samples], color=colour, label=name)
        bottom.plot(t, [s[2] for s in samples], color=colour)
    if limit:
        top.axhline(limit, linestyle="--", color="0.25", linewidth=1)
        top.annotate(
            f"power cap {limit:,.0f} W",
            (0.01, limit),
            xycoords=("axes fraction", "data"),
            va="bottom",
            fontsize=8,
        )
    if boost_mhz:
        bottom.axhline(boost_mhz, linestyle="--", color="0.25", linewidth=1)
        bottom.annotate(
            f"boost {boost_mhz:,.0f} MHz",
            (0.01, boost_mhz),
            xycoords=("axes fraction", "data"),
            va="top",
            fontsize=8,
        )
    top.set_ylabel("power (W)")
    bottom.set_ylabel("SM clock (MHz)")
    bottom.set_xlabel("time (s)")
    top.set_title(title)
    top.legend(fontsize=8)
    return top, bottom


def beside_reference(
    mine: Iterable[Any],
    theirs: Iterable[Any],
    *,
    x: str = "size",
    y: str = "flop_per_s",
    series: str = "dtype",
    ax=None,
    title: str = "",
    ylabel: str = "FLOP/s (log scale)",
):
    """This machine's records beside a reference run's, one bar per (machine, ``series``) at each
    ``x``.

    ``theirs`` are dicts from ``course.facts.data.reference.records`` (they carry ``machine``);
    ``mine`` are measured records, labelled "this machine".
    """
    rows = [dict(record_dict(r), machine="this machine") for r in mine] + [
        record_dict(r) for r in theirs
    ]
    for r in rows:
        r["run"] = f"{r['machine']}: {r[series]}"
    return grouped_bars(rows, x=x, y=y, hue="run", ax=ax, title=title, ylabel=ylabel)


__all__ = [
    "grouped_bars",
    "thread_scaling",
    "bandwidth_vs_working_set",
    "time_vs_size",
    "roofline",
    "rate_vs_batch",
    "labelled_bars",
    "power_trace",
    "beside_reference",
]
