"""Lesson 11's occupancy widget: it shows the calculator's answer, and bad input as a message
naming the on-screen label (never a traceback)."""

from __future__ import annotations

import pytest

from course.presentation import widgets


def test_default_shows_the_limiting_resource():
    calc = widgets.occupancy_calculator()
    assert calc.error is None
    # 256 threads x 64 registers on 9.0: 64K / (64 x 32) = 32 warps = 4 blocks, 50 %, registers.
    assert "<b>4</b> blocks" in calc.output.value and "50 %" in calc.output.value
    assert "limited by <b>registers</b>" in calc.output.value


def test_best_practices_case_through_the_widget():
    # CUDA C++ Best Practices Guide: 7.0, 128 threads, 37 registers -> 12 blocks, 75 %.
    calc = widgets.occupancy_calculator(cc="7.0", threads="128", registers="37")
    assert "<b>12</b> blocks" in calc.output.value and "75 %" in calc.output.value


@pytest.mark.parametrize(
    "name, value, label",
    [
        ("threads", "", "threads per block must be a whole number"),
        ("threads", "nan", "threads per block must be a whole number"),
        ("registers", "inf", "registers per thread must be a whole number"),
        ("threads", "1e30", "threads per block must be an integer"),
        ("shared_memory", "-1", "shared memory per block (bytes) must be an integer"),
        ("shared_memory", "1e12", "shared memory per block (bytes) must be an integer"),
        ("registers", "2.5", "registers per thread must be a whole number"),
        ("registers", "255", "cannot launch"),
    ],
)
def test_bad_input_is_a_message_naming_the_label(name, value, label):
    calc = widgets.occupancy_calculator(threads="1024" if label == "cannot launch" else "256")
    calc.controls[name].value = value
    assert calc.error is not None and label in calc.error, calc.error
    assert widgets.ERROR_COLOUR in calc.output.value and "Traceback" not in calc.output.value
    calc.controls[name].value = "32"
    assert calc.error is None


def test_compute_capability_changes_the_answer():
    calc = widgets.occupancy_calculator(threads="32", registers="16")
    calc.controls["cc"].value = "8.6"  # 16 blocks per SM at most on 8.6
    assert "<b>16</b> blocks" in calc.output.value
