"""Junk-input cases for ``cloud``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import cloud

CASES: dict[str, tuple] = {
    "breakeven_hours": (
        cloud.breakeven_hours,
        {
            "purchase_usd": 475_000,
            "rent_usd_per_hour": 98.32,
            "power_watts": 10_200,
            "usd_per_kwh": 0.1,
            "pue": 1.4,
            "other_usd_per_hour": 1.0,
        },
    ),
    "breakeven_months": (
        cloud.breakeven_months,
        {
            "purchase_usd": 475_000,
            "rent_usd_per_hour": 98.32,
            "utilisation": 0.5,
            "power_watts": 10_200,
            "usd_per_kwh": 0.1,
            "pue": 1.4,
            "other_usd_per_month": 500,
        },
    ),
    "instance": (cloud.instance, {"key": "aws-p5.48xlarge"}),
    "instance_gpu": (cloud.instance_gpu, {"key": "aws-p5.48xlarge"}),
    "rent_to_match": (cloud.rent_to_match, {"key": "runpod-h100-sxm", "gpus": 8}),
    "instances_table": (cloud.instances_table, {"provider": "AWS"}),
    "price_history": (cloud.price_history, {"key": "aws-p5.48xlarge", "kind": "on-demand"}),
    "price_change_fraction": (cloud.price_change_fraction, {"key": "aws-p5.48xlarge"}),
    "own_vs_rent": (
        cloud.own_vs_rent,
        {
            "purchase_usd": 400_000,
            "on_demand_usd_per_hour": 55.04,
            "reserved_usd_per_hour": 39.33,
            "spot_usd_per_hour": 27.0,
            "spot_overhead_fraction": 0.2,
            "lifetime_years": 3,
            "utilisation": 0.6,
            "power_watts": 10_200,
            "usd_per_kwh": 0.1,
            "pue": 1.4,
            "hosting_usd_per_year": 20_000,
            "staff_usd_per_year": 30_000,
        },
    ),
    "training_run_cost_on": (
        cloud.training_run_cost_on,
        {
            "key": "aws-p5.48xlarge",
            "params": 7e9,
            "tokens": 1e12,
            "instances": 4,
            "mfu": 0.4,
            "dtype": "bf16",
            "usd_per_hour": 50.0,
        },
    ),
    "usd_per_million_tokens": (
        cloud.usd_per_million_tokens,
        {"usd_per_hour": 55.04, "tokens_per_s": 3000},
    ),
    "serving_cost": (
        cloud.serving_cost,
        {
            "key": "aws-p5.48xlarge",
            "params": 7e9,
            "dtype": "bf16",
            "batch": 8,
            "efficiency": 0.5,
            "usd_per_hour": 50.0,
        },
    ),
    "young_interval_seconds": (
        cloud.young_interval_seconds,
        {"checkpoint_seconds": 300, "mtbf_seconds": 86_400},
    ),
    "daly_interval_seconds": (
        cloud.daly_interval_seconds,
        {"checkpoint_seconds": 300, "mtbf_seconds": 86_400},
    ),
    "expected_wall_clock_seconds": (
        cloud.expected_wall_clock_seconds,
        {
            "solve_seconds": 3.6e5,
            "interval_seconds": 3600,
            "checkpoint_seconds": 300,
            "mtbf_seconds": 21_600,
            "restart_seconds": 120,
        },
    ),
    "spot_training": (
        cloud.spot_training,
        {
            "solve_seconds": 3.6e5,
            "spot_usd_per_hour": 27.2,
            "on_demand_usd_per_hour": 63.3,
            "checkpoint_seconds": 300,
            "mtbf_seconds": 21_600,
            "restart_seconds": 120,
            "interval_seconds": 3000,
        },
    ),
}
