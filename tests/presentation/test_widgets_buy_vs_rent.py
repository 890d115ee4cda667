"""The buy-vs-rent widget (course.presentation.widgets.buy_vs_rent), driven as a learner would:
set values, read the output. Expected figures are worked out here from the inputs
(purchase + energy + hosting + staff against hours x rate), not read back from the calculator."""

from __future__ import annotations

import re

import pytest

from course.calculators import cloud
from course.facts import hardware
from course.presentation.widgets import buy_vs_rent_calculator


def months(text: str, against: str) -> str:
    match = re.search(rf"against {against}: ([^;.]+(?:\.\d)?[^;.]*)", text)
    assert match, text
    return match.group(1).strip()


def test_defaults_answer_question_9_a_dgx_h100_against_a_p5_training_continuously():
    calc = buy_vs_rent_calculator()
    text = repr(calc)
    assert calc.error is None
    dgx = hardware.SYSTEMS["dgx-h100"]
    purchase = 8 * 35_000  # seed 003: H100 "Purchase: ~$30,000-$40,000", midpoint, x 8
    rate = cloud.instance("aws-p5.48xlarge").usd_per_hour
    own_month = 730 * dgx.max_power_watts / 1000 * 1.5 * 0.10
    expected = purchase / (730 * rate - own_month)
    assert months(text, "on-demand") == f"{expected:,.1f} months"
    assert "cheapest option is buy" in text
    assert f"recorded {cloud.instance('aws-p5.48xlarge').as_of}" in text


def test_low_utilisation_and_staff_make_renting_cheaper_and_the_bars_show_each_part():
    calc = buy_vs_rent_calculator(
        utilisation="10", staff="150000", hosting="20000", reserved="39.33", spot="27"
    )
    text = repr(calc)
    assert "cheapest option is buy" not in text
    out = calc.output.value
    for title in (
        "own: purchase",
        "own: electricity",
        "own: hosting",
        "own: staff",
        "on-demand: rent",
        "reserved: rent",
        "spot: rent",
    ):
        assert f'title="{title}"' in out
    assert months(text, "reserved") != "-"


def test_choosing_an_instance_fills_in_the_price_of_as_many_gpus_as_are_bought():
    calc = buy_vs_rent_calculator()
    calc.controls["instance"].value = "lambda-8x-h100-sxm"
    assert calc.controls["on_demand"].value == "31.92"
    assert calc.error is None and "recorded 2026-09-20" in repr(calc)
    one_gpu = cloud.instance("runpod-h100-sxm")
    assert one_gpu.gpus == 1
    calc.controls["instance"].value = "runpod-h100-sxm"  # 8 of them match one DGX H100
    assert float(calc.controls["on_demand"].value) == pytest.approx(8 * one_gpu.usd_per_hour)
    assert "Owning 8 GPUs against renting 8 x" in repr(calc)
    assert calc.result.rented.gpus_rented == calc.result.rented.gpus_owned == 8
    calc.controls["gpus"].value = "16"
    assert float(calc.controls["on_demand"].value) == pytest.approx(16 * one_gpu.usd_per_hour)


def test_the_menu_offers_only_instances_with_a_recorded_price():
    options = [key for _, key in buy_vs_rent_calculator().controls["instance"].options]
    assert "gcp-a3-highgpu-8g" not in options  # no sourced price
    assert options and all(cloud.instance(k).usd_per_hour is not None for k in options)


@pytest.mark.parametrize(
    ("control", "value", "message"),
    [
        ("utilisation", "0", "utilisation % must be >= 0.0001 and <= 100, got 0"),
        ("utilisation", "150", "utilisation % must be >= 0.0001 and <= 100"),
        ("pue", "0.5", "PUE must be >= 1"),
        ("purchase", "lots", "purchase $ must be a number"),
        ("years", "0", "lifetime (years) must be >= 0.01"),
        ("spot_overhead", "-5", "spot overhead % must be >= 0"),
    ],
)
def test_bad_values_show_a_red_message_with_the_label_on_screen(control, value, message):
    calc = buy_vs_rent_calculator()
    calc.controls[control].value = value
    assert calc.error is not None and message in calc.error
    assert "Traceback" not in calc.output.value


def _lesson_10_cells(*needles: str) -> list[str]:
    """The sources of lesson 10's code cells that contain each of ``needles``, in that order."""
    import json
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "notebooks" / "10_practice_questions.ipynb"
    cells = [
        "".join(c["source"])
        for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
        if c["cell_type"] == "code"
    ]
    return [next(s for s in cells if needle in s) for needle in needles]


def test_lesson_10s_widget_gives_the_verdict_of_the_table_above_it_at_every_utilisation():
    """Issue 45: question 9's widget was opened without the reserved and spot prices, so it said
    "cheapest: buy" under a table that finds spot cheapest at 50 % busy. The lesson's own cells are
    run here: the table's inputs, then the widget as the lesson opens it, at each busy fraction."""
    setup, table, widget = _lesson_10_cells(
        "plots.use_style()", "cloud.own_vs_rent(**startup", "widgets.buy_vs_rent_calculator("
    )
    namespace: dict = {}
    exec(setup, namespace)
    exec(table, namespace)
    calc = eval(widget.strip(), namespace)
    assert calc.error is None, calc.error
    verdicts = set()
    for busy in (1.0, 0.9, 0.5):
        expected = cloud.own_vs_rent(**namespace["startup"], utilisation=busy)
        calc.controls["utilisation"].value = f"{100 * busy:g}"
        shown = calc.result.tco
        assert shown.cheapest == expected.cheapest, busy
        for against in ("on_demand", "reserved", "spot"):
            name = f"breakeven_months_{against}"
            assert getattr(shown, name) == pytest.approx(getattr(expected, name)), (busy, name)
        verdicts.add(shown.cheapest)
    assert verdicts == {"buy", "spot"}  # the table's answer changes with utilisation; so must this
