"""Junk-input cases for ``silicon_to_tensors``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.claims import silicon_to_tensors

CASES: dict[str, tuple] = {
    "breakeven_table_as_written": (
        silicon_to_tensors.breakeven_table_as_written,
        {"utilisation": 0.5, "usd_per_kwh": 0.15, "pue": 1.5, "hosting_usd_per_gpu_year": 1000},
    ),
}
