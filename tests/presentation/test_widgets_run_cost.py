"""The "How long and how much" widget (course.presentation.widgets.run_cost), driven as a learner
would. Expected figures are derived here from 6ND, the datasheet peak and TDP, and Llama 2's
Table 2."""

from __future__ import annotations

import pytest

from course.facts.data import published_runs
from course.facts.hardware import gpu
from course.facts.models import PRESETS
from course.presentation.widgets import ERROR_COLOUR, how_long_and_how_much
from course.presentation.widgets.run_cost import CUSTOM


def test_defaults_reproduce_llama2_7b_gpu_hours_within_3_percent():
    """Touvron et al. 2023, Table 2: 184,320 A100 GPU-hours for 7B on 2T tokens; at 40 % MFU the
    widget gives 6 x 6.74e9 x 2e12 / (312e12 x 0.4) / 3600 = 179,979."""
    calc = how_long_and_how_much()
    assert calc.error is None
    hours = calc.result.gpu_hours
    expected = 6 * PRESETS["llama-2-7b"].params * 2e12 / (312e12 * 0.4) / 3600
    assert hours == pytest.approx(expected, rel=1e-4)
    assert hours == pytest.approx(published_runs.run("llama-2-7b").gpu_hours, rel=0.03)
    assert calc.result.energy_joules / 3.6e6 == pytest.approx(hours * 400 * 1.1 / 1000, rel=1e-9)
    assert f"{hours:,.0f}" in repr(calc)  # and the page shows it


def test_custom_size_and_more_gpus_shorten_the_wall_clock_not_the_gpu_hours():
    calc = how_long_and_how_much()
    calc.controls["model"].value = CUSTOM
    calc.controls["params"].value = "70e9"
    before = calc.result
    calc.controls["n_gpus"].value = "2,048"
    after = calc.result
    assert after.gpu_hours == pytest.approx(before.gpu_hours, rel=1e-12)
    assert after.wall_clock_seconds == pytest.approx(before.wall_clock_seconds / 2, rel=1e-12)
    assert "days" in repr(calc) and "70.00B-parameter" in repr(calc)


def test_cost_bar_has_gpu_time_and_electricity_and_zero_prices_say_so():
    calc = how_long_and_how_much()
    out = calc.output.value
    assert 'title="GPU time"' in out and 'title="electricity"' in out
    calc.controls["usd_per_gpu_hour"].value = "0"
    calc.controls["usd_per_kwh"].value = "0"
    assert "Costs are zero" in repr(calc)


def test_inference_mode_gives_gpus_and_cost_per_million_tokens():
    calc = how_long_and_how_much(mode="inference", model="llama-2-70b", gpu="h100-sxm")
    text = repr(calc)
    assert calc.error is None
    assert "GPUs needed" in text and "cost per 1M output tokens" in text
    s = calc.result.serving
    assert s.gpus_per_replica == 2  # 140 GB of bf16 weights (+ KV cache) need two 80 GB GPUs
    calc.controls["requests_per_s"].value = "100"
    assert calc.result.serving.gpus > s.gpus


@pytest.mark.parametrize(
    ("control", "value", "message"),
    [
        ("mfu", "1.5", "MFU (0-1) must be > 0 and <= 1, got 1.5"),
        ("pue", "0.9", "PUE (>= 1) must be >= 1"),
        ("n_gpus", "2.5", "GPUs must be a whole number"),
        ("tokens", "lots", "training tokens must be a number"),
        ("grid_g_per_kwh", "-5", "grid intensity (gCO2/kWh) must be >= 0"),
    ],
)
def test_bad_input_is_shown_in_red_with_the_controls_label(control, value, message):
    calc = how_long_and_how_much()
    calc.controls[control].value = value
    assert calc.error is not None and message in calc.error
    assert ERROR_COLOUR in calc.output.value and "Traceback" not in calc.output.value


def test_inference_offers_only_decoders_and_training_a_custom_size_too():
    calc = how_long_and_how_much(mode="training")
    calc.controls["model"].value = CUSTOM
    calc.controls["mode"].value = "inference"  # a bare parameter count has no KV cache to serve
    assert CUSTOM not in calc.controls["model"].options and calc.error is None
    assert "bert-base" not in calc.controls["model"].options  # an encoder generates nothing
    calc.controls["mode"].value = "training"
    assert CUSTOM in calc.controls["model"].options
    calc = how_long_and_how_much(mode="inference")
    calc.controls["efficiency"].value = "0"
    calc.controls["model"].value = "llama-2-7b"
    assert "efficiency (0-1) must be > 0" in calc.error


def test_controls_grey_out_by_mode():
    calc = how_long_and_how_much()
    assert calc.controls["requests_per_s"].disabled and not calc.controls["mfu"].disabled
    calc.controls["mode"].value = "inference"
    assert calc.controls["mfu"].disabled and not calc.controls["requests_per_s"].disabled
    assert calc.controls["params"].disabled
    assert gpu(calc.controls["gpu"].value).tdp_watts == 400


def test_a_fleet_priced_over_a_million_dollars_an_hour_is_still_priced():
    """Found by test_widgets_base's random inputs: gpt-3-175b served at $15,152 per GPU-hour
    needs a fleet costing over $1M an hour, and that internal total must not be refused under a
    name that is not on screen. Each output token's price scales with the GPU-hour's."""
    calc = how_long_and_how_much(mode="inference", model="gpt-3-175b", usd_per_gpu_hour="2")
    cheap = calc.result
    calc.controls["usd_per_gpu_hour"].value = "15152"
    assert calc.error is None
    assert calc.result.serving.cost_per_hour_usd > 1e6
    assert calc.result.serving.usd_per_million_output_tokens == pytest.approx(
        cheap.serving.usd_per_million_output_tokens * 15152 / 2, rel=1e-9
    )


def test_a_request_rate_past_any_campus_names_the_box():
    """Found by sweeping every box: 1e8 requests/s named ``power_watts``, an internal quantity."""
    calc = how_long_and_how_much(mode="inference", requests_per_s="1e8")
    assert calc.result is None and calc.error.startswith("requests per second")
