"""Lesson 10's POD power-cost widget (practice question 10), driven as a learner would. Expected
figures come from the DGX H100/H200 User Guide (10.2 kW per system) and the DGX A100 datasheet
(6.5 kW), worked out here, never read back from the widget."""

from __future__ import annotations

import pytest

from course.presentation.widgets import pod_power_calculator


def test_defaults_answer_question_10_in_both_readings():
    """32 GPUs = 4 DGX H100: 4 x 10.2 kW x 8,760 h x $0.10 = $35,741; 32 systems: $285,926
    (*AI Infrastructure* answers "$288,000/year")."""
    calc = pod_power_calculator()
    r = calc.result
    assert calc.error is None
    assert (r.as_gpus.systems, r.as_gpus.gpus) == (4, 32)
    assert r.as_gpus.cost_per_year_usd == pytest.approx(4 * 10.2 * 8_760 * 0.10)
    assert (r.as_systems.systems, r.as_systems.gpus) == (32, 256)
    assert r.as_systems.cost_per_year_usd == pytest.approx(32 * 10.2 * 8_760 * 0.10)
    text = repr(calc)
    assert "$35,741 a year" in text and "$285,926 a year" in text


def test_utilisation_pue_and_price_scale_the_bill():
    calc = pod_power_calculator(utilisation="70", pue="1.58", usd_per_kwh="0.15")
    expected = 4 * 10.2 * 8_760 * 0.7 * 1.58 * 0.15
    assert calc.result.as_gpus.cost_per_year_usd == pytest.approx(expected)


def test_the_power_box_follows_the_system_until_it_is_edited():
    calc = pod_power_calculator()
    assert calc.controls["power"].value == "10200"
    calc.controls["system"].value = "dgx-a100-640gb"
    assert calc.controls["power"].value == "6500"
    assert calc.result.as_gpus.cost_per_year_usd == pytest.approx(4 * 6.5 * 8_760 * 0.10)
    calc.controls["power"].value = "8000"  # edited: kept
    calc.controls["system"].value = "dgx-h100"
    assert calc.controls["power"].value == "8000"


@pytest.mark.parametrize(
    ("control", "value", "message"),
    [
        ("pod_size", "0", "POD size (GPUs, or systems) must be a whole number from 1"),
        ("pod_size", "2.5", "POD size (GPUs, or systems) must be a whole number"),
        ("power", "-1", "power per system (W) must be"),
        ("utilisation", "150", "average draw (% of maximum) must be"),
        ("pue", "0.9", "PUE must be >= 1"),
        ("usd_per_kwh", "", "electricity ($/kWh) must be a number"),
    ],
)
def test_bad_values_show_a_red_message_with_the_label_on_screen(control, value, message):
    calc = pod_power_calculator()
    calc.controls[control].value = value
    assert calc.error is not None and message in calc.error, calc.error
    assert calc.result is None and "Traceback" not in calc.output.value
