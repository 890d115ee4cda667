"""Cloud GPU instances and the buy-versus-rent arithmetic.

Cloud prices change (AWS cut P4 and P5 on-demand prices by up to 45 % in June 2025), so every price
carries the date it was seen and its source, in :mod:`course.facts.data.cloud_instances`; a lesson
shows the date beside the number and lets the learner type today's price. *AI Infrastructure*'s
Azure and GCP figures have no source and are left out.

Also here: total cost of ownership against on-demand, reserved and spot rent (:func:`own_vs_rent`),
the readings' break-even table reproduced and corrected in :mod:`course.claims.silicon_to_tensors`,
cost per training run and per million tokens served on an instance type, and checkpointing on spot
capacity (Young 1974, Daly 2006).

:func:`breakeven_hours` and :func:`breakeven_months` answer practice question 9 of *AI
Infrastructure* ("Compare on-premise DGX vs cloud GPUs for a startup training models continuously")
with power, facility overhead (PUE), fixed running costs and utilisation included, which the
readings' tables (*Computational Resources for ML*: 4,000 / 3,750 / 4,688 hours) leave out.

Used by lessons 09 and 10.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType

from course.calculators import compute, energy, reliability
from course.facts import hardware, validate
from course.facts.data import cloud_instances as cloud_data
from course.facts.report import Report
from course.facts.units import HOUR, YEAR

#: Hours in an average month (8,760 / 12).
HOURS_PER_MONTH = YEAR / HOUR / 12
#: Smallest utilisation the lifetime calculators accept (about 32 seconds a year): below it the
#: hours used round to nothing and a cost per hour used is meaningless.
MIN_UTILISATION = 1e-6
MAX_USD = 1e13


@dataclass(frozen=True)
class CloudInstance(Report):
    """One cloud GPU instance type with its latest recorded on-demand price and that price's date.

    Built from :mod:`course.facts.data.cloud_instances`; GPU memory is computed from the hardware
    registry (GPUs x memory per GPU), never typed. ``usd_per_hour`` is None where no sourced
    price was found (``notes`` says so).
    """

    _title = "Cloud instance"

    key: str
    provider: str
    name: str
    gpu: str  # key in course.facts.hardware.GPUS
    gpus: int
    gpu_memory_bytes: float  # all GPUs together
    network: str
    usd_per_hour: float | None  # latest on-demand price recorded, for the whole instance
    as_of: str  # date that price was seen (ISO)
    source: str
    notes: str = ""

    @property
    def usd_per_gpu_hour(self) -> float | None:
        return None if self.usd_per_hour is None else self.usd_per_hour / self.gpus


def _quotes(key: str, kind: str) -> list[cloud_data.PriceQuote]:
    return sorted(
        (q for q in cloud_data.PRICE_QUOTES if q.instance == key and q.kind == kind),
        key=lambda q: q.seen,
    )


def _build(t: cloud_data.InstanceType) -> CloudInstance:
    latest = _quotes(t.key, "on-demand")[-1]
    notes = " ".join(n for n in (t.notes, latest.notes) if n)
    if latest.usd_per_hour is None:
        notes = f"No price: {latest.source}. {notes}".strip()
    return CloudInstance(
        key=t.key,
        provider=t.provider,
        name=t.name,
        gpu=t.gpu,
        gpus=t.gpus,
        gpu_memory_bytes=t.gpus * hardware.gpu(t.gpu).memory_bytes,
        network=t.network,
        usd_per_hour=latest.usd_per_hour,
        as_of=latest.seen,
        source=latest.source,
        notes=notes,
    )


INSTANCES: MappingProxyType = MappingProxyType(
    {t.key: _build(t) for t in cloud_data.INSTANCE_TYPES}
)


def instance(key: str) -> CloudInstance:
    """Look up an instance by key (``"aws-p5.48xlarge"``); ValueError lists the choices."""
    if not isinstance(key, str) or key not in INSTANCES:
        raise ValueError(f"instance must be one of {', '.join(INSTANCES)}; got {key!r}")
    return INSTANCES[key]


@dataclass(frozen=True)
class RentedMatch(Report):
    """Instances of one type rented to match a number of owned GPUs, at the recorded price."""

    _title = "Rented to match"

    instance: str
    gpus_owned: int
    instances: int  # ceil(GPUs owned / GPUs per instance)
    gpus_rented: int
    on_demand_usd_per_hour: float | None  # all the instances together; None: no sourced price
    as_of: str


def rent_to_match(key: str, gpus: int) -> RentedMatch:
    """How many ``key`` instances rent at least ``gpus`` GPUs, and their on-demand price per hour.

    Buy-vs-rent compares the same hardware: one DGX H100 (8 GPUs) against one p5.48xlarge
    (8 GPUs), or against eight 1-GPU instances.
    """
    inst = instance(key)
    owned = validate.positive_int("gpus", gpus, maximum=compute.MAX_GPUS)
    count = math.ceil(owned / inst.gpus)
    price = None if inst.usd_per_hour is None else count * inst.usd_per_hour
    return RentedMatch(
        instance=inst.name,
        gpus_owned=owned,
        instances=count,
        gpus_rented=count * inst.gpus,
        on_demand_usd_per_hour=price,
        as_of=inst.as_of,
    )


def _usd(name: str, value: object) -> float:
    return validate.number(name, value, minimum=0, maximum=MAX_USD)


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

    purchase / (rent per hour - running cost per hour of owning), where running
    cost = power x PUE x electricity price + ``other_usd_per_hour`` (hosting, support). With no
    running costs this is *Computational Resources for ML*'s purchase / hourly rate (RTX 4090:
    $1,600 / $0.40 = 4,000 h). Returns ``math.inf`` when owning costs as much per hour as renting:
    buying never pays off.
    """
    price = _usd("purchase_usd", purchase_usd)
    rent = validate.number(
        "rent_usd_per_hour", rent_usd_per_hour, minimum=0, maximum=1e6, strict_min=True
    )
    running = energy.electricity_usd_per_hour(power_watts, usd_per_kwh, pue=pue)
    running += validate.number("other_usd_per_hour", other_usd_per_hour, minimum=0, maximum=1e6)
    saving = rent - running
    return price / saving if saving > 0 else math.inf


def breakeven_months(
    purchase_usd: float,
    rent_usd_per_hour: float,
    *,
    utilisation: float = 1.0,
    power_watts: float = 0.0,
    usd_per_kwh: float = 0.0,
    pue: float = 1.0,
    other_usd_per_month: float = 0.0,
) -> float:
    """Calendar months after which buying costs less than renting the same hours.

    Each month the hardware is used ``utilisation`` x 730 h. Renting costs those hours x the hourly
    rate; owning costs the energy of those hours (x PUE) plus ``other_usd_per_month`` (space, staff,
    support), paid used or not. Months = purchase / (monthly rent - monthly cost of owning);
    ``math.inf`` if renting is never dearer. *AI Infrastructure*'s "6-12 months" holds only near
    full utilisation: at 25 % it is four times longer.
    """
    price = _usd("purchase_usd", purchase_usd)
    rent = validate.number(
        "rent_usd_per_hour", rent_usd_per_hour, minimum=0, maximum=1e6, strict_min=True
    )
    util = validate.fraction("utilisation", utilisation)
    running = energy.electricity_usd_per_hour(power_watts, usd_per_kwh, pue=pue)
    fixed = validate.number("other_usd_per_month", other_usd_per_month, minimum=0, maximum=1e9)
    hours = util * HOURS_PER_MONTH
    saving = hours * (rent - running) - fixed
    return price / saving if saving > 0 else math.inf


def instance_gpu(key: str) -> hardware.GPU:
    """The :class:`course.facts.hardware.GPU` inside an instance type."""
    return hardware.gpu(instance(key).gpu)


# ---------------------------------------------------------------------------------------------
# Prices and their history
# ---------------------------------------------------------------------------------------------

PRICE_KINDS = ("on-demand", "spot", "capacity-block")


def price_history(key: str, kind: str = "on-demand") -> tuple[cloud_data.PriceQuote, ...]:
    """The dated prices recorded for an instance (oldest first), leaving out 'no price' rows."""
    instance(key)
    validate.choice("kind", kind, PRICE_KINDS)
    return tuple(q for q in _quotes(key, kind) if q.usd_per_hour is not None)


def price_change_fraction(key: str) -> float:
    """Change of the on-demand price from the first to the last recorded quote: -0.44 = 44 % cut.

    p5.48xlarge: $98.32/h at launch (July 2023) -> $55.04/h (Nov 2026) = -44 %, which is AWS's
    June 2025 cut "up to 45 %". ValueError if fewer than two prices are recorded.
    """
    quotes = price_history(key)
    if len(quotes) < 2:
        raise ValueError(f"instance {key!r} has {len(quotes)} dated on-demand price(s); need 2")
    first, last = quotes[0].usd_per_hour, quotes[-1].usd_per_hour
    return (last - first) / first


def instances_table(provider: str | None = None) -> list[dict[str, object]]:
    """One row per instance type for a notebook table: GPUs, memory, network, price and its date.

    ``provider`` ("AWS", "Azure", "GCP", "Lambda", "RunPod") keeps only that provider's rows.
    GPU memory is in GiB (binary) of all the instance's GPUs; prices are the latest on-demand
    quote recorded, per instance-hour and per GPU-hour, or None where none has a source.
    """
    providers = sorted({i.provider for i in INSTANCES.values()})
    if provider is not None:
        validate.choice("provider", provider, providers)
    rows = []
    for inst in INSTANCES.values():
        if provider is not None and inst.provider != provider:
            continue
        card = hardware.gpu(inst.gpu)
        rows.append(
            {
                "provider": inst.provider,
                "instance": inst.name,
                "GPUs": f"{inst.gpus} x {card.name}",
                "GPU memory (GiB)": round(inst.gpu_memory_bytes / 2**30),
                "network": inst.network,
                "on-demand $/h": inst.usd_per_hour,
                "$/GPU-h": None
                if inst.usd_per_gpu_hour is None
                else round(inst.usd_per_gpu_hour, 2),
                "price seen": inst.as_of if inst.usd_per_hour is not None else "no source",
            }
        )
    return rows


# ---------------------------------------------------------------------------------------------
# Buy vs rent over a lifetime (practice question 9 of *AI Infrastructure*)
# ---------------------------------------------------------------------------------------------


def _rate(name: str, value: object, *, optional: bool = False) -> float | None:
    if optional and value is None:
        return None
    return validate.number(name, value, minimum=0, maximum=1e6, strict_min=True)


def _months(purchase: float, rent_month: float, own_month: float) -> float:
    saving = rent_month - own_month
    return purchase / saving if saving > 0 else math.inf


@dataclass(frozen=True)
class OwnVsRent(Report):
    """Owning hardware vs renting the same hours, over the hardware's lifetime (all in USD)."""

    _title = "Buy vs rent over the lifetime"
    _formats = {"utilisation": "percent"}

    lifetime_years: float
    utilisation: float
    hours_used: float  # over the lifetime
    purchase_usd: float
    depreciation_per_year_usd: float  # straight line to zero over the lifetime
    electricity_usd: float  # power x PUE x hours used x price of electricity
    hosting_usd: float  # space, cooling contract, network, support: paid used or not
    staff_usd: float
    own_total_usd: float
    own_per_hour_used_usd: float
    rent_on_demand_usd: float
    rent_reserved_usd: float | None  # the reserved rate for every hour of the lifetime
    rent_spot_usd: float | None  # spot rate x hours used x (1 + preemption overhead)
    breakeven_months_on_demand: float
    breakeven_months_reserved: float | None
    breakeven_months_spot: float | None
    cheapest: str

    def components(self) -> dict[str, dict[str, float]]:
        """Cost components per option, for a stacked bar: {"own": {...}, "on-demand": {...}}."""
        parts = {
            "own": {
                "purchase": self.purchase_usd,
                "electricity": self.electricity_usd,
                "hosting": self.hosting_usd,
                "staff": self.staff_usd,
            },
            "on-demand": {"rent": self.rent_on_demand_usd},
        }
        if self.rent_reserved_usd is not None:
            parts["reserved"] = {"rent": self.rent_reserved_usd}
        if self.rent_spot_usd is not None:
            parts["spot"] = {"rent": self.rent_spot_usd}
        return parts


def own_vs_rent(
    purchase_usd: float,
    on_demand_usd_per_hour: float,
    *,
    reserved_usd_per_hour: float | None = None,
    spot_usd_per_hour: float | None = None,
    spot_overhead_fraction: float = 0.0,
    lifetime_years: float = 3.0,
    utilisation: float = 1.0,
    power_watts: float = 0.0,
    usd_per_kwh: float = 0.0,
    pue: float = 1.0,
    hosting_usd_per_year: float = 0.0,
    staff_usd_per_year: float = 0.0,
) -> OwnVsRent:
    """Total cost of ownership (TCO) against on-demand, reserved and spot rent for the same work.

    Owning: the purchase (depreciated straight-line to zero over ``lifetime_years``; resale and
    financing left out) + energy for the hours used (``power_watts`` x ``pue`` x price) + hosting
    and staff per year, paid whether the hardware is busy or not. Renting: on-demand and spot are
    paid for the hours used (``utilisation`` x 8,760 h a year); spot work is stretched by
    ``spot_overhead_fraction`` (checkpoints and re-done work, see :func:`spot_training`); a
    reservation is paid for every hour of the term, used or not. Break-even months =
    purchase / (monthly rent - monthly running cost of owning), ``inf`` if owning never pays off.
    Rates are for the same hardware (e.g. one DGX H100 against one p5.48xlarge).
    """
    price = _usd("purchase_usd", purchase_usd)
    on_demand = _rate("on_demand_usd_per_hour", on_demand_usd_per_hour)
    reserved = _rate("reserved_usd_per_hour", reserved_usd_per_hour, optional=True)
    spot = _rate("spot_usd_per_hour", spot_usd_per_hour, optional=True)
    overhead = validate.number(
        "spot_overhead_fraction", spot_overhead_fraction, minimum=0, maximum=100
    )
    years = validate.number("lifetime_years", lifetime_years, minimum=0.01, maximum=50)
    util = validate.number("utilisation", utilisation, minimum=MIN_UTILISATION, maximum=1)
    running = energy.electricity_usd_per_hour(power_watts, usd_per_kwh, pue=pue)
    hosting = validate.number("hosting_usd_per_year", hosting_usd_per_year, minimum=0, maximum=1e10)
    staff = validate.number("staff_usd_per_year", staff_usd_per_year, minimum=0, maximum=1e10)

    month_hours = HOURS_PER_MONTH
    used_month = util * month_hours
    own_month = used_month * running + (hosting + staff) / 12
    hours = used_month * 12 * years
    electricity = hours * running
    own_total = price + electricity + (hosting + staff) * years
    options = {"buy": own_total, "on-demand": hours * on_demand}
    months_reserved = months_spot = None
    if reserved is not None:
        options["reserved"] = reserved * month_hours * 12 * years
        months_reserved = _months(price, reserved * month_hours, own_month)
    if spot is not None:
        options["spot"] = spot * hours * (1 + overhead)
        months_spot = _months(price, spot * used_month * (1 + overhead), own_month)
    return OwnVsRent(
        lifetime_years=years,
        utilisation=util,
        hours_used=hours,
        purchase_usd=price,
        depreciation_per_year_usd=price / years,
        electricity_usd=electricity,
        hosting_usd=hosting * years,
        staff_usd=staff * years,
        own_total_usd=own_total,
        own_per_hour_used_usd=own_total / hours,
        rent_on_demand_usd=options["on-demand"],
        rent_reserved_usd=options.get("reserved"),
        rent_spot_usd=options.get("spot"),
        breakeven_months_on_demand=_months(price, on_demand * used_month, own_month),
        breakeven_months_reserved=months_reserved,
        breakeven_months_spot=months_spot,
        cheapest=min(options, key=options.get),
    )


# ---------------------------------------------------------------------------------------------
# Cost per unit of work: a training run, a million tokens served
# ---------------------------------------------------------------------------------------------


def _price(inst: CloudInstance, usd_per_hour: object) -> float:
    if usd_per_hour is None:
        if inst.usd_per_hour is None:
            raise ValueError(
                f"usd_per_hour must be given for {inst.key}: no sourced price is recorded for it"
            )
        return inst.usd_per_hour
    return validate.number("usd_per_hour", usd_per_hour, minimum=0, maximum=1e6, strict_min=True)


def training_run_cost_on(
    key: str,
    params: float,
    tokens: float,
    *,
    instances: int = 1,
    mfu: float = 0.4,
    dtype: str = "bf16",
    usd_per_hour: float | None = None,
) -> energy.RunFootprint:
    """Time and rental cost of a 6 x params x tokens training run on ``instances`` of a type.

    Wall clock = 6ND / (GPUs x dense peak(dtype) x MFU)
    (``course.calculators.compute.training_seconds``); cost = GPU-hours x the instance's hourly
    price / its GPUs. ``usd_per_hour`` overrides the recorded price (today's price, a spot or
    reserved rate). Energy is in the rent.
    """
    inst = instance(key)
    n = validate.positive_int("instances", instances, maximum=100_000)
    price = _price(inst, usd_per_hour)
    return energy.run_footprint(
        params,
        tokens,
        inst.gpu,
        n * inst.gpus,
        dtype=dtype,
        mfu=mfu,
        usd_per_gpu_hour=price / inst.gpus,
    )


def usd_per_million_tokens(usd_per_hour: float, tokens_per_s: float) -> float:
    """Cost of 1,000,000 generated tokens at an hourly price and a throughput (tokens/s).

    The price is often a whole fleet's (GPUs x price per GPU-hour, each checked where it was
    typed), so it has no upper bound: 66 GPUs at $15,152 per GPU-hour cost over $1M an hour.
    """
    price = validate.number("usd_per_hour", usd_per_hour, minimum=0)
    rate = validate.number("tokens_per_s", tokens_per_s, minimum=0, maximum=1e12, strict_min=True)
    return price / (rate * HOUR) * 1e6


@dataclass(frozen=True)
class ServingCost(Report):
    """Decode throughput floor of a model on an instance and what a million tokens costs."""

    _title = "Serving cost"
    _formats = {"usd_per_million_tokens": "usd"}

    instance: str
    usd_per_hour: float
    batch: int  # sequences decoded together, per GPU
    efficiency: float  # achieved share of the roofline throughput
    tokens_per_s: float  # whole instance
    usd_per_million_tokens: float


def serving_cost(
    key: str,
    params: float,
    *,
    dtype: str = "bf16",
    batch: int = 1,
    efficiency: float = 1.0,
    usd_per_hour: float | None = None,
) -> ServingCost:
    """Cost per 1M generated tokens of a model served on every GPU of an instance.

    Throughput per GPU is the decoding roofline (``course.calculators.compute.decode_step``: all
    weights read once per step, ``batch`` tokens per step) x ``efficiency``; with efficiency 1 the
    cost is a lower bound (the H100 reference run reached about half the floor at batch 1: lesson
    02). Tensor parallelism across the instance's GPUs gives the same total floor, so the model only
    has to fit in the instance's memory (weights only; the KV cache is lesson 07).
    """
    inst = instance(key)
    price = _price(inst, usd_per_hour)
    eff = validate.fraction("efficiency", efficiency)
    # A floor: compute.decode_step divides by a step time that underflows to 0 for tiny counts.
    n = validate.number("params", params, minimum=1e3, maximum=1e15)
    step = compute.decode_step(n, dtype, inst.gpu, batch)
    if step.weights_bytes > inst.gpu_memory_bytes:
        raise ValueError(
            f"params: the weights ({step.weights_bytes / 1e9:,.0f} GB) do not fit in "
            f"{inst.name}'s {inst.gpu_memory_bytes / 1e9:,.0f} GB"
        )
    rate = inst.gpus * step.tokens_per_s * eff
    return ServingCost(
        instance=inst.name,
        usd_per_hour=price,
        batch=step.batch,
        efficiency=eff,
        tokens_per_s=rate,
        usd_per_million_tokens=usd_per_million_tokens(price, rate),
    )


# ---------------------------------------------------------------------------------------------
# Spot / preemptible training: how often to checkpoint
# ---------------------------------------------------------------------------------------------


# Young (1974) and Daly (2006) live in course.calculators.reliability (lesson 12); lesson 09 uses
# them from here for spot capacity, where a preemption plays the part of a failure.
young_interval_seconds = reliability.young_interval_seconds
daly_interval_seconds = reliability.daly_interval_seconds
expected_wall_clock_seconds = reliability.expected_wall_clock_seconds


@dataclass(frozen=True)
class SpotRun(Report):
    """A training job on preemptible (spot) capacity, checkpointed at the Daly interval."""

    _title = "Spot training with checkpoints"

    interval_seconds: float  # work between checkpoints
    young_interval_seconds: float
    wall_clock_seconds: float  # expected, with checkpoints, preemptions and re-done work
    checkpointing_seconds: float  # time spent writing checkpoints
    lost_and_restart_seconds: float  # re-done work and restarts after preemptions
    overhead_fraction: float  # wall clock / work - 1
    expected_preemptions: float
    spot_cost_usd: float
    on_demand_cost_usd: float  # the same work, uninterrupted, no checkpoints
    cheaper: str


def spot_training(
    solve_seconds: float,
    spot_usd_per_hour: float,
    on_demand_usd_per_hour: float,
    *,
    checkpoint_seconds: float,
    mtbf_seconds: float,
    restart_seconds: float = 0.0,
    interval_seconds: float | None = None,
) -> SpotRun:
    """Expected time and cost of ``solve_seconds`` of training on spot capacity vs on-demand.

    Checkpoints every :func:`daly_interval_seconds` (or ``interval_seconds``); the wall clock is
    Daly's expectation (:func:`expected_wall_clock_seconds`); preemptions arrive on average every
    ``mtbf_seconds``. Spot cost = wall clock x spot rate; on-demand = work x on-demand rate.
    """
    spot = _rate("spot_usd_per_hour", spot_usd_per_hour)
    on_demand = _rate("on_demand_usd_per_hour", on_demand_usd_per_hour)
    delta, mtbf = reliability.checkpoint_args(checkpoint_seconds, mtbf_seconds)
    tau = daly_interval_seconds(delta, mtbf) if interval_seconds is None else interval_seconds
    wall = expected_wall_clock_seconds(
        solve_seconds, tau, delta, mtbf, restart_seconds=restart_seconds
    )
    solve = float(solve_seconds)
    writing = solve / float(tau) * delta
    spot_cost = wall / HOUR * spot
    od_cost = solve / HOUR * on_demand
    return SpotRun(
        interval_seconds=float(tau),
        young_interval_seconds=young_interval_seconds(delta, mtbf),
        wall_clock_seconds=wall,
        checkpointing_seconds=writing,
        lost_and_restart_seconds=max(wall - solve - writing, 0.0),
        overhead_fraction=wall / solve - 1,
        expected_preemptions=wall / mtbf,
        spot_cost_usd=spot_cost,
        on_demand_cost_usd=od_cost,
        cheaper="spot" if spot_cost < od_cost else "on-demand",
    )


__all__ = [
    "HOURS_PER_MONTH",
    "INSTANCES",
    "PRICE_KINDS",
    "RentedMatch",
    "CloudInstance",
    "OwnVsRent",
    "ServingCost",
    "SpotRun",
    "breakeven_hours",
    "breakeven_months",
    "daly_interval_seconds",
    "expected_wall_clock_seconds",
    "instance",
    "instance_gpu",
    "instances_table",
    "own_vs_rent",
    "price_change_fraction",
    "price_history",
    "rent_to_match",
    "serving_cost",
    "spot_training",
    "training_run_cost_on",
    "usd_per_million_tokens",
    "young_interval_seconds",
]
