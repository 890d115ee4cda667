"""The POD power-cost widget of lesson 10 (practice question 10): a year of electricity for a
"32-GPU DGX POD", in both readings of the question.

``pod_power_calculator()`` returns a :class:`course.presentation.widgets.base.Calculator`. Inputs:
the system, the POD's size (one number read two ways: that many GPUs, and that many systems), the
power of one system (its datasheet maximum until edited), the average draw, PUE and the electricity
price. Output: both readings side by side, each from
:func:`course.calculators.facility.pod_annual_energy`; nothing is computed here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from course.calculators import energy, facility
from course.facts import hardware, report, units, validate
from course.presentation.widgets.base import (
    Calculator,
    dropdown,
    parse_number,
    parse_percent,
    parse_whole,
    text_box,
)

#: Calculator parameter -> the label of its control, so an error names what the learner sees.
LABELS = {
    "pod_size": "POD size (GPUs, or systems)",
    "power_watts": "power per system (W)",
    "utilisation": "average draw (% of maximum)",
    "pue": "PUE",
    "usd_per_kwh": "electricity ($/kWh)",
}


@dataclass(frozen=True)
class PodPower:
    """The question's two readings: ``pod_size`` GPUs, and ``pod_size`` systems."""

    pod_size: int
    as_gpus: facility.PodEnergy
    as_systems: facility.PodEnergy

    def table(self) -> report.Table:
        return report.Table(
            [
                dict(
                    reading=reading,
                    systems=e.systems,
                    gpus=e.gpus,
                    facility_power_watts=e.facility_power_watts,
                    energy_per_year_joules=e.energy_per_year_joules,
                    cost_per_year_usd=e.cost_per_year_usd,
                )
                for reading, e in (
                    (f"{self.pod_size:,} GPUs", self.as_gpus),
                    (f"{self.pod_size:,} systems", self.as_systems),
                )
            ],
            title="A year of electricity, both readings",
        )


def _power_default(system: str) -> str:
    return f"{hardware.SYSTEMS[system].max_power_watts:g}"


def pod_power(v: dict[str, Any]) -> PodPower:
    """The calculator's result for the widget's values ``v`` (errors name the on-screen labels)."""
    system = hardware.SYSTEMS[v["system"]]
    size = parse_whole(
        LABELS["pod_size"], v["pod_size"], minimum=1, maximum=energy.MAX_SYSTEMS // system.gpus
    )
    common = dict(
        usd_per_kwh=parse_number(
            LABELS["usd_per_kwh"], v["usd_per_kwh"], minimum=0, maximum=validate.MAX_USD_PER_KWH
        ),
        utilisation=parse_percent(LABELS["utilisation"], v["utilisation"], allow_zero=True),
        pue=parse_number(LABELS["pue"], v["pue"], minimum=1, maximum=validate.MAX_PUE),
        power_watts=parse_number(
            LABELS["power_watts"], v["power"], minimum=0, maximum=validate.MAX_WATTS
        ),
    )
    return PodPower(
        pod_size=size,
        as_gpus=facility.pod_annual_energy(system.key, gpus=size, **common),
        as_systems=facility.pod_annual_energy(system.key, systems=size, **common),
    )


def _pod_html(r: PodPower, v: dict[str, Any]) -> str:
    a, b = r.as_gpus, r.as_systems
    return (
        f"<p>Read as <b>{r.pod_size:,} GPUs</b>: {a.systems:,} x {a.system} "
        f"({a.gpus:,} GPUs), {units.fmt_watts(a.facility_power_watts)} from the grid on average, "
        f"<b>{units.fmt_usd(a.cost_per_year_usd)} a year</b>.</p>"
        f"<p>Read as <b>{r.pod_size:,} systems</b> (a DGX POD's size): {b.gpus:,} GPUs, "
        f"{units.fmt_watts(b.facility_power_watts)}, <b>{units.fmt_usd(b.cost_per_year_usd)} a "
        f"year</b>.</p>" + r.table()._repr_html_()
    )


def pod_power_calculator(
    system: str = "dgx-h100",
    pod_size: str = "32",
    power: str | None = None,
    utilisation: str = "100",
    pue: str = "1.0",
    usd_per_kwh: str = "0.10",
) -> Calculator:
    """Annual power cost of a POD of DGX systems, read as ``pod_size`` GPUs and as ``pod_size``
    systems.

    Defaults: *AI Infrastructure*'s question 10 (a "32-GPU DGX POD" at $0.10/kWh), at the DGX
    H100's maximum draw all year (10,200 W, DGX H100/H200 User Guide) and no PUE, as the reading
    answers it; the power box follows the system until it is edited.
    """
    system_box = dropdown("DGX system", [(s.name, k) for k, s in hardware.SYSTEMS.items()], system)
    power_box = text_box(LABELS["power_watts"], power or _power_default(system))

    def follow_system(change) -> None:
        if power_box.value == _power_default(change["old"]):  # not edited: follow
            power_box.value = _power_default(change["new"])

    system_box.observe(follow_system, names="value")
    controls = {
        "system": system_box,
        "pod_size": text_box(LABELS["pod_size"], pod_size),
        "power": power_box,
        "utilisation": text_box(LABELS["utilisation"], utilisation),
        "pue": text_box(LABELS["pue"], pue),
        "usd_per_kwh": text_box(LABELS["usd_per_kwh"], usd_per_kwh),
    }
    return Calculator(
        "Annual power cost of a DGX POD", controls, pod_power, LABELS, render=_pod_html
    )


__all__ = ["LABELS", "PodPower", "pod_power", "pod_power_calculator"]
