"""Lesson 02's roofline explorer, driven as a learner would: set values, read the output.

Expected numbers are derived from datasheet figures in course/facts/hardware/ (cited there), never
typed from the widget's own output.
"""

from __future__ import annotations

import pytest

from course.facts.hardware import gpu
from course.presentation import widgets


def test_roofline_explorer_defaults_are_a_memory_bound_matvec():
    calc = widgets.roofline_explorer()
    assert calc.error is None
    text = repr(calc)
    assert "memory-bound" in text
    # 2e9 bytes at 3.35 TB/s (H100 SXM datasheet) = 597 us
    assert "597 µs" in text


def test_roofline_explorer_follows_the_operation_to_the_compute_bound_side():
    calc = widgets.roofline_explorer()
    calc.controls["flops"].value = "1.374e11"  # a 4096^3 matmul: 2 x 4096^3 FLOPs
    calc.controls["bytes_moved"].value = str(3 * 4096**2 * 2)  # A, B, C once in bf16
    assert "compute-bound" in repr(calc)
    expected = 1.374e11 / gpu("h100-sxm").dense_flop_per_s["bf16"]  # 139 us
    assert f"{expected * 1e6:.3g} µs" in repr(calc)
    assert "100.0 %" in repr(calc)  # a compute-bound op can use the whole peak


def test_roofline_explorer_dtype_list_follows_the_gpu():
    calc = widgets.roofline_explorer()
    calc.controls["gpu"].value = "v100-sxm2-32gb"  # no bf16 on Volta
    assert "bf16" not in calc.controls["dtype"].options
    assert calc.controls["dtype"].value in gpu("v100-sxm2-32gb").dense_flop_per_s
    assert calc.error is None


@pytest.mark.parametrize(
    "name,value,message",
    [
        ("flops", "lots", "FLOPs must be a number"),
        ("bytes_moved", "-5", "bytes moved must be"),
        ("flops", "nan", "FLOPs must be a finite number"),
    ],
)
def test_roofline_explorer_shows_bad_values_in_red(name, value, message):
    calc = widgets.roofline_explorer()
    calc.controls[name].value = value
    assert calc.error is not None and message in calc.error
    assert widgets.ERROR_COLOUR in calc.output.value
    assert "Traceback" not in calc.output.value
    calc.controls[name].value = "1e9"  # and it recovers
    assert calc.error is None
