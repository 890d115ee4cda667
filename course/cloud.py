"""Cloud GPU instances and the buy-versus-rent arithmetic.

Cloud prices change (AWS cut P4 and P5 on-demand prices by up to 45 % in June 2025), so every
price here carries the date it was true and its source; a lesson shows the date beside the
number and lets the learner type today's price. Only prices with a primary source are recorded;
seed 003's Azure and GCP figures are unverified and left out.

:func:`breakeven_hours` and :func:`breakeven_months` answer practice question 9 of seed 003
("Compare on-premise DGX vs cloud GPUs for a startup training models continuously") with power,
facility overhead (PUE), fixed running costs and utilisation included, which the seeds' tables
(seed 004: 4,000 / 3,750 / 4,688 hours) leave out.

Used by lessons 09 and 10. Layer 2: no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

from course import hardware, validate
from course.report import Report
from course.units import HOUR, KWH, YEAR

#: Hours in an average month (8,760 / 12).
HOURS_PER_MONTH = YEAR / HOUR / 12
MAX_USD = 1e13


@dataclass(frozen=True)
class CloudInstance(Report):
    """One cloud GPU instance type and its on-demand price on a given date."""

    _title = "Cloud instance"
    _formats = {"key": "text", "name": "text", "provider": "text", "gpu": "text", "gpus": "number",
                "as_of": "text", "source": "text", "notes": "text"}  # fmt: skip

    key: str
    provider: str
    name: str
    gpu: str  # key in course.hardware.GPUS
    gpus: int
    usd_per_hour: float  # on-demand, Linux, US East, at ``as_of``
    as_of: str  # date the price was true
    source: str
    notes: str = ""

    @property
    def usd_per_gpu_hour(self) -> float:
        return self.usd_per_hour / self.gpus


INSTANCES: MappingProxyType = MappingProxyType({i.key: i for i in [
    CloudInstance(
        key="aws-p4d.24xlarge", provider="AWS", name="p4d.24xlarge", gpu="a100-40gb-sxm", gpus=8,
        usd_per_hour=32.77, as_of="2020-11 (launch)",
        source="AWS News Blog, 'Amazon EC2 P4d instances' (2 Nov 2020): $32.77/h on-demand, "
               "US East (N. Virginia)",
        notes="8x A100 40GB (not 80GB). Included in AWS's June 2025 price cut of up to 45%.",
    ),
    CloudInstance(
        key="aws-p5.48xlarge", provider="AWS", name="p5.48xlarge", gpu="h100-sxm", gpus=8,
        usd_per_hour=98.32, as_of="2023-07 (launch)",
        source="AWS EC2 on-demand price list at launch (July 2023), US East (N. Virginia); "
               "also The Next Platform, 27 Jul 2023",
        notes="AWS announced on-demand price cuts of up to 45% for P5 in June 2025 (AWS What's "
              "New, June 2025): check today's price and pass it to breakeven_hours().",
    ),
]})  # fmt: skip


def instance(key: str) -> CloudInstance:
    """Look up an instance by key (``"aws-p5.48xlarge"``); ValueError lists the choices."""
    if not isinstance(key, str) or key not in INSTANCES:
        raise ValueError(f"instance must be one of {', '.join(INSTANCES)}; got {key!r}")
    return INSTANCES[key]


def _usd(name: str, value: object) -> float:
    return validate.number(name, value, minimum=0, maximum=MAX_USD)


def _running_usd_per_hour(power_watts: object, usd_per_kwh: object, pue: object) -> float:
    watts = validate.number("power_watts", power_watts, minimum=0, maximum=1e10)
    price = validate.number("usd_per_kwh", usd_per_kwh, minimum=0, maximum=1e3)
    facility = validate.number("pue", pue, minimum=1, maximum=10)
    return watts * facility * HOUR / KWH * price


def breakeven_hours(
    purchase_usd: float,
    rent_usd_per_hour: float,
    *,
    power_watts: float = 0.0,
    usd_per_kwh: float = 0.0,
    pue: float = 1.0,
    other_usd_per_hour: float = 0.0,
) -> float:
    """Hours of use after which buying costs less than renting.

    purchase / (rent per hour - running cost per hour of owning), where running cost = power x
    PUE x electricity price + ``other_usd_per_hour`` (hosting, support). With no running costs
    this is seed 004's purchase / hourly rate (RTX 4090: $1,600 / $0.40 = 4,000 h). Returns
    ``math.inf`` when owning costs as much per hour as renting: buying never pays off.
    """
    price = _usd("purchase_usd", purchase_usd)
    rent = validate.number("rent_usd_per_hour", rent_usd_per_hour, minimum=0, maximum=1e6,
                           strict_min=True)  # fmt: skip
    running = _running_usd_per_hour(power_watts, usd_per_kwh, pue)
    running += validate.number("other_usd_per_hour", other_usd_per_hour, minimum=0, maximum=1e6)
    saving = rent - running
    return price / saving if saving > 0 else math.inf


def breakeven_months(
    purchase_usd: float,
    rent_usd_per_hour: float,
    *,
    utilization: float = 1.0,
    power_watts: float = 0.0,
    usd_per_kwh: float = 0.0,
    pue: float = 1.0,
    other_usd_per_month: float = 0.0,
) -> float:
    """Calendar months after which buying costs less than renting the same hours.

    Each month the hardware is used ``utilization`` x 730 h. Renting costs those hours x the
    hourly rate; owning costs the energy of those hours (x PUE) plus ``other_usd_per_month``
    (space, staff, support), paid used or not. Months = purchase / (monthly rent - monthly cost of
    owning); ``math.inf`` if renting is never dearer. Seed 003's "6-12 months" holds only near
    full utilisation: at 25 % it is four times longer.
    """
    price = _usd("purchase_usd", purchase_usd)
    rent = validate.number("rent_usd_per_hour", rent_usd_per_hour, minimum=0, maximum=1e6,
                           strict_min=True)  # fmt: skip
    util = validate.fraction("utilization", utilization)
    running = _running_usd_per_hour(power_watts, usd_per_kwh, pue)
    fixed = validate.number("other_usd_per_month", other_usd_per_month, minimum=0, maximum=1e9)
    hours = util * HOURS_PER_MONTH
    saving = hours * (rent - running) - fixed
    return price / saving if saving > 0 else math.inf


@dataclass(frozen=True)
class BuyVsRent(Report):
    """Owning versus renting the same GPU hours over a number of years."""

    _title = "Buy vs rent"
    _formats = {"breakeven_hours": "number", "breakeven_months": "number",
                "hours_used_per_year": "number", "cheaper": "text"}  # fmt: skip

    hours_used_per_year: float
    rent_per_year_usd: float
    own_running_per_year_usd: float  # energy x PUE + fixed costs
    breakeven_hours: float
    breakeven_months: float
    rent_total_usd: float  # over ``years``
    own_total_usd: float  # purchase + running over ``years``
    cheaper: str  # "buy" or "rent"


def buy_vs_rent(
    purchase_usd: float,
    rent_usd_per_hour: float,
    *,
    years: float = 3.0,
    utilization: float = 1.0,
    power_watts: float = 0.0,
    usd_per_kwh: float = 0.0,
    pue: float = 1.0,
    other_usd_per_year: float = 0.0,
) -> BuyVsRent:
    """Total cost of owning vs renting over ``years`` (3 = the usual depreciation period).

    For a DGX H100 against a p5.48xlarge, pass the system's purchase price, the instance's current
    hourly price (:data:`INSTANCES` records the dated ones), 10,200 W and your electricity price.
    Resale value, financing and staff time beyond ``other_usd_per_year`` are not modelled.
    """
    price = _usd("purchase_usd", purchase_usd)
    span = validate.number("years", years, minimum=0, maximum=100, strict_min=True)
    util = validate.fraction("utilization", utilization)
    other = validate.number("other_usd_per_year", other_usd_per_year, minimum=0, maximum=1e10)
    months = breakeven_months(price, rent_usd_per_hour, utilization=util,
                              power_watts=power_watts, usd_per_kwh=usd_per_kwh, pue=pue,
                              other_usd_per_month=other / 12)  # fmt: skip
    hours_year = util * YEAR / HOUR
    running = _running_usd_per_hour(power_watts, usd_per_kwh, pue) * hours_year + other
    rent_year = hours_year * float(rent_usd_per_hour)
    own_total = price + span * running
    rent_total = span * rent_year
    return BuyVsRent(
        hours_used_per_year=hours_year,
        rent_per_year_usd=rent_year,
        own_running_per_year_usd=running,
        breakeven_hours=breakeven_hours(
            price,
            rent_usd_per_hour,
            power_watts=power_watts,
            usd_per_kwh=usd_per_kwh,
            pue=pue,
            other_usd_per_hour=other / hours_year,
        ),  # fmt: skip
        breakeven_months=months,
        rent_total_usd=rent_total,
        own_total_usd=own_total,
        cheaper="buy" if own_total < rent_total else "rent",
    )


def instance_gpu(key: str) -> hardware.GPU:
    """The :class:`course.hardware.GPU` inside an instance type."""
    return hardware.gpu(instance(key).gpu)


__all__ = [
    "HOURS_PER_MONTH",
    "INSTANCES",
    "BuyVsRent",
    "CloudInstance",
    "breakeven_hours",
    "breakeven_months",
    "buy_vs_rent",
    "instance",
    "instance_gpu",
]
