"""Lesson 02's decode-speed calculator, driven as a learner would: set values, read the output.

Expected numbers are derived from datasheet figures in course/facts/hardware/ (cited there), never
typed from the widget's own output.
"""

from __future__ import annotations

import math

import pytest

from course.calculators import compute
from course.facts.hardware import gpu
from course.facts.models import PRESETS
from course.presentation import widgets


def test_decode_calculator_corrects_seed_000_13b_at_900_gbs():
    # Seed 000: "~15 ms to load a 13B FP16 model at 900 GB/s"; 26e9 bytes / 900e9 B/s = 28.9 ms.
    calc = widgets.decode_speed_calculator(model="llama-2-13b", dtype="fp16", gpu="v100-sxm2-32gb")
    n = PRESETS["llama-2-13b"].params
    expected_ms = n * 2 / gpu("v100-sxm2-32gb").memory_bandwidth_bytes_per_s * 1e3
    assert math.isclose(expected_ms, 28.9, rel_tol=0.02)
    assert f"{expected_ms:.3g} ms" in repr(calc)
    assert "memory-bound" in repr(calc)


def test_decode_calculator_batch_raises_total_but_never_per_sequence_speed():
    calc = widgets.decode_speed_calculator(model="llama-2-7b", dtype="bf16", gpu="h100-sxm")
    previous_total, previous_each = 0.0, math.inf
    for batch in (1, 8, 64, 512, 4096):
        calc.controls["batch"].value = str(batch)
        step = compute.decode_step(PRESETS["llama-2-7b"].params, "bf16", "h100-sxm", batch)
        assert f"{step.tokens_per_s:,.0f} tokens/s in all" in repr(calc)
        assert step.tokens_per_s >= previous_total
        assert step.tokens_per_s / batch <= previous_each
        previous_total, previous_each = step.tokens_per_s, step.tokens_per_s / batch
    assert "compute-bound" in repr(calc)  # 4096 is past the ridge (~295 on an H100)


def test_decode_calculator_warns_when_the_weights_do_not_fit():
    calc = widgets.decode_speed_calculator(model="llama-2-70b", dtype="fp16", gpu="a100-80gb-sxm")
    assert "do not fit" in repr(calc)
    calc.controls["dtype"].value = "int4"  # 35 GB fits 80 GB
    assert "do not fit" not in repr(calc)


@pytest.mark.parametrize("batch", [0, -3])
def test_decode_calculator_shows_a_bad_batch_in_red(batch):
    calc = widgets.decode_speed_calculator()
    calc.controls["batch"].value = str(batch)
    assert calc.error is not None and "batch must be a whole number from 1 to" in calc.error


@pytest.mark.parametrize("typed", ["2.5", "1e-3", "two", ""])
def test_decode_calculator_refuses_a_batch_that_is_not_a_whole_number(typed):
    """The batch box is a text box parsed as a whole number: '2.5' is refused, never read as 25."""
    calc = widgets.decode_speed_calculator(model="llama-2-7b", dtype="bf16", gpu="h100-sxm")
    calc.controls["batch"].value = typed
    assert calc.error is not None and calc.error.startswith("batch must be")
    calc.controls["batch"].value = "2,048"  # separators are fine
    assert calc.error is None and "batch 2048" in repr(calc).replace(",", "")
