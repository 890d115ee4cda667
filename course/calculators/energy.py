"""Energy, electricity cost and CO2: the one home of kWh, PUE, electricity prices and grid
intensity.

- Energy = power x time x PUE (power usage effectiveness: the facility's total draw over its IT
  draw; 1.0 counts the IT load only, about 1.1-1.2 is a hyperscale site, the industry average is
  about 1.5).
- Electricity cost = energy x price per kWh; CO2 = energy x the grid's carbon intensity
  (gCO2eq/kWh: ~57 for France in BLOOM's paper, a few hundred for most grids).
- :func:`run_footprint`: the time, GPU-hours, rental, energy, electricity and CO2 of a training
  run of 6 (or 8) x params x tokens FLOPs at a given MFU.

Every other calculator (facility, cluster, cloud, inference, widgets) calls these functions for a
watt turned into joules or dollars. Checked in tests/calculators/test_cost.py against BLOOM
(Luccioni et al. 2022) and Llama 2 (Touvron et al. 2023, Table 2) as recorded in
``course.facts.data.published_runs``. Lesson 05.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from course.calculators import compute
from course.facts import hardware, validate
from course.facts.report import Report
from course.facts.units import HOUR, KWH, YEAR
from course.facts.validate import MAX_GPUS

#: Largest grid intensity accepted, gCO2eq/kWh (coal is ~1,000).
MAX_GRID_G_PER_KWH = 2000.0
#: Largest number of systems (servers, racks) accepted.
MAX_SYSTEMS = 10**7


def _grid(value: object) -> float:
    return validate.number("grid_g_per_kwh", value, minimum=0, maximum=MAX_GRID_G_PER_KWH)


def _joules(watts: float, seconds: float, pue: float) -> float:
    return watts * seconds * pue


def energy_joules(power_watts: float, seconds: float, *, pue: float = 1.0) -> float:
    """Energy drawn at ``power_watts`` for ``seconds``, scaled to the facility by ``pue``."""
    p = validate.watts("power_watts", power_watts)
    t = validate.number("seconds", seconds, minimum=0, maximum=1e12)
    return _joules(p, t, validate.pue(pue))


def gpu_hours_energy_joules(gpu_hours: float, watts_per_gpu: float, *, pue: float = 1.0) -> float:
    """Energy of ``gpu_hours`` at ``watts_per_gpu`` each (x PUE): BLOOM's 1,082,990 GPU-hours at
    400 W are 433,196 kWh (Luccioni et al. 2022)."""
    hours = validate.number("gpu_hours", gpu_hours, minimum=0, maximum=1e12)
    return energy_joules(watts_per_gpu, hours * HOUR, pue=pue)


def electricity_usd(energy: float, usd_per_kwh: float) -> float:
    """Cost of ``energy`` joules at ``usd_per_kwh``."""
    e = validate.number("energy", energy, minimum=0, maximum=1e30)
    return e / KWH * validate.usd_per_kwh(usd_per_kwh)


def electricity_usd_per_hour(power_watts: float, usd_per_kwh: float, *, pue: float = 1.0) -> float:
    """What drawing ``power_watts`` (x ``pue``) costs per hour at ``usd_per_kwh``: 700 W at
    $0.10/kWh and PUE 1 is $0.07 an hour."""
    return electricity_usd(energy_joules(power_watts, HOUR, pue=pue), usd_per_kwh)


def annual_electricity_usd(
    power_watts: float,
    usd_per_kwh: float,
    *,
    systems: int = 1,
    utilisation: float = 1.0,
    pue: float = 1.0,
) -> float:
    """Yearly electricity bill: power x systems x utilisation x PUE x 8,760 h x price per kWh.

    ``power_watts`` is one system's draw (a DGX H100's maximum is 10,200 W); ``utilisation`` the
    average fraction of that drawn over the year; ``pue`` (>= 1) adds the facility's cooling and
    losses. One DGX H100 at full draw and $0.10/kWh: 10.2 kW x 8,760 h x $0.10 = $8,935 a year.
    """
    p = validate.watts("power_watts", power_watts)
    n = validate.positive_int("systems", systems, maximum=MAX_SYSTEMS)
    util = validate.fraction("utilisation", utilisation, allow_zero=True)
    return electricity_usd(_joules(p * n * util, YEAR, validate.pue(pue)), usd_per_kwh)


def co2_kg(energy: float, grid_g_per_kwh: float) -> float:
    """Kilograms of CO2-equivalent of ``energy`` joules on a grid of ``grid_g_per_kwh``."""
    e = validate.number("energy", energy, minimum=0, maximum=1e22)
    return e / KWH * _grid(grid_g_per_kwh) / 1000.0


@dataclass(frozen=True)
class RunFootprint(Report):
    """How long, how much and how much CO2: one training run (see :func:`run_footprint`)."""

    _title = "Training run: time, cost, energy, CO2"
    _formats = {"mfu": "percent"}

    gpu: str
    n_gpus: int
    flops: float
    mfu: float
    wall_clock_seconds: float
    gpu_hours: float
    pue: float
    power_watts: float  # all GPUs (x PUE) while training
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
    recompute: bool = False,
    usd_per_gpu_hour: float = 0.0,
    usd_per_kwh: float = 0.0,
    pue: float = 1.0,
    grid_g_per_kwh: float = 0.0,
    watts_per_gpu: float | None = None,
) -> RunFootprint:
    """Time, GPU-hours, rental, energy, electricity and CO2 of training on 6 x params x tokens
    FLOPs.

    Time = :func:`course.calculators.compute.training_seconds` at the GPU's dense peak for
    ``dtype`` (sparsity does not apply to training); with ``recompute`` the 8 x FLOPs executed and
    ``mfu`` is then a hardware FLOPs utilisation. Power per GPU defaults to its TDP
    (``watts_per_gpu`` overrides, e.g. 10,200 W / 8 = 1,275 W for a whole DGX H100 share; the H100
    reference run sat at its 700 W cap under a sustained bf16 matmul). Renting includes the
    electricity: set ``usd_per_kwh`` only when you own the GPUs, ``usd_per_gpu_hour`` only when
    you rent.
    """
    card = hardware.gpu(gpu)
    peak = card.peak_flop_per_s(validate.choice("dtype", dtype, tuple(card.dense_flop_per_s)))
    gpus = validate.positive_int("n_gpus", n_gpus, maximum=MAX_GPUS)
    seconds = compute.training_seconds(params, tokens, gpus, peak, mfu=mfu, recompute=recompute)
    price_gpu = validate.number("usd_per_gpu_hour", usd_per_gpu_hour, minimum=0, maximum=1e6)
    watts = card.tdp_watts if watts_per_gpu is None else watts_per_gpu
    watts = validate.number("watts_per_gpu", watts, minimum=0, maximum=1e6, strict_min=True)
    facility = validate.pue(pue)
    energy = _joules(gpus * watts, seconds, facility)
    gpu_hours = gpus * seconds / HOUR
    electricity = electricity_usd(energy, usd_per_kwh)
    rental = gpu_hours * price_gpu
    return RunFootprint(
        gpu=card.name,
        n_gpus=gpus,
        flops=compute.training_flops(params, tokens, recompute=recompute),
        mfu=float(mfu),
        wall_clock_seconds=seconds,
        gpu_hours=gpu_hours,
        pue=facility,
        power_watts=gpus * watts * facility,
        energy_joules=energy,
        rental_usd=rental,
        electricity_usd=electricity,
        total_usd=electricity + rental,
        co2_kg=co2_kg(energy, grid_g_per_kwh),
    )


def sustained_power(samples: list, *, skip_seconds: float = 2.0) -> tuple[float, float]:
    """(median watts, median SM clock in MHz) of power samples, leaving out the first seconds.

    ``samples`` are ``[unix time, watts, SM clock MHz, ...]`` rows as NVML records them (the H100
    reference run's ``power.json``); the first ``skip_seconds`` are the ramp-up.
    """

    def _row_ok(row: object) -> bool:
        return (
            isinstance(row, list | tuple)
            and len(row) >= 3
            and all(
                isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                for x in row[:3]
            )
        )

    if not isinstance(samples, list | tuple) or not samples or not all(map(_row_ok, samples)):
        raise ValueError(
            "samples must be a non-empty list of [time, watts, clock MHz] rows of "
            f"finite numbers, got {samples!r:.80}"
        )
    skip = validate.number("skip_seconds", skip_seconds, minimum=0, maximum=1e6)
    start = samples[0][0]
    kept = [row for row in samples if row[0] - start >= skip] or list(samples)
    return statistics.median(r[1] for r in kept), statistics.median(r[2] for r in kept)


__all__ = [
    "RunFootprint",
    "annual_electricity_usd",
    "co2_kg",
    "electricity_usd",
    "electricity_usd_per_hour",
    "energy_joules",
    "gpu_hours_energy_joules",
    "run_footprint",
    "sustained_power",
]
