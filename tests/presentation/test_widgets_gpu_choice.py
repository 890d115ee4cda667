"""Lesson 10's A100-or-H100 widget (practice question 4), driven as a learner would. Expected
figures come from the Llama 2 paper and the A100/H100 datasheets, not from the widget."""

from __future__ import annotations

import pytest

from course.calculators import cloud
from course.presentation.widgets import a100_or_h100


def test_defaults_price_llama_2_7bs_training_at_the_recorded_lambda_prices():
    """Touvron et al. 2023, Table 2: 184,320 A100-80GB GPU-hours for Llama 2 7B (2T tokens)."""
    calc = a100_or_h100()
    r = calc.result
    assert calc.error is None
    a100 = cloud.instance("lambda-8x-a100-80gb-sxm").usd_per_gpu_hour
    h100 = cloud.instance("lambda-8x-h100-sxm").usd_per_gpu_hour
    assert r.gpus_a * r.seconds_a / 3600 == pytest.approx(184_320, rel=0.05)
    assert r.cost_a_usd == pytest.approx(r.gpus_a * r.seconds_a / 3600 * round(a100, 2))
    assert r.price_ratio == pytest.approx(round(h100, 2) / round(a100, 2))
    assert r.breakeven_price_ratio == pytest.approx(989.4 / 312, rel=1e-3)
    assert "H100" in r.pick and "wins while it costs less than 3.17x" in repr(calc)


def test_an_h100_priced_above_the_break_even_ratio_loses_to_the_a100():
    calc = a100_or_h100(price_a="2.00", price_b="7.00")  # 3.5x > 3.17x
    assert "A100" in calc.result.pick
    calc.controls["price_b"].value = "6.00"  # 3.0x < 3.17x
    assert "H100" in calc.result.pick


def test_serving_at_batch_1_is_decided_by_bandwidth():
    """A100 80GB 2,039 GB/s, H100 SXM 3,350 GB/s (datasheets): 1.64x at batch 1."""
    calc = a100_or_h100(workload="serving", tokens="1e9")
    assert calc.result.speedup == pytest.approx(3350 / 2039, rel=1e-3)


@pytest.mark.parametrize(
    ("control", "value", "message"),
    [
        ("tokens", "0", "tokens (trained or generated) must be >= 1"),
        ("tokens", "1e18", "tokens (trained or generated) is too many"),
        ("gpus", "0", "GPUs must be a whole number from 1"),
        ("price_b", "-2", "second GPU $/GPU-hour must be"),
        ("mfu", "1.5", "MFU (training) must be"),
        ("seq_len", "100000", "sequence length (tokens) must be a whole number from 1"),
        ("pue", "abc", "PUE must be a number"),
    ],
)
def test_bad_values_show_a_red_message_with_the_label_on_screen(control, value, message):
    calc = a100_or_h100()
    calc.controls[control].value = value
    assert calc.error is not None and message in calc.error, calc.error
    assert calc.result is None and "Traceback" not in calc.output.value
