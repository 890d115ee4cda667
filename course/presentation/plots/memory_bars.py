"""Plots of memory: stacked bytes by part, bytes against tokens (lessons 04, 07)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from course.presentation.plots.style import (
    PALETTE,
    bytes_axis,
    new_axes,
)


def stacked_bytes(
    labels,
    parts: Mapping[str, Sequence[float]],
    *,
    lines=None,
    ax=None,
    title: str = "",
    ylabel: str = "memory (GB = 1e9 bytes)",
    rotate: int = 0,
):
    """One stacked bar per label: ``parts`` maps a component name ("weights", "KV cache") to one
    byte count per label. ``lines`` maps a name to a byte count drawn as a dashed horizontal line
    (a GPU's memory). Used by lesson 04 for inference and training memory and for estimate vs
    measurement."""
    labels = list(labels)
    ax = new_axes(ax)
    bottom = [0.0] * len(labels)
    for i, (name, values) in enumerate(parts.items()):
        values = list(values)
        if len(values) != len(labels):
            raise ValueError(f"parts[{name!r}] must have {len(labels)} values, got {len(values)}")
        ax.bar(
            range(len(labels)), values, bottom=bottom, label=name, color=PALETTE[i % len(PALETTE)]
        )
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    for j, (name, value) in enumerate((lines or {}).items()):
        ax.axhline(value, linestyle="--", linewidth=1.2, color="0.25")
        ax.annotate(
            name,
            (len(labels) - 0.5, value),
            ha="right",
            va="bottom",
            fontsize=8,
            xytext=(0, 2 + 10 * (j % 2)),
            textcoords="offset points",
        )
    ax.set_xticks(range(len(labels)), labels, rotation=rotate, ha="right" if rotate else "center")
    bytes_axis(ax.yaxis)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


def bytes_vs_tokens(
    series: Mapping[str, tuple[Sequence[float], Sequence[float]]],
    *,
    lines=None,
    ax=None,
    title: str = "",
    xlabel: str = "context length (tokens)",
):
    """Lines of bytes against a token count (``series``: name -> (tokens, bytes)), log-log, with
    optional dotted reference levels (``lines``: name -> bytes). Lesson 04's KV-cache growth."""
    ax = new_axes(ax)
    for i, (name, (xs, ys)) in enumerate(series.items()):
        ax.plot(
            list(xs),
            list(ys),
            "-" if i % 2 == 0 else "--",
            marker="o",
            markersize=3,
            label=name,
            color=PALETTE[(i // 2) % len(PALETTE)],
        )
    for name, value in (lines or {}).items():
        ax.axhline(value, linestyle=":", linewidth=1.2, color="0.25")
        ax.annotate(
            name,
            (0.01, value),
            xycoords=("axes fraction", "data"),
            va="bottom",
            fontsize=8,
            xytext=(0, 2),
            textcoords="offset points",
        )
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    bytes_axis(ax.yaxis)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("memory")
    ax.set_title(title)
    ax.legend(fontsize=8)
    return ax


__all__ = ["stacked_bytes", "bytes_vs_tokens"]
