"""Junk-input cases for ``gpu_systems``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import gpu_systems
from junk_cases.presets import CFG

CASES: dict[str, tuple] = {
    "dgx_from_parts": (gpu_systems.dgx_from_parts, {"system": "dgx-h100"}),
    "superpod": (
        gpu_systems.superpod,
        {"sus": 4, "architecture": "dgx-superpod-h100", "watts_per_switch": 1000},
    ),
    "mig_layout": (
        gpu_systems.mig_layout,
        {"gpu": "h100-sxm", "profiles": ["3g.40gb", "2g.20gb"]},
    ),
    "mig_serving_fit": (
        gpu_systems.mig_serving_fit,
        {
            "model": CFG,
            "gpu": "h100-sxm",
            "dtype": "bf16",
            "seq_len": 1024,
            "batch": 2,
            "overhead_fraction": 0.1,
        },
    ),
    "gpu_job": (
        gpu_systems.gpu_job,
        {
            "model": CFG,
            "tokens": 1e10,
            "gpus": 8,
            "workload": "training",
            "dtype": "bf16",
            "gpu_a": "v100-sxm2-32gb",
            "gpu_b": "h100-sxm",
            "usd_per_gpu_hour_a": 2.0,
            "usd_per_gpu_hour_b": 4.0,
            "batch": 4,
            "seq_len": 1024,
            "mfu": 0.4,
            "pue": 1.2,
        },
    ),
    "choose_gpu": (
        gpu_systems.choose_gpu,
        {
            "model": CFG,
            "workload": "serving",
            "dtype": "fp8",
            "gpu_a": "a100-80gb-sxm",
            "gpu_b": "h100-sxm",
            "usd_per_gpu_hour_a": 2.0,
            "usd_per_gpu_hour_b": 4.0,
            "batch": 4,
            "seq_len": 1024,
            "mfu": 0.4,
            "budget_usd": 1000,
        },
    ),
}
