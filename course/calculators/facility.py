"""The facility around the GPUs: power from the chip to the hall, racks, cooling and PUE.

- Every watt a rack draws becomes heat the cooling must remove: 1 W = 3.412 BTU/h; one "ton" of
  cooling = 12,000 BTU/h = 3.517 kW (ASHRAE definitions).
- PUE (facility power / IT power) from the Uptime Institute surveys and a hyperscaler's report;
  the electricity itself is priced by :mod:`course.calculators.energy`.

Lessons 08 and 10 (practice questions 6 and 10 of *AI Infrastructure*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from course.calculators import energy
from course.calculators.energy import MAX_SYSTEMS
from course.facts import hardware, validate
from course.facts.report import Report
from course.facts.units import YEAR

#: 1 watt in BTU per hour (1 BTU/h = 0.29307107 W).
BTU_PER_HOUR_PER_WATT = 1 / 0.29307107


#: One ton of refrigeration: 12,000 BTU/h, in watts.
WATTS_PER_COOLING_TON = 12_000 * 0.29307107


@dataclass(frozen=True)
class PodEnergy(Report):
    """Yearly power and electricity cost of a number of DGX-class systems."""

    _title = "Annual energy"

    system: str
    systems: int
    gpus: int
    it_power_watts: float  # all systems at their maximum draw
    facility_power_watts: float  # x utilisation x PUE
    energy_per_year_joules: float
    cost_per_year_usd: float


def pod_annual_energy(
    system: str | hardware.System = "dgx-h100",
    *,
    usd_per_kwh: float,
    gpus: int | None = None,
    systems: int | None = None,
    utilisation: float = 1.0,
    pue: float = 1.0,
    power_watts: float | None = None,
) -> PodEnergy:
    """Practice question 10 of *AI Infrastructure*: the annual power cost of a "32-GPU DGX POD".

    The question is ambiguous: 32 GPUs are 4 DGX H100 systems (``gpus=32``), while an NVIDIA DGX POD
    is 32 *systems* (``systems=32``, 256 GPUs). Give exactly one of ``gpus`` and ``systems``. At
    10.2 kW each and $0.10/kWh: 4 systems $35,741/year, 32 systems $285,926/year (*AI
    Infrastructure* rounds this to $288,000), before PUE. ``power_watts`` is one system's draw
    at full load (None: the system's maximum from its datasheet, 10,200 W for a DGX H100).
    """
    sys_ = hardware.system(system)
    if (gpus is None) == (systems is None):
        raise ValueError(
            f"give exactly one of gpus and systems, got gpus={gpus!r}, systems={systems!r}"
        )
    if gpus is not None:
        n_gpus = validate.positive_int("gpus", gpus, maximum=MAX_SYSTEMS * sys_.gpus)
        n_systems = math.ceil(n_gpus / sys_.gpus)
    else:
        n_systems = validate.positive_int("systems", systems, maximum=MAX_SYSTEMS)
    per_system = (
        sys_.max_power_watts if power_watts is None else validate.watts("power_watts", power_watts)
    )
    it_power = n_systems * per_system
    util = validate.fraction("utilisation", utilisation, allow_zero=True)
    facility = it_power * util * validate.pue(pue)
    return PodEnergy(
        system=sys_.name,
        systems=n_systems,
        gpus=n_systems * sys_.gpus,
        it_power_watts=it_power,
        facility_power_watts=facility,
        energy_per_year_joules=facility * YEAR,
        cost_per_year_usd=energy.annual_electricity_usd(
            per_system, usd_per_kwh, systems=n_systems, utilisation=util, pue=pue
        ),
    )


@dataclass(frozen=True)
class RackCheck(Report):
    """Does a rack of GPU systems fit a power budget and the rack's height; what heat it makes."""

    _title = "Rack check"
    _formats = {"fits_power": "text", "fits_space": "text"}

    system: str
    systems: int
    power_watts: float  # systems at maximum draw + other equipment
    power_limit_watts: float
    heat_btu_per_hour: float
    cooling_tons: float
    rack_units_used: int
    fits_power: bool
    fits_space: bool


def rack_check(
    system: str | hardware.System = "dgx-h100",
    systems: int = 4,
    *,
    power_limit_watts: float = 40_000,
    other_watts: float = 3_000,
    rack_units: int = 42,
    other_rack_units: int = 4,
) -> RackCheck:
    """Power, heat and space of ``systems`` servers in one rack.

    Defaults follow *AI Infrastructure*'s "typical AI rack": 4 DGX H100 (4 x 10.2 kW) plus switches
    (2 kW) and storage (1 kW) = 43.8 kW against its "air cooling up to 30-40 kW/rack". That limit is
    the reading's (unverified); many enterprise racks are provisioned for 10-20 kW, so set
    ``power_limit_watts`` to your facility's figure. A DGX H100 is 8U (DGX H100 User Guide).
    """
    sys_ = hardware.system(system)
    n = validate.positive_int("systems", systems, maximum=1000)
    limit = validate.number(
        "power_limit_watts",
        power_limit_watts,
        minimum=0,
        maximum=validate.MAX_WATTS,
        strict_min=True,
    )
    other = validate.watts("other_watts", other_watts)
    height = validate.positive_int("rack_units", rack_units, maximum=1000)
    other_u = validate.positive_int("other_rack_units", other_rack_units, minimum=0, maximum=1000)
    power = n * sys_.max_power_watts + other
    used = n * sys_.rack_units + other_u
    return RackCheck(
        system=sys_.name,
        systems=n,
        power_watts=power,
        power_limit_watts=limit,
        heat_btu_per_hour=power * BTU_PER_HOUR_PER_WATT,
        cooling_tons=power / WATTS_PER_COOLING_TON,
        rack_units_used=used,
        fits_power=power <= limit,
        fits_space=used <= height,
    )


#: Power usage effectiveness, industry average: 1.55 (2022) and 1.58 (2023) in the Uptime
#: Institute Global Data Center Surveys (flat for about five years; new large sites reach 1.3).
PUE_INDUSTRY_AVERAGE = 1.58


#: Hyperscale: Google's fleet-wide trailing-twelve-month PUE, 1.10 (Q2 2021; Google data centre
#: efficiency page, reported by CNBC 2022-04-13 beside Uptime's 1.57 average for 2021).
PUE_HYPERSCALE = 1.10


#: Average rack density: "still below 8-10 kW", most sites have no rack above 30 kW (Uptime
#: Institute Global Data Center Survey 2024); "most operators do not have any racks beyond 20 kW"
#: (2023 survey).
AVERAGE_RACK_WATTS = 8_000


#: A liquid-cooled DGX GB200 NVL72 scalable unit is 8 racks of 72 GPUs at 1.2 MW (NVIDIA DGX
#: SuperPOD GB200 reference architecture); the registry holds the rack (150 kW on average).
GB200_NVL72_RACKS_PER_SU = 8
GB200_NVL72_SU_WATTS = hardware.RACKS["gb200-nvl72"].average_watts * GB200_NVL72_RACKS_PER_SU


@dataclass(frozen=True)
class PowerLevels(Report):
    """Power at each level: one GPU, one server, one rack, the hall (IT), the facility (x PUE)."""

    _title = "Power, GPU to facility"
    _formats = {"gpu_share": "percent"}

    system: str
    systems: int
    gpu_watts: float  # one GPU's TDP
    server_watts: float  # one system at maximum draw
    gpu_share: float  # the GPUs' TDP as a share of the server's maximum
    rack_watts: float  # systems_per_rack servers + other equipment
    racks: int
    it_watts: float  # all racks
    pue: float
    facility_watts: float  # it_watts x PUE
    overhead_watts: float  # cooling and power-distribution losses: facility - IT


def power_levels(
    system: str | hardware.System = "dgx-h100",
    systems: int = 32,
    *,
    systems_per_rack: int = 4,
    other_watts_per_rack: float = 3_000,
    pue: float = PUE_INDUSTRY_AVERAGE,
) -> PowerLevels:
    """Power per GPU, server, rack and hall, and the facility's draw at ``pue``.

    Defaults: 32 DGX H100 (one SU) at *AI Infrastructure*'s 4 per rack with 3 kW of switches and
    storage per rack, at the industry-average PUE (Uptime Institute, 1.58). A DGX H100's 8 x 700
    W = 5.6 kW of GPUs is 55 % of its 10.2 kW: CPUs, memory, NICs, NVSwitches and fans draw the
    rest.
    """
    sys_ = hardware.system(system)
    n = validate.positive_int("systems", systems, maximum=MAX_SYSTEMS)
    per_rack = validate.positive_int("systems_per_rack", systems_per_rack, maximum=64)
    other = validate.watts("other_watts_per_rack", other_watts_per_rack)
    facility = validate.pue(pue)
    card = hardware.gpu(sys_.gpu)
    racks = math.ceil(n / per_rack)
    rack = min(n, per_rack) * sys_.max_power_watts + other
    it = n * sys_.max_power_watts + racks * other
    return PowerLevels(
        system=sys_.name,
        systems=n,
        gpu_watts=card.tdp_watts,
        server_watts=sys_.max_power_watts,
        gpu_share=sys_.gpus * card.tdp_watts / sys_.max_power_watts,
        rack_watts=rack,
        racks=racks,
        it_watts=it,
        pue=facility,
        facility_watts=it * facility,
        overhead_watts=it * (facility - 1),
    )


__all__ = [
    "AVERAGE_RACK_WATTS",
    "BTU_PER_HOUR_PER_WATT",
    "GB200_NVL72_RACKS_PER_SU",
    "GB200_NVL72_SU_WATTS",
    "PUE_HYPERSCALE",
    "PUE_INDUSTRY_AVERAGE",
    "PodEnergy",
    "PowerLevels",
    "RackCheck",
    "WATTS_PER_COOLING_TON",
    "pod_annual_energy",
    "power_levels",
    "rack_check",
]
