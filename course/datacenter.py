"""Power, cooling, racks, and planning a GPU cluster for a model.

- Energy cost = power x hours x price (x PUE for the whole facility). Seed 003's example,
  1 DGX H100 at 10.2 kW and $0.10/kWh, is 10.2 x 8,760 x 0.10 = $8,935 a year at full power.
- Every watt a rack draws becomes heat the cooling must remove: 1 W = 3.412 BTU/h; one "ton" of
  cooling = 12,000 BTU/h = 3.517 kW (ASHRAE definitions).
- :func:`cluster_for_model` answers practice question 8 of seed 003 ("Design a DGX-based
  infrastructure for training a 175B parameter model"): the smallest tensor x pipeline split that
  fits the memory, then data parallelism for a time target (Megatron-LM practice: tensor
  parallelism inside a server's NVLink domain, pipeline across servers; Narayanan et al. 2021).

Used by lessons 08, 09 and 10. Layer 2: no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from course import hardware, validate
from course.compute import MAX_GPUS, training_seconds
from course.memory import params_of
from course.models import TransformerConfig
from course.parallel import parallel_training_memory_per_gpu
from course.report import Report
from course.units import DAY, KWH, YEAR

#: 1 watt in BTU per hour (1 BTU/h = 0.29307107 W).
BTU_PER_HOUR_PER_WATT = 1 / 0.29307107
#: One ton of refrigeration: 12,000 BTU/h, in watts.
WATTS_PER_COOLING_TON = 12_000 * 0.29307107
MAX_WATTS = 1e10  # 10 GW: more than any datacenter campus
MAX_SYSTEMS = 10**7


def _watts(name: str, value: object) -> float:
    return validate.number(name, value, minimum=0, maximum=MAX_WATTS)


def _price_kwh(value: object) -> float:
    return validate.number("usd_per_kwh", value, minimum=0, maximum=1e3)


def _pue(value: object) -> float:
    return validate.number("pue", value, minimum=1, maximum=10)


def _system(value: object) -> hardware.System:
    if isinstance(value, hardware.System):
        return value
    if isinstance(value, str) and value in hardware.SYSTEMS:
        return hardware.SYSTEMS[value]
    raise ValueError(f"system must be one of {', '.join(hardware.SYSTEMS)}; got {value!r}")


def annual_energy_cost_usd(
    power_watts: float,
    usd_per_kwh: float,
    *,
    systems: int = 1,
    utilization: float = 1.0,
    pue: float = 1.0,
) -> float:
    """Yearly electricity bill: power x systems x utilization x PUE x 8,760 h x price per kWh.

    ``power_watts`` is one system's draw (a DGX H100's maximum is 10,200 W); ``utilization`` the
    average fraction of that drawn over the year; ``pue`` (power usage effectiveness, >= 1) adds
    the facility's cooling and losses: 1.0 counts the IT load only (seed 003 does), 1.2-1.6 is
    typical of modern datacenters.
    """
    p = _watts("power_watts", power_watts)
    price = _price_kwh(usd_per_kwh)
    n = validate.positive_int("systems", systems, maximum=MAX_SYSTEMS)
    util = validate.fraction("utilization", utilization, allow_zero=True)
    return p * n * util * _pue(pue) * YEAR / KWH * price


def energy_cost_usd(
    power_watts: float, seconds: float, usd_per_kwh: float, *, pue: float = 1.0
) -> float:
    """Cost of drawing ``power_watts`` for ``seconds`` at ``usd_per_kwh`` (x PUE)."""
    p = _watts("power_watts", power_watts)
    t = validate.number("seconds", seconds, minimum=0, maximum=1e12)
    return p * t * _pue(pue) / KWH * _price_kwh(usd_per_kwh)


@dataclass(frozen=True)
class PodEnergy(Report):
    """Yearly power and electricity cost of a number of DGX-class systems."""

    _title = "Annual energy"
    _formats = {"system": "text", "systems": "number", "gpus": "number"}

    system: str
    systems: int
    gpus: int
    it_power_watts: float  # all systems at their maximum draw
    facility_power_watts: float  # x utilization x PUE
    energy_per_year_joules: float
    cost_per_year_usd: float


def pod_annual_energy_cost_usd(
    system: str | hardware.System = "dgx-h100",
    *,
    usd_per_kwh: float,
    gpus: int | None = None,
    systems: int | None = None,
    utilization: float = 1.0,
    pue: float = 1.0,
) -> PodEnergy:
    """Practice question 10 of seed 003: the annual power cost of a "32-GPU DGX POD".

    The question is ambiguous: 32 GPUs are 4 DGX H100 systems (``gpus=32``), while an NVIDIA DGX
    POD is 32 *systems* (``systems=32``, 256 GPUs). Give exactly one of ``gpus`` and ``systems``.
    At 10.2 kW each and $0.10/kWh: 4 systems $35,741/year, 32 systems $285,926/year (seed 003
    rounds this to $288,000), before PUE.
    """
    sys_ = _system(system)
    if (gpus is None) == (systems is None):
        raise ValueError(f"give exactly one of gpus and systems, got gpus={gpus!r}, "
                         f"systems={systems!r}")  # fmt: skip
    if gpus is not None:
        n_gpus = validate.positive_int("gpus", gpus, maximum=MAX_SYSTEMS * sys_.gpus)
        n_systems = math.ceil(n_gpus / sys_.gpus)
    else:
        n_systems = validate.positive_int("systems", systems, maximum=MAX_SYSTEMS)
    it_power = n_systems * sys_.max_power_watts
    util = validate.fraction("utilization", utilization, allow_zero=True)
    facility = it_power * util * _pue(pue)
    return PodEnergy(
        system=sys_.name,
        systems=n_systems,
        gpus=n_systems * sys_.gpus,
        it_power_watts=it_power,
        facility_power_watts=facility,
        energy_per_year_joules=facility * YEAR,
        cost_per_year_usd=annual_energy_cost_usd(
            sys_.max_power_watts, usd_per_kwh, systems=n_systems, utilization=util, pue=pue
        ),
    )


@dataclass(frozen=True)
class RackCheck(Report):
    """Does a rack of GPU systems fit a power budget and the rack's height; what heat it makes."""

    _title = "Rack check"
    _formats = {"system": "text", "systems": "number", "heat_btu_per_hour": "number",
                "cooling_tons": "number", "rack_units_used": "number",
                "fits_power": "text", "fits_space": "text"}  # fmt: skip

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

    Defaults follow seed 003's "typical AI rack": 4 DGX H100 (4 x 10.2 kW) plus switches (2 kW)
    and storage (1 kW) = 43.8 kW against its "air cooling up to 30-40 kW/rack". That limit is
    the seed's (unverified); many enterprise racks are provisioned for 10-20 kW, so set
    ``power_limit_watts`` to your facility's figure. A DGX H100 is 8U (DGX H100 User Guide).
    """
    sys_ = _system(system)
    n = validate.positive_int("systems", systems, maximum=1000)
    limit = validate.number("power_limit_watts", power_limit_watts, minimum=0, maximum=MAX_WATTS,
                            strict_min=True)  # fmt: skip
    other = _watts("other_watts", other_watts)
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


# ---------------------------------------------------------------------------------------------
# Planning a cluster for a model (practice question 8)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClusterPlan(Report):
    """A tensor x pipeline x data-parallel layout of a training run on DGX-class systems."""

    _title = "Cluster plan"
    _formats = {"model": "text", "system": "text", "tensor_parallel": "number",
                "pipeline_parallel": "number", "data_parallel": "number", "gpus": "number",
                "systems": "number"}  # fmt: skip

    model: str
    system: str
    tensor_parallel: int
    pipeline_parallel: int
    data_parallel: int
    gpus: int
    systems: int
    memory_per_gpu_bytes: float  # busiest GPU, with ZeRO over the data-parallel GPUs
    usable_memory_per_gpu_bytes: float
    training_seconds: float  # nan when no token count was given
    power_watts: float  # all systems at maximum draw
    annual_energy_cost_usd: float  # at the given price, full power all year, x PUE


def cluster_for_model(
    config: TransformerConfig,
    *,
    system: str | hardware.System = "dgx-h100",
    seq_len: int = 2048,
    micro_batch: int = 1,
    tokens: float | None = None,
    days: float | None = None,
    dtype: str = "bf16",
    mfu: float = 0.4,
    recompute: str = "selective",
    sequence_parallel: bool = True,
    zero_stage: int = 1,
    precision: str = "mixed",
    optimizer: str = "adam",
    usable_fraction: float = 0.9,
    usd_per_kwh: float = 0.10,
    pue: float = 1.0,
) -> ClusterPlan:
    """Plan the GPUs for training ``config``: memory first, then the time target.

    1. Model parallelism, by Megatron-LM's rule (Narayanan et al. 2021, takeaway 1): raise the
       tensor-parallel degree t through 1, 2, 4 ... up to the GPUs of one system (and dividing the
       heads); if even that does not fit, add pipeline stages p (dividing the layers) until the
       busiest GPU's memory (:func:`course.parallel.parallel_training_memory_per_gpu`, with
       ``data_parallel=1``) fits ``usable_fraction`` of a GPU.
    2. Data parallelism d: 1, or, given ``tokens`` and ``days``, enough replicas that 6 x params x
       tokens FLOPs (8 x with ``recompute="full"``) finish in ``days`` at ``mfu`` of the dense
       ``dtype`` peak. ZeRO (``zero_stage``) then shards model states over the d replicas.
    3. Systems = ceil(t x p x d / GPUs per system); power at their maximum draw.

    Raises ValueError when no split fits (try ``recompute="full"``, a smaller ``micro_batch``
    or a GPU with more memory).
    """
    if not isinstance(config, TransformerConfig):
        raise ValueError(f"config must be a TransformerConfig, got {config!r}")
    sys_ = _system(system)
    card = hardware.gpu(sys_.gpu)
    peak = card.peak_flops(validate.choice("dtype", dtype, tuple(card.dense_flops)))
    usable = validate.fraction("usable_fraction", usable_fraction) * card.memory_bytes
    util = validate.number("mfu", mfu, minimum=1e-6, maximum=1)
    if days is not None and tokens is None:
        raise ValueError("days needs tokens: give the number of training tokens too")
    n_tokens = None if tokens is None else params_of("tokens", tokens)
    n_days = None if days is None else validate.number("days", days, minimum=0.01, maximum=1e5)
    price = _price_kwh(usd_per_kwh)
    facility = _pue(pue)
    validate.positive_int("zero_stage", zero_stage, minimum=0, maximum=3)

    def memory(t: int, p: int, d: int = 1) -> float:
        return parallel_training_memory_per_gpu(
            config, seq_len=seq_len, micro_batch=micro_batch, tensor_parallel=t,
            pipeline_parallel=p, data_parallel=d, zero_stage=zero_stage,
            sequence_parallel=sequence_parallel, recompute=recompute, precision=precision,
            optimizer=optimizer,
        ).total_bytes  # fmt: skip

    t_options = [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= sys_.gpus and config.heads % t == 0]
    layout = next(((t, 1) for t in t_options if memory(t, 1) <= usable), None)
    if layout is None:
        t = t_options[-1]
        p_options = [p for p in range(2, config.layers + 1) if config.layers % p == 0]
        layout = next(((t, p) for p in p_options if memory(t, p) <= usable), None)
    if layout is None:
        raise ValueError(
            f"{config.name} does not fit on {card.name} GPUs even with tensor_parallel="
            f"{t_options[-1]} and pipeline_parallel={config.layers}: try recompute='full', a "
            "smaller micro_batch or a GPU with more memory"
        )
    t, p = layout
    params = config.params
    full = recompute == "full"
    d = 1
    if n_tokens is not None and n_days is not None:
        flops = (8.0 if full else 6.0) * params * n_tokens
        gpus_for_time = math.ceil(flops / (n_days * DAY * peak * util))
        if gpus_for_time > MAX_GPUS:
            raise ValueError(
                f"days={days!r} is too short for {n_tokens:g} tokens: it would take "
                f"{gpus_for_time:,} GPUs (more than {MAX_GPUS:,})"
            )
        d = max(1, math.ceil(gpus_for_time / (t * p)))
    gpus = t * p * d
    n_systems = math.ceil(gpus / sys_.gpus)
    seconds = math.nan
    if n_tokens is not None:
        seconds = training_seconds(params, n_tokens, gpus, peak, mfu=util, recompute=full)
    power = n_systems * sys_.max_power_watts
    return ClusterPlan(
        model=config.name,
        system=sys_.name,
        tensor_parallel=t,
        pipeline_parallel=p,
        data_parallel=d,
        gpus=gpus,
        systems=n_systems,
        memory_per_gpu_bytes=memory(t, p, d),
        usable_memory_per_gpu_bytes=usable,
        training_seconds=seconds,
        power_watts=power,
        annual_energy_cost_usd=power * facility * YEAR / KWH * price,
    )


__all__ = [
    "BTU_PER_HOUR_PER_WATT",
    "ClusterPlan",
    "PodEnergy",
    "RackCheck",
    "WATTS_PER_COOLING_TON",
    "annual_energy_cost_usd",
    "cluster_for_model",
    "energy_cost_usd",
    "pod_annual_energy_cost_usd",
    "rack_check",
]
