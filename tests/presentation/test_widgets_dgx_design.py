"""Lesson 08's DGX design widget, driven as a learner would. Expected figures come from Brown et
al. 2020 and the DGX H100 User Guide, not from the widget."""

from __future__ import annotations

import pytest

from course.presentation.widgets import dgx_design_calculator


def test_dgx_design_defaults_and_a_tighter_deadline_moves_the_design():
    calc = dgx_design_calculator()
    d = calc.result
    assert calc.error is None
    flops = 6 * 174.6e9 * 300e9  # Brown et al. 2020: 3.14e23
    assert "314.3 ZFLOP" in repr(calc) and flops == pytest.approx(3.14e23, rel=0.01)
    assert d.systems == -(-d.gpus // 8)
    assert d.training_seconds <= 30 * 86_400  # the deadline is met
    calc.controls["days"].value = "10"
    faster = calc.result
    assert faster.gpus > d.gpus and faster.racks > d.racks
    assert faster.training_seconds <= 10 * 86_400
    calc.controls["system"].value = "dgx-a100-640gb"
    assert calc.result.gpus > faster.gpus  # 312 vs 989 TFLOP/s bf16


def test_dgx_design_shows_bad_inputs_in_red():
    calc = dgx_design_calculator()
    calc.controls["mfu"].value = "1.5"
    assert calc.error and "mfu" in calc.error.lower()
    calc.controls["mfu"].value = "0.4"
    calc.controls["pue"].value = "0.9"
    assert calc.error and "pue" in calc.error.lower()
    calc.controls["pue"].value = "1.2"
    calc.controls["dtype"].value = "fp8"
    calc.controls["system"].value = "dgx-a100-640gb"  # an A100 has no FP8: the menu follows
    assert "fp8" not in calc.controls["dtype"].options and calc.error is None
    assert calc.result.gpus > 0


def test_dgx_design_prices_the_systems_as_the_worked_answer_does():
    """Lesson 10, question 8 prices a DGX H100 at 8 x $35,000, the midpoint of *AI
    Infrastructure*'s "$30,000-$40,000" per H100; the widget opens on the same price, not $0."""
    calc = dgx_design_calculator()
    assert calc.controls["usd_per_system"].value == "280000"
    assert calc.result.hardware_usd == pytest.approx(280_000 * calc.result.systems)
    calc.controls["system"].value = "dgx-a100-640gb"  # not edited: follows the system
    assert calc.controls["usd_per_system"].value == "120000"  # 8 x "~$15,000"
    calc.controls["usd_per_system"].value = "5"
    calc.controls["system"].value = "dgx-h100"  # edited: kept
    assert calc.controls["usd_per_system"].value == "5"


def test_more_training_than_the_largest_superpod_names_the_boxes_to_change():
    """Found by sweeping every box to 1e15: the message named ``sus``, an internal count."""
    calc = dgx_design_calculator(tokens="1e15")
    assert calc.result is None
    assert "deadline (days)" in calc.error and "training tokens" in calc.error
