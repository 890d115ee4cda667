"""Junk-input cases for ``facility``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import facility

CASES: dict[str, tuple] = {
    "pod_annual_energy": (
        facility.pod_annual_energy,
        {
            "system": "dgx-h100",
            "usd_per_kwh": 0.1,
            "gpus": 32,
            "utilisation": 1.0,
            "pue": 1.0,
            "power_watts": 6500,
        },
    ),
    "rack_check": (
        facility.rack_check,
        {
            "system": "dgx-h100",
            "systems": 4,
            "power_limit_watts": 40_000,
            "other_watts": 3000,
            "rack_units": 42,
            "other_rack_units": 4,
        },
    ),
    "power_levels": (
        facility.power_levels,
        {
            "system": "dgx-h100",
            "systems": 32,
            "systems_per_rack": 4,
            "other_watts_per_rack": 3000,
            "pue": 1.5,
        },
    ),
}
