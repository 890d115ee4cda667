"""Energy, electricity cost and CO2 of a workload, and the whole footprint of a training run.

- Energy = GPU power x hours x PUE (power usage effectiveness: the facility's total draw over its
  IT draw; 1.0 counts the GPUs only, 1.1-1.2 is a modern hyperscale site, 1.5+ an older one).
- Electricity cost = energy x price per kWh; CO2 = energy x the grid's carbon intensity
  (gCO2eq/kWh: ~57 for France in BLOOM's paper, a few hundred for most grids).
- :func:`run_footprint` adds CO2 to :func:`course.calculators.compute.training_run_cost`: time, GPU-hours,
  rental, energy, electricity, CO2 of 6 x params x tokens FLOPs at a given MFU.

Checked in tests/test_cost.py against BLOOM (Luccioni et al. 2022) and Llama 2 (Touvron et al.
2023, Table 2) as recorded in ``course.facts.data.published_runs``. Layer 2: no torch. Lesson 05.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from course.calculators import compute
from course.facts import hardware, validate
from course.facts.report import Report
from course.facts.units import HOUR, KWH

#: Largest grid intensity accepted, gCO2eq/kWh (coal is ~1,000).
MAX_GRID_G_PER_KWH = 2000.0


def _pue(value: object) -> float:
    return validate.number("pue", value, minimum=1, maximum=10)


def _grid(value: object) -> float:
    return validate.number("grid_g_per_kwh", value, minimum=0, maximum=MAX_GRID_G_PER_KWH)


def energy_joules(power_watts: float, seconds: float, *, pue: float = 1.0) -> float:
    """Energy drawn at ``power_watts`` for ``seconds``, scaled to the facility by ``pue``."""
    p = validate.number("power_watts", power_watts, minimum=0, maximum=1e10)
    t = validate.number("seconds", seconds, minimum=0, maximum=1e12)
    return p * t * _pue(pue)


def gpu_hours_energy_joules(gpu_hours: float, watts_per_gpu: float, *, pue: float = 1.0) -> float:
    """Energy of ``gpu_hours`` at ``watts_per_gpu`` each (x PUE): BLOOM's 1,082,990 GPU-hours at
    400 W are 433,196 kWh (Luccioni et al. 2022)."""
    hours = validate.number("gpu_hours", gpu_hours, minimum=0, maximum=1e12)
    return energy_joules(watts_per_gpu, hours * HOUR, pue=pue)


def electricity_usd(energy: float, usd_per_kwh: float) -> float:
    """Cost of ``energy`` joules at ``usd_per_kwh``."""
    e = validate.number("energy", energy, minimum=0, maximum=1e22)
    return e / KWH * validate.number("usd_per_kwh", usd_per_kwh, minimum=0, maximum=1e3)


def co2_kg(energy: float, grid_g_per_kwh: float) -> float:
    """Kilograms of CO2-equivalent of ``energy`` joules on a grid of ``grid_g_per_kwh``."""
    e = validate.number("energy", energy, minimum=0, maximum=1e22)
    return e / KWH * _grid(grid_g_per_kwh) / 1000.0


@dataclass(frozen=True)
class RunFootprint(Report):
    """How long, how much and how much CO2: one training run (see :func:`run_footprint`)."""

    _title = "Training run: time, cost, energy, CO2"
    _formats = {"gpu": "text", "n_gpus": "number", "gpu_hours": "number", "mfu": "percent",
                "pue": "number", "co2_kg": "number"}  # fmt: skip

    gpu: str
    n_gpus: int
    flops: float
    mfu: float
    wall_clock_seconds: float
    gpu_hours: float
    pue: float
    energy_joules: float  # GPUs x power x time x PUE
    rental_usd: float  # GPU-hours x price per GPU-hour
    electricity_usd: float  # energy x price per kWh
    total_usd: float
    co2_kg: float  # energy x grid intensity


def run_footprint(
    params: float,
    tokens: float,
    gpu: hardware.GPU | str,
    n_gpus: int,
    *,
    mfu: float = 0.4,
    dtype: str = "bf16",
    usd_per_gpu_hour: float = 0.0,
    usd_per_kwh: float = 0.0,
    pue: float = 1.0,
    grid_g_per_kwh: float = 0.0,
    watts_per_gpu: float | None = None,
) -> RunFootprint:
    """Time, GPU-hours, rental, energy, electricity and CO2 of training on 6 x params x tokens FLOPs.

    Time = 6ND / (n_gpus x dense peak(dtype) x mfu) (:func:`course.calculators.compute.training_run_cost`);
    power per GPU defaults to its TDP (the H100 reference run sat at its 700 W cap under a
    sustained bf16 matmul). Renting includes the electricity: set ``usd_per_kwh`` only when you
    own the GPUs, ``usd_per_gpu_hour`` only when you rent.
    """
    run = compute.training_run_cost(params, tokens, gpu, n_gpus, dtype=dtype, mfu=mfu,
                                    usd_per_gpu_hour=usd_per_gpu_hour, usd_per_kwh=usd_per_kwh,
                                    watts_per_gpu=watts_per_gpu, pue=pue)  # fmt: skip
    return RunFootprint(
        gpu=run.gpu, n_gpus=run.n_gpus, flops=run.flops, mfu=run.mfu,
        wall_clock_seconds=run.wall_clock_seconds, gpu_hours=run.gpu_hours, pue=_pue(pue),
        energy_joules=run.energy_joules, rental_usd=run.rental_cost_usd,
        electricity_usd=run.energy_cost_usd, total_usd=run.total_cost_usd,
        co2_kg=co2_kg(run.energy_joules, grid_g_per_kwh),
    )  # fmt: skip


def sustained_power(samples: list, *, skip_seconds: float = 2.0) -> tuple[float, float]:
    """(median watts, median SM clock in MHz) of power samples, leaving out the first seconds.

    ``samples`` are ``[unix time, watts, SM clock MHz, ...]`` rows as NVML records them (the H100
    reference run's ``power.json``); the first ``skip_seconds`` are the ramp-up.
    """

    def _row_ok(row: object) -> bool:
        return (isinstance(row, list | tuple) and len(row) >= 3
                and all(isinstance(x, int | float) and not isinstance(x, bool)
                        and math.isfinite(x) for x in row[:3]))  # fmt: skip

    if not isinstance(samples, list | tuple) or not samples or not all(map(_row_ok, samples)):
        raise ValueError("samples must be a non-empty list of [time, watts, clock MHz] rows of "
                         f"finite numbers, got {samples!r:.80}")  # fmt: skip
    skip = validate.number("skip_seconds", skip_seconds, minimum=0, maximum=1e6)
    start = samples[0][0]
    kept = [row for row in samples if row[0] - start >= skip] or list(samples)
    return statistics.median(r[1] for r in kept), statistics.median(r[2] for r in kept)


__all__ = [
    "RunFootprint",
    "co2_kg",
    "electricity_usd",
    "energy_joules",
    "gpu_hours_energy_joules",
    "run_footprint",
    "sustained_power",
]
