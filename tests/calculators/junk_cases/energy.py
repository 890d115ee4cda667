"""Junk-input cases for ``energy``: one valid call per public function, by keyword
(test_calculator_properties.py feeds junk to each parameter in turn)."""

from __future__ import annotations

from course.calculators import energy

CASES: dict[str, tuple] = {
    "energy_joules": (
        energy.energy_joules,
        {"power_watts": 700, "seconds": 3600, "pue": 1.2},
    ),
    "gpu_hours_energy_joules": (
        energy.gpu_hours_energy_joules,
        {"gpu_hours": 1000, "watts_per_gpu": 400, "pue": 1.1},
    ),
    "electricity_usd": (energy.electricity_usd, {"energy": 3.6e9, "usd_per_kwh": 0.1}),
    "co2_kg": (energy.co2_kg, {"energy": 3.6e9, "grid_g_per_kwh": 400}),
    "run_footprint": (
        energy.run_footprint,
        {
            "params": 7e9,
            "tokens": 1e12,
            "gpu": "h100-sxm",
            "n_gpus": 64,
            "mfu": 0.4,
            "dtype": "bf16",
            "recompute": False,
            "usd_per_gpu_hour": 2.0,
            "usd_per_kwh": 0.1,
            "pue": 1.2,
            "grid_g_per_kwh": 400,
            "watts_per_gpu": 700,
        },
    ),
    "sustained_power": (
        energy.sustained_power,
        {"samples": [[0.0, 100.0, 1980], [2.5, 700.0, 1350]], "skip_seconds": 1.0},
    ),
    "annual_electricity_usd": (
        energy.annual_electricity_usd,
        {"power_watts": 10_200, "usd_per_kwh": 0.1, "systems": 4, "utilisation": 0.8, "pue": 1.3},
    ),
    "electricity_usd_per_hour": (
        energy.electricity_usd_per_hour,
        {"power_watts": 700, "usd_per_kwh": 0.1, "pue": 1.2},
    ),
}
