"""The roofline explorer of lesson 02: GPU, dtype, FLOPs and bytes -> bound, floor on time, share
of peak."""

from __future__ import annotations

import html
from typing import Any

from course.calculators import compute
from course.facts import hardware, units
from course.presentation.widgets.base import (
    Calculator,
    gpu_and_dependent,
    parse_number,
    text_box,
)


def roofline(v: dict[str, Any]) -> compute.Roofline:
    """The calculator's result for the widget's values ``v`` (errors name the on-screen labels)."""
    card = hardware.gpu(v["gpu"])
    flops = parse_number("FLOPs", v["flops"], minimum=0, maximum=compute.MAX_FLOPS)
    moved = parse_number(
        "bytes moved", v["bytes_moved"], minimum=0, maximum=compute.MAX_BYTES_MOVED
    )
    return compute.roofline_seconds(
        flops, moved, card.peak_flop_per_s(v["dtype"]), card.memory_bandwidth_bytes_per_s
    )


def _roofline_html(result: compute.Roofline, v: dict[str, Any]) -> str:
    card = hardware.gpu(v["gpu"])
    peak = card.peak_flop_per_s(v["dtype"])
    summary = (
        f"<p>On the {html.escape(card.name)} ({v['dtype']} dense peak "
        f"{units.fmt_flop_rate(peak)}, memory "
        f"{units.fmt_bandwidth(card.memory_bandwidth_bytes_per_s, digits=2)}) "
        f"this "
        f"operation is <b>{result.bound}-bound</b>: at least "
        f"<b>{units.fmt_seconds(result.seconds)}</b>, using at most "
        f"<b>{100 * result.peak_fraction:.1f} %</b> of the compute peak.</p>"
    )
    return summary + result._repr_html_()


def _dtypes_of(gpu: str) -> list[str]:
    """The dtypes the GPU's datasheet gives a dense peak for (each GPU has its own list)."""
    return list(hardware.gpu(gpu).dense_flop_per_s)


def roofline_explorer(
    gpu: str = "h100-sxm",
    dtype: str = "bf16",
    flops: str = "2e9",
    bytes_moved: str = "2e9",
) -> Calculator:
    """GPU, dtype, FLOPs and bytes of one operation -> bound, floor on time, share of peak.

    The defaults are a matrix-vector product with a 1e9-weight matrix in 16 bits: 2 FLOPs per
    2-byte weight, intensity 1 FLOP/byte, far below the H100's ridge of ~295.
    """
    gpu_box, dtype_box = gpu_and_dependent(gpu, "dtype", dtype, _dtypes_of)
    controls = {
        "gpu": gpu_box,
        "dtype": dtype_box,
        "flops": text_box("FLOPs", flops),
        "bytes_moved": text_box("bytes moved", bytes_moved),
    }
    return Calculator("Roofline explorer", controls, roofline, render=_roofline_html)
