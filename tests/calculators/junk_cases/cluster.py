"""Junk-input cases for ``cluster``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import cluster
from junk_cases.presets import SMALL

CASES: dict[str, tuple] = {
    "cluster_for_model": (
        cluster.cluster_for_model,
        {
            "config": SMALL,
            "system": "dgx-a100-640gb",
            "seq_len": 1024,
            "micro_batch": 1,
            "tokens": 1e10,
            "days": 1.0,
            "dtype": "bf16",
            "mfu": 0.4,
            "recompute": "selective",
            "sequence_parallel": True,
            "zero_stage": 1,
            "precision": "mixed",
            "optimizer": "adam",
            "usable_fraction": 0.9,
            "usd_per_kwh": 0.1,
            "pue": 1.2,
        },
    ),
    "dgx_design": (
        cluster.dgx_design,
        {
            "config": SMALL,
            "tokens": 1e10,
            "days": 1.0,
            "system": "dgx-h100",
            "dtype": "bf16",
            "mfu": 0.4,
            "recompute": "selective",
            "seq_len": 1024,
            "pipeline_parallel": None,
            "systems_per_rack": 4,
            "usd_per_kwh": 0.1,
            "pue": 1.3,
            "usd_per_system": 4e5,
        },
    ),
}
