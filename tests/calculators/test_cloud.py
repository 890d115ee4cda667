"""Cloud calculators: instances and their missing prices, buy vs rent (practice question 9 of
seed 003, seed 004's break-even table), cost per training run and per million tokens, spot
checkpointing (Young 1974, Daly 2006)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.calculators import cloud
from course.calculators.cloud import (
    HOURS_PER_MONTH,
    breakeven_hours,
    breakeven_months,
    instance,
)
from course.facts import hardware

FAST = settings(max_examples=50, deadline=None)


def test_missing_prices_stay_missing_and_say_why():
    inst = instance("gcp-a3-highgpu-8g")
    assert inst.usd_per_hour is None and inst.usd_per_gpu_hour is None
    assert inst.notes.startswith("No price")
    rows = {r["instance"]: r for r in cloud.instances_table()}
    assert rows["a3-highgpu-8g"]["price seen"] == "no source"
    assert rows["p5.48xlarge"]["$/GPU-h"] == pytest.approx(6.88)


# --------------------------------------------------------------------------------------------
# Break-even (seed 004) and buy vs rent
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("purchase", "hourly", "as_written_hours"),
    [(1600, 0.40, 4000), (15_000, 4.0, 3750), (150_000, 32.0, 4687.5)],
)
def test_seed_004_breakeven_table_without_running_costs(purchase, hourly, as_written_hours):
    """Seed 004's table (arithmetic ok, 4,000 / 3,750 / 4,688 h) ignores power."""
    assert breakeven_hours(purchase, hourly) == pytest.approx(as_written_hours)


def test_power_costs_push_breakeven_later():
    """A DGX H100 (10.2 kW) at $0.10/kWh and PUE 1.5 costs $1.53/h to run."""
    bare = breakeven_hours(475_000, 98.32)
    powered = breakeven_hours(475_000, 98.32, power_watts=10_200, usd_per_kwh=0.10, pue=1.5)
    assert powered == pytest.approx(475_000 / (98.32 - 1.53))
    assert powered > bare


def test_renting_cheaper_than_running_never_breaks_even():
    assert breakeven_hours(10_000, 1.0, power_watts=20_000, usd_per_kwh=0.1) == math.inf
    assert breakeven_months(10_000, 1.0, other_usd_per_month=1000) == math.inf


def test_breakeven_months_scale_with_utilisation():
    """Seed 003's "6-12 months" assumes near-continuous use: at 25 % it takes 4x as long."""
    full = breakeven_months(475_000, 98.32)
    assert full == pytest.approx(475_000 / (98.32 * HOURS_PER_MONTH))
    assert 6 < full < 7
    assert breakeven_months(475_000, 98.32, utilisation=0.25) == pytest.approx(4 * full)


def test_own_vs_rent_by_hand():
    """A $400k system, 60 % busy, 10.2 kW at PUE 1.4 and $0.10/kWh, $20k hosting + $30k staff a
    year, 3 years, against $55.04/h on demand, $39.33/h reserved, $27/h spot + 20 % overhead."""
    r = cloud.own_vs_rent(
        400_000,
        55.04,
        reserved_usd_per_hour=39.33,
        spot_usd_per_hour=27.0,
        spot_overhead_fraction=0.2,
        utilisation=0.6,
        power_watts=10_200,
        usd_per_kwh=0.10,
        pue=1.4,
        hosting_usd_per_year=20_000,
        staff_usd_per_year=30_000,
    )
    hours = 0.6 * 8760 * 3
    energy = hours * 10.2 * 1.4 * 0.10
    assert r.hours_used == pytest.approx(hours)
    assert r.electricity_usd == pytest.approx(energy)
    assert r.own_total_usd == pytest.approx(400_000 + energy + 150_000)
    assert sum(r.components()["own"].values()) == pytest.approx(r.own_total_usd)
    assert r.rent_on_demand_usd == pytest.approx(hours * 55.04)
    assert r.rent_reserved_usd == pytest.approx(39.33 * 8760 * 3)  # paid for every hour
    assert r.rent_spot_usd == pytest.approx(hours * 27.0 * 1.2)
    own_month = 0.6 * 730 * 10.2 * 1.4 * 0.10 + 50_000 / 12
    assert r.breakeven_months_on_demand == pytest.approx(400_000 / (0.6 * 730 * 55.04 - own_month))
    assert r.depreciation_per_year_usd == pytest.approx(400_000 / 3)
    assert r.cheapest == "spot"


@FAST
@given(
    u=st.floats(0.01, 1),
    du=st.floats(0.01, 1),
    hosting=st.floats(0, 1e6),
    price=st.floats(1e3, 1e7),
    rent=st.floats(0.5, 500),
)
def test_more_utilisation_never_lengthens_breakeven_with_fixed_costs(u, du, hosting, price, rent):
    low, high = sorted((u, du))
    kw = {"power_watts": 10_200, "usd_per_kwh": 0.1, "pue": 1.3, "hosting_usd_per_year": hosting}
    slow = cloud.own_vs_rent(price, rent, utilisation=low, **kw).breakeven_months_on_demand
    fast = cloud.own_vs_rent(price, rent, utilisation=high, **kw).breakeven_months_on_demand
    assert fast <= slow * (1 + 1e-12)


@FAST
@given(u=st.floats(0.01, 1), years=st.floats(0.5, 10))
def test_reservation_costs_the_same_however_little_it_is_used(u, years):
    a = cloud.own_vs_rent(1e5, 50, reserved_usd_per_hour=30, utilisation=u, lifetime_years=years)
    b = cloud.own_vs_rent(1e5, 50, reserved_usd_per_hour=30, utilisation=1.0, lifetime_years=years)
    assert a.rent_reserved_usd == pytest.approx(b.rent_reserved_usd)
    assert a.rent_on_demand_usd <= b.rent_on_demand_usd * (1 + 1e-12)


# --------------------------------------------------------------------------------------------
# Cost per unit of work
# --------------------------------------------------------------------------------------------


def test_training_run_cost_on_p5_is_6nd_over_peak_times_mfu_priced_per_gpu_hour():
    """7B params, 1T tokens, 4 x p5.48xlarge (32 H100), MFU 0.4, at the recorded $55.04/h."""
    run = cloud.training_run_cost_on("aws-p5.48xlarge", 7e9, 1e12, instances=4, mfu=0.4)
    peak = hardware.gpu("h100-sxm").dense_flop_per_s["bf16"]
    seconds = 6 * 7e9 * 1e12 / (32 * peak * 0.4)
    assert run.wall_clock_seconds == pytest.approx(seconds)
    assert run.rental_usd == pytest.approx(32 * seconds / 3600 * 55.04 / 8)
    cheaper = cloud.training_run_cost_on(
        "aws-p5.48xlarge", 7e9, 1e12, instances=4, usd_per_hour=27.52
    )
    assert cheaper.rental_usd == pytest.approx(run.rental_usd / 2)
    with pytest.raises(ValueError, match="usd_per_hour must be given"):
        cloud.training_run_cost_on("gcp-a3-highgpu-8g", 7e9, 1e12)


def test_cost_per_million_tokens_by_hand_and_from_the_roofline():
    assert cloud.usd_per_million_tokens(3.6, 1000) == pytest.approx(1.0)  # $3.6/h, 3.6M tokens/h
    card = hardware.gpu("h100-sxm")
    r = cloud.serving_cost("aws-p5.48xlarge", 7e9, batch=1)
    floor = (
        8 * card.memory_bandwidth_bytes_per_s / (2 * 7e9)
    )  # 8 GPUs, bf16 weights read once per token
    assert r.tokens_per_s == pytest.approx(floor)
    assert r.usd_per_million_tokens == pytest.approx(55.04 / (floor * 3600) * 1e6)
    half = cloud.serving_cost("aws-p5.48xlarge", 7e9, batch=1, efficiency=0.5)
    assert half.usd_per_million_tokens == pytest.approx(2 * r.usd_per_million_tokens)
    with pytest.raises(ValueError, match="do not fit"):
        cloud.serving_cost("runpod-h100-sxm", 70e9)


# --------------------------------------------------------------------------------------------
# Spot training: Young (1974) and Daly (2006)
# --------------------------------------------------------------------------------------------


def test_young_interval_worked_example():
    """sqrt(2 x 300 s x 86,400 s) = 7,200 s: a 5-minute checkpoint, one preemption a day -> 2 h."""
    assert cloud.young_interval_seconds(300, 86_400) == pytest.approx(7200)


def test_daly_interval_matches_his_series_and_tends_to_young():
    """Daly (2006), the higher-order estimate: sqrt(2dM)[1 + sqrt(d/2M)/3 + (d/2M)/9] - d, and M
    when d >= 2M."""
    d, m = 300.0, 86_400.0
    x = d / (2 * m)
    assert cloud.daly_interval_seconds(d, m) == pytest.approx(
        math.sqrt(2 * d * m) * (1 + math.sqrt(x) / 3 + x / 9) - d
    )
    assert cloud.daly_interval_seconds(10, 1e9) / cloud.young_interval_seconds(10, 1e9) == (
        pytest.approx(1, rel=1e-3)
    )
    assert cloud.daly_interval_seconds(500, 200) == 200


@pytest.mark.parametrize(
    ("mtbf_minutes", "paper_minutes", "places"), [(24 * 60, 117, 0), (6 * 60, 57, 0), (15, 9.1, 1)]
)
def test_daly_interval_reproduces_the_optimum_his_paper_reports(
    mtbf_minutes, paper_minutes, places
):
    """Daly (2006), captions of Figs. 3-5: delta = 5 min, R = 10 min, T_s = 500 h and M = 24 h,
    6 h, 15 min -> "the new model predicts tau_opt = 117 min", "57 min", "9.1 min"."""
    tau = cloud.daly_interval_seconds(5 * 60, mtbf_minutes * 60) / 60
    assert round(tau, places) == paper_minutes


@pytest.mark.parametrize(("d", "m"), [(60, 3600), (300, 6 * 3600), (300, 86_400), (600, 4000)])
def test_daly_interval_is_near_the_minimum_of_his_wall_clock_model(d, m):
    """The estimate should minimise Daly's expected wall clock T(tau) nearly as well as a fine
    numerical search over tau, and at least as well as Young's first-order interval."""

    def wall(tau):
        return cloud.expected_wall_clock_seconds(1e6, tau, d, m)

    grid = np.geomspace(d / 10, 10 * m, 20_000)
    best = min(wall(t) for t in grid)
    daly = wall(cloud.daly_interval_seconds(d, m))
    assert daly <= best * (1 + 1e-3)
    assert daly <= wall(cloud.young_interval_seconds(d, m)) * (1 + 1e-9)


def test_spot_run_overheads_add_up_and_spot_wins_when_cheap_enough():
    r = cloud.spot_training(100 * 3600, 27.2, 63.3, checkpoint_seconds=300, mtbf_seconds=6 * 3600)
    solve = 100 * 3600
    assert r.wall_clock_seconds == pytest.approx(
        solve + r.checkpointing_seconds + r.lost_and_restart_seconds
    )
    assert r.checkpointing_seconds == pytest.approx(solve / r.interval_seconds * 300)
    assert r.overhead_fraction == pytest.approx(r.wall_clock_seconds / solve - 1)
    assert r.on_demand_cost_usd == pytest.approx(100 * 63.3)
    assert r.cheaper == "spot"
    dear = cloud.spot_training(solve, 60, 63.3, checkpoint_seconds=300, mtbf_seconds=3600)
    assert dear.cheaper == "on-demand"


@FAST
@given(d=st.floats(1, 3600), m=st.floats(600, 1e7), more=st.floats(1, 1e6))
def test_rarer_preemptions_never_add_overhead(d, m, more):
    often = cloud.spot_training(1e6, 1, 2, checkpoint_seconds=d, mtbf_seconds=m)
    rarely = cloud.spot_training(1e6, 1, 2, checkpoint_seconds=d, mtbf_seconds=m + more)
    assert rarely.overhead_fraction <= often.overhead_fraction * (1 + 1e-9)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: breakeven_hours(-1, 10), "purchase_usd must be"),
        (lambda: breakeven_hours(1000, 0), "rent_usd_per_hour must be"),
        (lambda: breakeven_months(1000, 10, utilisation=0), "utilisation must be"),
        (lambda: instance("p5.48xlarge"), "instance must be one of"),
        (lambda: cloud.price_history("aws-p5.48xlarge", "monthly"), "kind must be one of"),
        (lambda: cloud.expected_wall_clock_seconds(1e6, 1e6, 10, 100), "never finish"),
        (lambda: cloud.own_vs_rent(1e5, 10, lifetime_years=0), "lifetime_years must be"),
    ],
)
def test_bad_inputs_raise_value_error_naming_the_parameter(call, message):
    with pytest.raises(ValueError, match=message):
        call()
