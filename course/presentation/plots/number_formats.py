"""Plots of number formats and precision: bit layouts, ranges, sums, loss curves (lesson 03)."""

from __future__ import annotations

from course.presentation.plots.style import (
    PALETTE,
    new_axes,
)


def bit_layouts(formats, *, ax=None, title: str = "Where the bits go: sign, exponent, mantissa"):
    """One row per float format: a box per bit, coloured by field (sign, exponent, mantissa); bits a
    format occupies in memory but does not use (TF32 inside fp32 storage) are hatched grey.

    ``formats``: objects with ``key``, ``sign_bits``, ``exponent_bits``, ``mantissa_bits`` and
    ``storage_bits`` (``course.facts.dtypes.FloatFormat``).
    """
    formats = list(formats)
    ax = new_axes(ax, figsize=(8.0, 0.45 * len(formats) + 1.2))
    fields = [("sign", PALETTE[3]), ("exponent", PALETTE[0]), ("mantissa", PALETTE[1])]
    for row, f in enumerate(reversed(formats)):
        start = 0
        for (name, colour), width in zip(
            fields, (f.sign_bits, f.exponent_bits, f.mantissa_bits), strict=True
        ):
            if width:
                ax.barh(
                    row,
                    width,
                    left=start,
                    color=colour,
                    edgecolor="white",
                    height=0.7,
                    label=name if row == 0 else None,
                )
                ax.text(
                    start + width / 2,
                    row,
                    str(width),
                    ha="center",
                    va="center",
                    color="white",
                    fontsize=9,
                    fontweight="bold",
                )
            start += width
        unused = (f.storage_bits or start) - start
        if unused:
            ax.barh(
                row,
                unused,
                left=start,
                color="#dddddd",
                hatch="//",
                edgecolor="white",
                height=0.7,
                label="stored, unused",
            )
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
    ax = new_axes(ax, figsize=(8.0, 0.45 * len(formats) + 1.2))
    for row, f in enumerate(reversed(formats)):
        ax.barh(
            row,
            f.smallest_normal - f.smallest_subnormal,
            left=f.smallest_subnormal,
            color=PALETTE[5],
            height=0.6,
            label="subnormal" if row == 0 else None,
        )
        ax.barh(
            row,
            f.max - f.smallest_normal,
            left=f.smallest_normal,
            color=PALETTE[0],
            height=0.6,
            label="normal" if row == 0 else None,
        )
    ax.set_xscale("log")
    ax.set_xlim(min(f.smallest_subnormal for f in formats) / 10, max(f.max for f in formats) * 10)
    ax.set_yticks(range(len(formats)), [f.key for f in reversed(formats)])
    ax.axvline(1.0, color="black", linewidth=0.8)
    ax.set_xlabel("magnitude (log scale); the line marks 1")
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize=8)
    return ax


def running_sums(
    series,
    *,
    addend: float,
    every: int,
    ax=None,
    title: str = "Adding the same small number, one addition at a time",
):
    """Partial sums (``series``: label -> sequence, every ``every``-th addition) against the exact
    line ``addend * additions``."""
    ax = new_axes(ax)
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
    ax = new_axes(ax)
    styles = ["-", "--", ":", "-."]
    for i, (label, losses) in enumerate(runs.items()):
        ax.plot(
            range(len(losses)),
            list(losses),
            label=label,
            color=PALETTE[i % len(PALETTE)],
            linestyle=styles[i % len(styles)],
            linewidth=2,
        )
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy loss")
    ax.set_title(title)
    ax.legend()
    return ax


def magnitude_histogram(
    values,
    *,
    lines=None,
    ax=None,
    bins: int = 60,
    title: str = "Magnitudes of activation gradients",
):
    """Histograms of log2|x| of the non-zero entries (``values``: label -> 1-D array or tensor),
    with vertical lines at given magnitudes (``lines``: label -> value), e.g. fp16's smallest
    normal."""
    import numpy as np

    ax = new_axes(ax)
    for i, (label, x) in enumerate(values.items()):
        x = np.asarray(x, dtype=np.float64)
        x = np.abs(x[x != 0])
        ax.hist(np.log2(x), bins=bins, alpha=0.55, label=label, color=PALETTE[i % len(PALETTE)])
    for j, (label, value) in enumerate((lines or {}).items()):
        ax.axvline(
            np.log2(value),
            color="black",
            linestyle=["--", ":", "-."][j % 3],
            linewidth=1.2,
            label=label,
        )
    ax.set_xlabel("log2 |value|")
    ax.set_ylabel("count")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


__all__ = ["bit_layouts", "format_ranges", "running_sums", "loss_curves", "magnitude_histogram"]
