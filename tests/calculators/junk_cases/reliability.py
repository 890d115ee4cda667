"""Junk-input cases for ``reliability``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import reliability

CASES: dict[str, tuple] = {
    "job_mtbf_seconds": (
        reliability.job_mtbf_seconds,
        {"components": 16_384, "component_mtbf_seconds": 1.8e8},
    ),
    "component_mtbf_seconds": (
        reliability.component_mtbf_seconds,
        {"interruptions": 419, "window_seconds": 4.67e6, "components": 16_384},
    ),
    "expected_interruptions": (
        reliability.expected_interruptions,
        {"run_seconds": 4.67e6, "mtbf_seconds": 11_000},
    ),
    "probability_no_failure": (
        reliability.probability_no_failure,
        {"run_seconds": 3600, "mtbf_seconds": 11_000},
    ),
    "young_interval_seconds": (
        reliability.young_interval_seconds,
        {"checkpoint_seconds": 30, "mtbf_seconds": 11_000},
    ),
    "daly_interval_seconds": (
        reliability.daly_interval_seconds,
        {"checkpoint_seconds": 30, "mtbf_seconds": 11_000},
    ),
    "expected_wall_clock_seconds": (
        reliability.expected_wall_clock_seconds,
        {
            "solve_seconds": 3.6e5,
            "interval_seconds": 900,
            "checkpoint_seconds": 30,
            "mtbf_seconds": 11_000,
            "restart_seconds": 300,
        },
    ),
    "goodput_fraction": (
        reliability.goodput_fraction,
        {
            "interval_seconds": 900,
            "checkpoint_seconds": 30,
            "mtbf_seconds": 11_000,
            "restart_seconds": 300,
        },
    ),
    "failure_plan": (
        reliability.failure_plan,
        {
            "work_seconds": 2.6e6,
            "components": 16_384,
            "component_mtbf_seconds": 1.8e8,
            "checkpoint_seconds": 30,
            "restart_seconds": 300,
            "interval_seconds": 900,
            "deadline_seconds": 3e6,
        },
    ),
    "checkpoint_bytes": (
        reliability.checkpoint_bytes,
        {
            "params": 7e9,
            "ranks": 8,
            "precision": "mixed",
            "optimizer": "adam",
            "rng_bytes_per_rank": 5056,
            "dataloader_bytes_per_rank": 8,
            "bandwidth_bytes_per_s": 1e9,
        },
    ),
    "write_seconds": (
        reliability.write_seconds,
        {"total_bytes": 1e11, "bandwidth_bytes_per_s": 1e9},
    ),
    "checkpoint_args": (
        reliability.checkpoint_args,
        {"checkpoint_seconds": 60.0, "mtbf_seconds": 3600.0},
    ),
}
