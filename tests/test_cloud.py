"""Cloud prices with dates, and buy-versus-rent break-even (practice question 9 of seed 003)."""

from __future__ import annotations

import math

import pytest

from course.cloud import (
    HOURS_PER_MONTH,
    INSTANCES,
    breakeven_hours,
    breakeven_months,
    buy_vs_rent,
    instance,
    instance_gpu,
)
from course.hardware import GPUS


def test_recorded_prices_are_the_launch_prices_with_dates():
    """FACTS.md: p4d.24xlarge $32.77/h at launch (Nov 2020), p5.48xlarge $98.32/h at launch
    (July 2023), cut by up to ~45 % in mid-2025."""
    p4d, p5 = instance("aws-p4d.24xlarge"), instance("aws-p5.48xlarge")
    assert (p4d.usd_per_hour, p4d.gpus, p4d.gpu) == (32.77, 8, "a100-40gb-sxm")
    assert (p5.usd_per_hour, p5.gpus, p5.gpu) == (98.32, 8, "h100-sxm")
    assert p5.usd_per_gpu_hour == pytest.approx(12.29)
    assert "2025" in p5.notes and "45%" in p5.notes


def test_every_instance_has_a_date_a_source_and_a_known_gpu():
    for inst in INSTANCES.values():
        assert inst.as_of and len(inst.source) > 20
        assert inst.gpu in GPUS
    assert instance_gpu("aws-p4d.24xlarge").memory_bytes == 40 * 2**30  # 40 GB A100s, not 80


@pytest.mark.parametrize(
    ("purchase", "hourly", "seed_hours"),
    [(1600, 0.40, 4000), (15_000, 4.0, 3750), (150_000, 32.0, 4687.5)],
)
def test_seed_004_breakeven_table_without_running_costs(purchase, hourly, seed_hours):
    """Seed 004's table (FACTS.md: arithmetic ok, 4,000 / 3,750 / 4,688 h) ignores power."""
    assert breakeven_hours(purchase, hourly) == pytest.approx(seed_hours)


def test_power_costs_push_breakeven_later():
    """A DGX H100 (10.2 kW) at $0.10/kWh and PUE 1.5 costs $1.53/h to run."""
    bare = breakeven_hours(475_000, 98.32)
    powered = breakeven_hours(475_000, 98.32, power_watts=10_200, usd_per_kwh=0.10, pue=1.5)
    assert powered == pytest.approx(475_000 / (98.32 - 1.53))
    assert powered > bare


def test_renting_cheaper_than_running_never_breaks_even():
    assert breakeven_hours(10_000, 1.0, power_watts=20_000, usd_per_kwh=0.1) == math.inf
    assert breakeven_months(10_000, 1.0, other_usd_per_month=1000) == math.inf


def test_breakeven_months_scale_with_utilization():
    """Seed 003's "6-12 months" assumes near-continuous use: at 25 % it takes 4x as long."""
    full = breakeven_months(475_000, 98.32)
    assert full == pytest.approx(475_000 / (98.32 * HOURS_PER_MONTH))
    assert 6 < full < 7
    assert breakeven_months(475_000, 98.32, utilization=0.25) == pytest.approx(4 * full)


def test_buy_vs_rent_totals_over_three_years():
    r = buy_vs_rent(475_000, 98.32, years=3, utilization=0.5, power_watts=10_200,
                    usd_per_kwh=0.10, pue=1.4)  # fmt: skip
    hours = 0.5 * 8760
    assert r.hours_used_per_year == pytest.approx(hours)
    assert r.rent_total_usd == pytest.approx(3 * hours * 98.32)
    assert r.own_total_usd == pytest.approx(475_000 + 3 * hours * 10.2 * 1.4 * 0.10)
    assert r.cheaper == "buy"
    assert buy_vs_rent(475_000, 98.32, years=1, utilization=0.1).cheaper == "rent"


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: breakeven_hours(-1, 10), "purchase_usd must be"),
        (lambda: breakeven_hours(1000, 0), "rent_usd_per_hour must be"),
        (lambda: breakeven_months(1000, 10, utilization=0), "utilization must be"),
        (lambda: instance("p5.48xlarge"), "instance must be one of"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()
