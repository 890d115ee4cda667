"""course.presentation.plots.number_formats: bit layouts and ranges drawn from the format table,
checked against IEEE 754-2008 and NVIDIA's TF32 (A100 whitepaper, 2020)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

from course.facts import dtypes  # noqa: E402
from course.presentation.plots import number_formats as plots  # noqa: E402


def _row_fields(ax, row: int) -> list[tuple[int, int]]:
    """(left, width) of each box in a row, left to right."""
    boxes = [p for p in ax.patches if round(p.get_y() + p.get_height() / 2) == row]
    return sorted((round(p.get_x()), round(p.get_width())) for p in boxes)


def test_bit_layouts_draw_sign_exponent_mantissa_and_the_unused_storage():
    keys = ["fp32", "tf32", "bf16", "fp16"]  # rows are drawn bottom-up: fp16 is row 0
    ax = plots.bit_layouts([dtypes.float_format(k) for k in keys])
    # IEEE 754 binary32 1/8/23, binary16 1/5/10; bfloat16 1/8/7; TF32 1/8/10 inside 32 bits.
    assert _row_fields(ax, 3) == [(0, 1), (1, 8), (9, 23)]
    assert _row_fields(ax, 2) == [(0, 1), (1, 8), (9, 10), (19, 13)]  # 13 bits stored, unused
    assert _row_fields(ax, 1) == [(0, 1), (1, 8), (9, 7)]
    assert _row_fields(ax, 0) == [(0, 1), (1, 5), (6, 10)]
    assert [t.get_text() for t in ax.get_yticklabels()] == keys[::-1]


def test_format_ranges_span_smallest_subnormal_to_max():
    fp16 = dtypes.float_format("fp16")
    ax = plots.format_ranges([fp16])
    sub, normal = ax.patches
    assert sub.get_x() == 2.0**-24 and normal.get_x() == 2.0**-14  # IEEE 754 binary16
    assert normal.get_x() + normal.get_width() == 65504.0
    assert ax.get_xscale() == "log"
