"""The buy-vs-rent table of *Computational Resources for ML: From Silicon to Tensors*, as written
("When Cloud Makes Sense": purchase / hourly rate), reproduced and then corrected for power,
hosting and utilisation with :mod:`course.calculators.cloud`. Lesson 09.
"""

from __future__ import annotations

from dataclasses import dataclass

from course.calculators import cloud, energy
from course.facts import hardware, validate
from course.facts.data import cloud_instances as cloud_data
from course.facts.report import Report, Table
from course.facts.units import HOUR, YEAR


@dataclass(frozen=True)
class BreakevenRow(Report):
    """One row of the reading's break-even table, reproduced and then corrected."""

    _title = "Break-even table of Computational Resources for ML, reproduced and corrected"

    hardware: str
    purchase_usd: float
    rent_usd_per_hour: float
    hours_as_written: float  # as printed in the reading
    reproduced_hours: float  # purchase / hourly rate
    running_usd_per_hour: float  # power x PUE x electricity + hosting per hour used
    corrected_hours: float  # purchase / (rate - running cost)
    corrected_months: float  # at the given utilisation, hosting paid every month


def breakeven_table_as_written(
    *,
    utilisation: float = 1.0,
    usd_per_kwh: float = 0.0,
    pue: float = 1.0,
    hosting_usd_per_gpu_year: float = 0.0,
) -> Table:
    """The "When Cloud Makes Sense" table: purchase / hourly rate reproduces its hours
    (4,000 / 3,750 / 4,688); then each row is corrected for the GPUs' power (TDP from
    ``course.facts.hardware``, x ``pue``, at ``usd_per_kwh``), hosting per GPU-year and utilisation.
    The reading's prices are its own round figures, not checked quotes. GPU power only: a whole
    server draws more (CPUs, fans, NICs), so the correction is a lower bound. A
    :class:`course.facts.report.Table` of :class:`BreakevenRow`: it prints itself.
    """
    util = validate.number("utilisation", utilisation, minimum=cloud.MIN_UTILISATION, maximum=1)
    hosting = validate.number(
        "hosting_usd_per_gpu_year", hosting_usd_per_gpu_year, minimum=0, maximum=1e8
    )
    rows = []
    for (
        label,
        gpu_key,
        gpus,
        purchase,
        hourly,
        hours_as_written,
    ) in cloud_data.BUY_VS_RENT_AS_WRITTEN:
        watts = gpus * hardware.gpu(gpu_key).tdp_watts
        hosting_year = hosting * gpus
        running = energy.electricity_usd_per_hour(watts, usd_per_kwh, pue=pue)
        per_used_hour = running + hosting_year / (util * YEAR / HOUR)
        rows.append(
            BreakevenRow(
                hardware=label,
                purchase_usd=float(purchase),
                rent_usd_per_hour=hourly,
                hours_as_written=hours_as_written,
                reproduced_hours=cloud.breakeven_hours(purchase, hourly),
                running_usd_per_hour=per_used_hour,
                corrected_hours=cloud.breakeven_hours(
                    purchase,
                    hourly,
                    power_watts=watts,
                    usd_per_kwh=usd_per_kwh,
                    pue=pue,
                    other_usd_per_hour=hosting_year / (util * YEAR / HOUR),
                ),
                corrected_months=cloud.breakeven_months(
                    purchase,
                    hourly,
                    utilisation=util,
                    power_watts=watts,
                    usd_per_kwh=usd_per_kwh,
                    pue=pue,
                    other_usd_per_month=hosting_year / 12,
                ),
            )
        )
    return Table(rows, title=BreakevenRow._title)


__all__ = ["BreakevenRow", "breakeven_table_as_written"]
