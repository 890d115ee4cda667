"""Matplotlib helpers and the course's one plot style.

Every lesson calls ``use_style()`` once in its setup cell and draws through the functions here, so
all figures look alike: readable sizes, a colour-blind-safe palette, light grids, units on axes.
Layer 4: takes tidy records (lists of dicts or dataclasses), never measures or calculates.
"""

from __future__ import annotations

import matplotlib as mpl

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


# ---------------------------------------------------------------------------------------------
# Plots of measurements (lessons 01 and 02). Each takes tidy records (dataclasses or dicts, as the
# sweeps in ``course.measure`` return them) and an optional ``ax``, and returns the Axes.
# ---------------------------------------------------------------------------------------------

import dataclasses  # noqa: E402
from collections.abc import Callable, Iterable, Mapping, Sequence  # noqa: E402
from typing import Any  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from course.facts import units  # noqa: E402


def _row(record: Any) -> dict[str, Any]:
    if dataclasses.is_dataclass(record) and not isinstance(record, type):
        return dataclasses.asdict(record)
    return dict(record)


def _rows(records: Iterable[Any]) -> list[dict[str, Any]]:
    rows = [_row(r) for r in records]
    if not rows:
        raise ValueError("records must contain at least one measurement to plot")
    return rows


def _axes(ax=None):
    if ax is not None:
        return ax
    _, ax = plt.subplots()
    return ax


def _prefix_formatter(unit: str, binary: bool = False) -> FuncFormatter:
    """Axis ticks like '10 GFLOP/s' or '32 KiB' instead of 1e10."""
    if unit == "B" and binary:
        return FuncFormatter(lambda v, _: units.fmt_bytes(v, binary=True, digits=0))
    if unit == "B/s":
        return FuncFormatter(lambda v, _: units.fmt_bandwidth(v, digits=0))
    if unit == "FLOP/s":
        return FuncFormatter(lambda v, _: units.fmt_flop_rate(v, digits=0))
    return FuncFormatter(lambda v, _: f"{v:g}")


def _log_log(ax, *, x_ticks, y_ticks, xlabel: str, ylabel: str, title: str, x_base: int = 2):
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
    rows = _rows(records)
    xs = list(dict.fromkeys(r[x] for r in rows))
    hues = list(dict.fromkeys(r[hue] for r in rows))
    ax = _axes(ax)
    width = 0.8 / len(hues)
    for i, h in enumerate(hues):
        values = {r[x]: r[y] for r in rows if r[hue] == h}
        pos = [j + (i - (len(hues) - 1) / 2) * width for j, v in enumerate(xs) if v in values]
        ax.bar(pos, [values[v] for v in xs if v in values], width=width, label=label(h),
               color=PALETTE[i % len(PALETTE)])  # fmt: skip
    ax.set_xticks(range(len(xs)), [str(v) for v in xs])
    if log:
        ax.set_yscale("log")
    if y.endswith("flop_per_s"):
        ax.yaxis.set_major_formatter(_prefix_formatter("FLOP/s"))
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
    rows = sorted(_rows(records), key=lambda r: r["threads"])
    base = next((r for r in rows if r["threads"] == 1), None)
    if base is None:
        raise ValueError("thread_scaling needs a record with threads=1 as the baseline")
    ax = _axes(ax)
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
    rows = _rows(records)
    ax = _axes(ax)

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
        ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, color=PALETTE[i % len(PALETTE)],
                    label=" ".join(k for k in key if k) or None)  # fmt: skip
    for name, size in sorted((caches or {}).items(), key=lambda kv: kv[1]):
        ax.axvline(size, color="grey", linestyle=":", linewidth=1)
        ax.annotate(f"{name} {units.fmt_bytes(size, binary=True, digits=0)}", (size, 0.97),
                    xycoords=("data", "axes fraction"), rotation=90, va="top", ha="right",
                    fontsize=9, color="dimgrey")  # fmt: skip
    _log_log(ax, x_ticks=_prefix_formatter("B", binary=True), y_ticks=_prefix_formatter("B/s"),
             xlabel="working set (log scale)", ylabel="bandwidth (log scale)", title=title)  # fmt: skip
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
    rows = _rows(records)
    ax = _axes(ax)
    hues = list(dict.fromkeys(r[hue] for r in rows))
    for i, h in enumerate(hues):
        sel = sorted((r for r in rows if r[hue] == h), key=lambda r: r["size"])
        ax.plot([r["size"] for r in sel], [r["seconds"] for r in sel], marker="o",
                color=PALETTE[i % len(PALETTE)], label=str(h))  # fmt: skip
    sizes = sorted({r["size"] for r in rows})
    grid = [sizes[0] * (sizes[-1] / sizes[0]) ** (k / 50) for k in range(51)]
    for i, fit in enumerate(fits):
        ax.plot(grid, [fit.seconds(2 * n**3) for n in grid], linestyle="--",
                color=PALETTE[(i + len(hues)) % len(PALETTE)], label=f"model: {fit.label}")  # fmt: skip
    _log_log(ax, x_ticks=FuncFormatter(lambda v, _: f"{v:g}"),
             y_ticks=FuncFormatter(lambda v, _: units.fmt_seconds(v)),
             xlabel="matrix size n (n x n @ n x n)", ylabel="seconds per call (log scale)",
             title=title)  # fmt: skip
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
    ax = _axes(ax)
    lo, hi = intensity_range
    xs = [lo * (hi / lo) ** (k / 200) for k in range(201)]
    top = max(peaks.values())
    for i, (name, bw) in enumerate(sorted(bandwidths.items(), key=lambda kv: -kv[1])):
        ax.plot(xs, [min(top, x * bw) for x in xs], color=PALETTE[i % len(PALETTE)],
                label=f"{name}: {units.fmt_bandwidth(bw)}")  # fmt: skip
    for name, peak in peaks.items():
        ax.axhline(peak, color="black", linestyle="--", linewidth=1)
        ax.annotate(f"{name}: {units.fmt_flop_rate(peak)}", (lo, peak), xytext=(4, 4),
                    textcoords="offset points", fontsize=9)  # fmt: skip
    rows = [_row(p) for p in points]
    markers = "osD^vP*X"
    for j, r in enumerate(rows):
        ax.scatter(r["intensity_flop_per_byte"], r["flop_per_s"], marker=markers[j % 8], s=50,
                   color=PALETTE[(j + 2) % len(PALETTE)], edgecolor="black", zorder=3,
                   label=r.get("name", f"point {j + 1}"))  # fmt: skip
    _log_log(ax, x_ticks=None, y_ticks=_prefix_formatter("FLOP/s"), x_base=10,
             xlabel="arithmetic intensity (FLOP/byte, log scale)", ylabel="FLOP/s (log scale)",
             title=title)  # fmt: skip
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
    rows = sorted(_rows(records), key=lambda r: r["batch"])
    ax = _axes(ax)
    ax.plot([r["batch"] for r in rows], [r["flop_per_s"] for r in rows], marker="o", label=label)
    if peak:
        ax.axhline(peak, color="black", linestyle="--", linewidth=1,
                   label=f"{peak_label}: {units.fmt_flop_rate(peak)}")  # fmt: skip
    _log_log(ax, x_ticks=FuncFormatter(lambda v, _: f"{v:g}"), y_ticks=_prefix_formatter("FLOP/s"),
             xlabel="batch (vectors per weight read)", ylabel="FLOP/s (log scale)", title=title)  # fmt: skip
    ax.legend()
    return ax


# ---------------------------------------------------------------------------------------------
# Lesson 03: data types and precision. Self-contained (imports inside), taking formats from
# ``course.facts.dtypes`` and records from ``course.measure.precision`` / ``course.measure.quantize``.
# ---------------------------------------------------------------------------------------------


def _new_axes(ax=None, figsize=None):
    from matplotlib import pyplot as plt

    if ax is not None:
        return ax
    return plt.subplots(figsize=figsize)[1]


def bit_layouts(formats, *, ax=None, title: str = "Where the bits go: sign, exponent, mantissa"):
    """One row per float format: a box per bit, coloured by field (sign, exponent, mantissa); bits a
    format occupies in memory but does not use (TF32 inside fp32 storage) are hatched grey.

    ``formats``: objects with ``key``, ``sign_bits``, ``exponent_bits``, ``mantissa_bits`` and
    ``storage_bits`` (``course.facts.dtypes.FloatFormat``).
    """
    formats = list(formats)
    ax = _new_axes(ax, figsize=(8.0, 0.45 * len(formats) + 1.2))
    fields = [("sign", PALETTE[3]), ("exponent", PALETTE[0]), ("mantissa", PALETTE[1])]
    for row, f in enumerate(reversed(formats)):
        start = 0
        for (name, colour), width in zip(
            fields, (f.sign_bits, f.exponent_bits, f.mantissa_bits), strict=True
        ):
            if width:
                ax.barh(row, width, left=start, color=colour, edgecolor="white", height=0.7,
                        label=name if row == 0 else None)  # fmt: skip
                ax.text(start + width / 2, row, str(width), ha="center", va="center",
                        color="white", fontsize=9, fontweight="bold")  # fmt: skip
            start += width
        unused = (f.storage_bits or start) - start
        if unused:
            ax.barh(row, unused, left=start, color="#dddddd", hatch="//", edgecolor="white",
                    height=0.7, label="stored, unused")  # fmt: skip
    ax.set_yticks(range(len(formats)), [f.key for f in reversed(formats)])
    ax.set_xlabel("bits")
    ax.set_xlim(0, max((f.storage_bits or f.bits) for f in formats))
    ax.grid(axis="y", visible=False)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8, ncol=4)
    return ax


def format_ranges(formats, *, ax=None, title: str = "Range of each format (log scale)"):
    """A horizontal bar per format from its smallest subnormal to its largest value: the subnormal
    stretch light, the normal range dark, on a log axis."""
    formats = list(formats)
    ax = _new_axes(ax, figsize=(8.0, 0.45 * len(formats) + 1.2))
    for row, f in enumerate(reversed(formats)):
        ax.barh(row, f.smallest_normal - f.smallest_subnormal, left=f.smallest_subnormal,
                color=PALETTE[5], height=0.6, label="subnormal" if row == 0 else None)  # fmt: skip
        ax.barh(row, f.max - f.smallest_normal, left=f.smallest_normal, color=PALETTE[0],
                height=0.6, label="normal" if row == 0 else None)  # fmt: skip
    ax.set_xscale("log")
    ax.set_xlim(min(f.smallest_subnormal for f in formats) / 10, max(f.max for f in formats) * 10)
    ax.set_yticks(range(len(formats)), [f.key for f in reversed(formats)])
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("magnitude (log scale); the line marks 1")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    return ax


def running_sums(series, *, addend: float, every: int, ax=None,
                 title: str = "Adding the same small number, one addition at a time"):  # fmt: skip
    """Partial sums (``series``: label -> sequence, every ``every``-th addition) against the exact
    line ``addend * additions``."""
    ax = _new_axes(ax)
    longest = 0
    for i, (label, sums) in enumerate(series.items()):
        steps = [every * (j + 1) for j in range(len(sums))]
        longest = max(longest, steps[-1])
        ax.plot(steps, list(sums), label=label, color=PALETTE[i % len(PALETTE)], linewidth=2)
    ax.plot([0, longest], [0, addend * longest], color="black", linestyle=":", label="exact")
    ax.set_xlabel("additions")
    ax.set_ylabel("running sum")
    ax.set_title(title)
    ax.legend()
    return ax


def loss_curves(runs, *, ax=None, title: str = "Training loss per step"):
    """Loss against step for several runs (``runs``: label -> sequence of losses)."""
    ax = _new_axes(ax)
    styles = ["-", "--", ":", "-."]
    for i, (label, losses) in enumerate(runs.items()):
        ax.plot(range(len(losses)), list(losses), label=label, color=PALETTE[i % len(PALETTE)],
                linestyle=styles[i % len(styles)], linewidth=2)  # fmt: skip
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy loss")
    ax.set_title(title)
    ax.legend()
    return ax


def magnitude_histogram(values, *, lines=None, ax=None, bins: int = 60,
                        title: str = "Magnitudes of activation gradients"):  # fmt: skip
    """Histograms of log2|x| of the non-zero entries (``values``: label -> 1-D array or tensor), with
    vertical lines at given magnitudes (``lines``: label -> value), e.g. fp16's smallest normal."""
    import numpy as np

    ax = _new_axes(ax)
    for i, (label, x) in enumerate(values.items()):
        x = np.asarray(x, dtype=np.float64)
        x = np.abs(x[x != 0])
        ax.hist(np.log2(x), bins=bins, alpha=0.55, label=label, color=PALETTE[i % len(PALETTE)])
    for j, (label, value) in enumerate((lines or {}).items()):
        ax.axvline(np.log2(value), color="black", linestyle=["--", ":", "-."][j % 3],
                   linewidth=1.2, label=label)  # fmt: skip
    ax.set_xlabel("log2 |value|")
    ax.set_ylabel("count")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def labelled_bars(labels, values, *, spreads=None, ax=None, ylabel: str = "", title: str = "",
                  log: bool = False, fmt=None):  # fmt: skip
    """One bar per label with its value written on top (``fmt(value)``), optional error bars
    (``spreads``, e.g. interquartile ranges), optionally on a log axis."""
    labels, values = list(labels), list(values)
    ax = _new_axes(ax)
    colours = [PALETTE[i % len(PALETTE)] for i in range(len(labels))]
    bars = ax.bar(range(len(labels)), values, color=colours,
                  yerr=None if spreads is None else list(spreads), capsize=4)  # fmt: skip
    for bar, v in zip(bars, values, strict=True):
        ax.annotate((fmt or "{:.3g}".format)(v), (bar.get_x() + bar.get_width() / 2, v),
                    ha="center", va="bottom", fontsize=9, xytext=(0, 2),
                    textcoords="offset points")  # fmt: skip
    ax.set_xticks(range(len(labels)), labels)
    if log:
        ax.set_yscale("log")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    return ax


def breakeven_vs_utilization(
    utilizations: Sequence[float],
    series: Mapping[str, Sequence[float]],
    *,
    band: tuple[float, float] | None = None,
    cap_months: float = 120,
    ax=None,
    title: str = "Months until buying beats renting",
):
    """Break-even months (y, capped at ``cap_months``; ``inf`` = never) against utilisation (x, a
    fraction shown in percent), one line per rent option; ``band`` shades a claimed range."""
    ax = _axes(ax)
    xs = [100 * u for u in utilizations]
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
    ax = _axes(ax)
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
    ax = _axes(ax)
    ax.plot([t / 3600 for t in intervals_seconds], [100 * o for o in overheads], color=PALETTE[0],
            lw=2)  # fmt: skip
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


def _bytes_axis(axis) -> None:
    axis.set_major_formatter(FuncFormatter(lambda v, _: units.fmt_bytes(v, digits=0)))


def stacked_bytes(labels, parts: Mapping[str, Sequence[float]], *, lines=None, ax=None,
                  title: str = "", ylabel: str = "memory (GB = 1e9 bytes)", rotate: int = 0):  # fmt: skip
    """One stacked bar per label: ``parts`` maps a component name ("weights", "KV cache") to one
    byte count per label. ``lines`` maps a name to a byte count drawn as a dashed horizontal line
    (a GPU's memory). Used by lesson 04 for inference and training memory and for estimate vs
    measurement."""
    labels = list(labels)
    ax = _new_axes(ax)
    bottom = [0.0] * len(labels)
    for i, (name, values) in enumerate(parts.items()):
        values = list(values)
        if len(values) != len(labels):
            raise ValueError(f"parts[{name!r}] must have {len(labels)} values, got {len(values)}")
        ax.bar(range(len(labels)), values, bottom=bottom, label=name,
               color=PALETTE[i % len(PALETTE)])  # fmt: skip
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    for j, (name, value) in enumerate((lines or {}).items()):
        ax.axhline(value, linestyle="--", linewidth=1.2, color="0.25")
        ax.annotate(name, (len(labels) - 0.5, value), ha="right", va="bottom", fontsize=8,
                    xytext=(0, 2 + 10 * (j % 2)), textcoords="offset points")  # fmt: skip
    ax.set_xticks(range(len(labels)), labels, rotation=rotate, ha="right" if rotate else "center")
    _bytes_axis(ax.yaxis)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def bytes_vs_tokens(series: Mapping[str, tuple[Sequence[float], Sequence[float]]], *, lines=None,
                    ax=None, title: str = "", xlabel: str = "context length (tokens)"):  # fmt: skip
    """Lines of bytes against a token count (``series``: name -> (tokens, bytes)), log-log, with
    optional dotted reference levels (``lines``: name -> bytes). Lesson 04's KV-cache growth."""
    ax = _new_axes(ax)
    for i, (name, (xs, ys)) in enumerate(series.items()):
        ax.plot(list(xs), list(ys), "-" if i % 2 == 0 else "--", marker="o", markersize=3,
                label=name, color=PALETTE[(i // 2) % len(PALETTE)])  # fmt: skip
    for name, value in (lines or {}).items():
        ax.axhline(value, linestyle=":", linewidth=1.2, color="0.25")
        ax.annotate(name, (0.01, value), xycoords=("axes fraction", "data"), va="bottom",
                    fontsize=8, xytext=(0, 2), textcoords="offset points")  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    _bytes_axis(ax.yaxis)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("memory")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def power_trace(power: Mapping[str, Any], *, phases=("sustained_bf16_8192",), limit: float | None
                = None, boost_mhz: float | None = None, title: str = ""):  # fmt: skip
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
        top.annotate(f"power cap {limit:,.0f} W", (0.01, limit), xycoords=("axes fraction", "data"),
                     va="bottom", fontsize=8)  # fmt: skip
    if boost_mhz:
        bottom.axhline(boost_mhz, linestyle="--", color="0.25", linewidth=1)
        bottom.annotate(f"boost {boost_mhz:,.0f} MHz", (0.01, boost_mhz),
                        xycoords=("axes fraction", "data"), va="top", fontsize=8)  # fmt: skip
    top.set_ylabel("power (W)")
    bottom.set_ylabel("SM clock (MHz)")
    bottom.set_xlabel("time (s)")
    top.set_title(title)
    top.legend(fontsize=8)
    return top, bottom


def beside_reference(mine: Iterable[Any], theirs: Iterable[Any], *, x: str = "size",
                     y: str = "flop_per_s", series: str = "dtype", ax=None, title: str = "",
                     ylabel: str = "FLOP/s (log scale)"):  # fmt: skip
    """This machine's records beside a reference run's, one bar per (machine, ``series``) at each ``x``.

    ``theirs`` are dicts from ``course.facts.data.reference.records`` (they carry ``machine``); ``mine``
    are measured records, labelled "this machine".
    """
    rows = [dict(_row(r), machine="this machine") for r in mine] + [_row(r) for r in theirs]
    for r in rows:
        r["run"] = f"{r['machine']}: {r[series]}"
    return grouped_bars(rows, x=x, y=y, hue="run", ax=ax, title=title, ylabel=ylabel)


# ---------------------------------------------------------------------------------------------
# Lesson 06: distributed timelines and collectives
# ---------------------------------------------------------------------------------------------

_KIND_COLOURS = {"F": PALETTE[0], "B": PALETTE[1], "W": PALETTE[2], "backward": PALETTE[1],
                 "all-reduce": PALETTE[3]}  # fmt: skip
_KIND_NAMES = {"F": "forward", "B": "backward", "W": "weight gradient", "backward": "backward",
               "all-reduce": "bucket all-reduce"}  # fmt: skip


def _ms_axis(ax) -> None:
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{1e3 * v:g}"))
    ax.set_xlabel("time since the step started (ms)")


def pipeline_gantt(runs: Mapping[str, Sequence[Mapping]], *, bubbles: Mapping[str, float] = None,
                   title: str = "Measured pipeline schedules (2 CPU processes, gloo)"):  # fmt: skip
    """One Gantt panel per schedule: a row per rank, a box per micro-batch's forward (F) or
    backward (B), labelled with the micro-batch and (for interleaved schedules) the stage.
    ``runs`` maps a schedule name to the events of all ranks (``course.distributed.pipeline``);
    ``bubbles`` (name -> measured idle fraction, formula) goes in each panel's title."""
    if not runs:
        raise ValueError("runs must contain at least one schedule's events to plot")
    fig, axes = plt.subplots(len(runs), 1, figsize=(8, 1.5 + 1.3 * len(runs)), sharex=True,
                             squeeze=False)  # fmt: skip
    for ax, (name, events) in zip(axes[:, 0], runs.items(), strict=True):
        ranks = sorted({e["rank"] for e in events})
        multi = len({e["stage"] for e in events}) > len(ranks)
        for e in events:
            y = ranks.index(e["rank"])
            ax.barh(y, e["end"] - e["start"], left=e["start"], height=0.7,
                    color=_KIND_COLOURS[e["kind"]], edgecolor="white", linewidth=0.5)  # fmt: skip
            label = f"{e['microbatch']}" + (f"/s{e['stage']}" if multi else "")
            ax.text(e["start"] + (e["end"] - e["start"]) / 2, y, label, ha="center",
                    va="center", fontsize=7, color="white")  # fmt: skip
        ax.set_yticks(range(len(ranks)), [f"rank {r}" for r in ranks])
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
        extra = f" — {bubbles[name]}" if bubbles and name in bubbles else ""
        ax.set_title(f"{name}{extra}", fontsize=10, loc="left")
    handles = [Patch(color=_KIND_COLOURS[k], label=_KIND_NAMES[k]) for k in "FB"]
    axes[0, 0].legend(handles=handles, loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=8,
                      ncol=2)  # fmt: skip
    _ms_axis(axes[-1, 0])
    fig.suptitle(title, fontsize=12, fontweight="bold")
    fig.tight_layout()
    return axes[:, 0]


def ddp_timeline(events: Sequence[Mapping], *, ax=None,
                 title: str = "DDP: gradient buckets all-reduced during the backward pass"):  # fmt: skip
    """A row per rank for the backward pass and a row per gradient bucket's all-reduce
    (``course.distributed.ddp.ddp_timeline`` events of all ranks)."""
    rows = _rows(events)
    ax = _axes(ax)
    labels: list[str] = []
    for e in sorted(rows, key=lambda e: (e["rank"], e["kind"] != "backward", e["bucket"])):
        label = (f"rank {e['rank']} backward" if e["kind"] == "backward"
                 else f"rank {e['rank']} bucket {e['bucket']}")  # fmt: skip
        labels.append(label)
        ax.barh(len(labels) - 1, e["end"] - e["start"], left=e["start"], height=0.7,
                color=_KIND_COLOURS[e["kind"]])  # fmt: skip
    ax.set_yticks(range(len(labels)), labels, fontsize=8)
    ax.invert_yaxis()
    handles = [Patch(color=_KIND_COLOURS[k], label=_KIND_NAMES[k])
               for k in ("backward", "all-reduce")]  # fmt: skip
    ax.legend(handles=handles, fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    _ms_axis(ax)
    ax.set_title(title)
    return ax


def collective_times(records: Iterable[Any], *, fits: Mapping[str, Any] = None, ax=None,
                     title: str = "Collectives on this machine (gloo, loopback)"):  # fmt: skip
    """Median seconds against message bytes (log-log), a line per collective; ``fits`` (name ->
    an object with ``seconds(bytes)``, e.g. a lambda of the alpha-beta model) drawn dashed."""
    rows = _rows(records)
    ax = _axes(ax)
    names = list(dict.fromkeys(r["collective"] for r in rows))
    for i, name in enumerate(names):
        sel = sorted((r for r in rows if r["collective"] == name), key=lambda r: r["bytes"])
        xs = [r["bytes"] for r in sel]
        ax.plot(xs, [r["seconds"] for r in sel], marker="o", color=PALETTE[i % len(PALETTE)],
                label=name.replace("_", "-"))  # fmt: skip
        if fits and name in fits:
            ax.plot(xs, [fits[name](x) for x in xs], linestyle="--",
                    color=PALETTE[i % len(PALETTE)], label=f"{name.replace('_', '-')}: α-β fit")  # fmt: skip
    _log_log(ax, x_ticks=_prefix_formatter("B", binary=True),
             y_ticks=FuncFormatter(lambda v, _: units.fmt_seconds(v)),
             xlabel="message size (log scale)", ylabel="median seconds (log scale)", title=title)  # fmt: skip
    ax.legend(fontsize=8)
    return ax


# ---------------------------------------------------------------------------------------------
# Lesson 11: inside the GPU (profiler timeline, memory timeline, stride sweep, occupancy).
# ---------------------------------------------------------------------------------------------


def profile_timeline(events: Sequence[Mapping], *, ax=None,
                     title: str = "One training step, from the profiler's trace"):  # fmt: skip
    """A step's events (``course.measure.profiling.timeline_from_trace``): the top row the
    ``record_function`` phases (depth 0), the bottom row the operators they call (depth 1)."""
    rows = [r for r in _rows(events) if r["depth"] <= 1]
    ax = _axes(ax)
    phases = list(dict.fromkeys(r["name"] for r in rows if r["depth"] == 0))
    colour = {p: PALETTE[i % len(PALETTE)] for i, p in enumerate(phases)}
    for r in rows:
        ax.barh(1 - r["depth"], r["duration_us"] / 1e3, left=r["start_us"] / 1e3, height=0.6,
                color=colour.get(r["name"], "#888888"), edgecolor="white", linewidth=0.3)  # fmt: skip
    ax.set_yticks([0, 1], ["operators", "phases"])
    ax.set_xlabel("milliseconds since the step began")
    ax.legend(handles=[Patch(color=colour[p], label=p) for p in phases], fontsize=8,
              ncol=max(1, len(phases)), loc="upper center", bbox_to_anchor=(0.5, -0.2))  # fmt: skip
    ax.set_title(title)
    return ax


def memory_timeline(points: Sequence[Mapping], *, ax=None,
                    title: str = "Memory allocated during the profiled steps"):  # fmt: skip
    """Total bytes allocated against time (``course.measure.profiling.memory_from_trace``)."""
    rows = _rows(points)
    ax = _axes(ax)
    ax.step([r["time_us"] / 1e3 for r in rows], [r["allocated_bytes"] for r in rows], where="post")
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: units.fmt_bytes(v, digits=2)))
    ax.set_xlabel("milliseconds since profiling began")
    ax.set_ylabel("allocated")
    ax.set_title(title)
    return ax


def stride_sweep(records: Iterable[Any], *, ax=None,
                 title: str = "Strided reads: useful bandwidth against the prediction"):  # fmt: skip
    """Measured useful bandwidth per stride (relative to stride 1) beside the coalescing
    calculator's predicted efficiency (``course.measure.strides.StrideRecord``)."""
    rows = sorted(_rows(records), key=lambda r: r["stride_elements"])
    ax = _axes(ax)
    base = next((r["useful_bytes_per_s"] for r in rows if r["stride_elements"] == 1), None)
    xs = [r["stride_elements"] for r in rows]
    if base:
        ax.plot(xs, [r["useful_bytes_per_s"] / base for r in rows], marker="o",
                label="measured: useful bandwidth / stride 1")  # fmt: skip
    ax.plot(xs, [r["predicted_efficiency"] for r in rows], marker="s", linestyle="--",
            label="predicted: useful bytes per line fetched")  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("stride (float32 elements, log scale)")
    ax.set_ylabel("fraction of stride 1 (log scale)")
    ax.legend(fontsize=8)
    ax.set_title(title)
    return ax


def occupancy_curve(results: Iterable[Any], *, x: str = "registers_per_thread", ax=None,
                    title: str = "Occupancy against registers per thread"):  # fmt: skip
    """Occupancy (%) against ``x`` (a field of ``course.calculators.occupancy.Occupancy``), a line
    per block size, the limiting resource written at each change."""
    rows = _rows(results)
    ax = _axes(ax)
    for i, t in enumerate(sorted({r["threads_per_block"] for r in rows})):
        sel = sorted((r for r in rows if r["threads_per_block"] == t), key=lambda r: r[x])
        ax.plot([r[x] for r in sel], [100 * r["occupancy_fraction"] for r in sel],
                drawstyle="steps-post", color=PALETTE[i % len(PALETTE)], label=f"{t} threads/block")  # fmt: skip
    ax.set_xlabel(x.replace("_", " "))
    ax.set_ylabel("occupancy (% of max warps)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=8)
    ax.set_title(title)
    return ax
