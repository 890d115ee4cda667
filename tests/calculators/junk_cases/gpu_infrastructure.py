"""Junk-input cases for ``gpu_infrastructure``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.claims import gpu_infrastructure

CASES: dict[str, tuple] = {
    "memory_requirements_as_written": (
        gpu_infrastructure.memory_requirements_as_written,
        {
            "num_parameters": 7_000_000_000,
            "precision_bytes": 2,
            "batch_size": 4,
            "sequence_length": 2048,
            "training": True,
        },
    ),
    "course_estimate": (
        gpu_infrastructure.course_estimate,
        {"workload": "generate", "gpu": "a100-80gb-sxm", "efficiency": 0.6},
    ),
    "multi_gpu_efficiency_as_written": (
        gpu_infrastructure.multi_gpu_efficiency_as_written,
        {
            "num_gpus": 8,
            "strategy": "pipeline",
            "model_size_gb": 140,
            "batch_size": 32,
            "communication_overhead": 0.1,
        },
    ),
}
