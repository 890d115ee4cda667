"""Junk-input cases for ``computation_requirements``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.claims import computation_requirements

CASES: dict[str, tuple] = {
    "inference_gpus_as_written": (
        computation_requirements.inference_gpus_as_written,
        {"params": 7e9, "bytes_per_param": 2, "gpu_memory_bytes": 8e10},
    ),
    "training_gpus_as_written": (
        computation_requirements.training_gpus_as_written,
        {"params": 7e9, "bytes_per_param": 2, "gpu_memory_bytes": 8e10},
    ),
}
