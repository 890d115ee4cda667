"""Planning a GPU cluster for a model: the layout that fits, the systems for a time target,
and a whole DGX-based design from the model to the electricity bill.

:func:`cluster_for_model` takes the smallest tensor x pipeline split that fits the memory, then
data parallelism for a time target (Megatron-LM practice: tensor parallelism inside a server's
NVLink domain, pipeline across servers; Narayanan et al. 2021); :func:`dgx_design` adds the SuperPOD
fabric (:mod:`course.calculators.gpu_systems`), racks, power and cost. Practice question 8 of *AI
Infrastructure*. Lessons 08 and 10.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from course.calculators import energy
from course.calculators.compute import training_flops, training_seconds
from course.calculators.facility import PUE_INDUSTRY_AVERAGE
from course.calculators.gpu_systems import MAX_SUS, superpod
from course.calculators.memory import (
    USABLE_MEMORY_FRACTION,
    model_state_bytes,
    params_of,
)
from course.calculators.planner import LayoutSettings, layout_memory_bytes, smallest_layout
from course.facts import hardware, validate
from course.facts.models import TransformerConfig, checked_config
from course.facts.report import Report
from course.facts.units import DAY
from course.facts.validate import MAX_GPUS


@dataclass(frozen=True)
class ClusterPlan(Report):
    """A tensor x pipeline x data-parallel layout of a training run on DGX-class systems."""

    _title = "Cluster plan"

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
    annual_electricity_usd: float  # at the given price, full power all year, x PUE


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
    usable_fraction: float = USABLE_MEMORY_FRACTION,
    usd_per_kwh: float = 0.10,
    pue: float = 1.0,
) -> ClusterPlan:
    """Plan the GPUs for training ``config``: memory first, then the time target.

    1. Model parallelism: the planner's smallest layout
       (:func:`course.calculators.planner.smallest_layout`), by Megatron-LM's rule (Narayanan et al.
       2021, takeaway 1): raise the tensor-parallel degree t through 1, 2, 4 ... up to the GPUs of
       one system (and dividing the heads); if even that does not fit, add pipeline stages p
       (dividing the layers) until the busiest GPU's memory
       (:func:`course.calculators.parallel.parallel_training_memory_per_gpu`, with
       ``data_parallel=1``) fits ``usable_fraction`` of a GPU.
    2. Data parallelism d: 1, or, given ``tokens`` and ``days``, enough replicas that 6 x params x
       tokens FLOPs (8 x with ``recompute="full"``) finish in ``days`` at ``mfu`` of the dense
       ``dtype`` peak. ZeRO (``zero_stage``) then shards model states over the d replicas.
    3. Systems = ceil(t x p x d / GPUs per system); power at their maximum draw.

    Raises ValueError when no split fits (try ``recompute="full"``, a smaller ``micro_batch``
    or a GPU with more memory).
    """
    checked_config(config)
    sys_ = hardware.system(system)
    card = hardware.gpu(sys_.gpu)
    peak = card.peak_flop_per_s(validate.choice("dtype", dtype, tuple(card.dense_flop_per_s)))
    usable = validate.fraction("usable_fraction", usable_fraction) * card.memory_bytes
    util = validate.number("mfu", mfu, minimum=1e-6, maximum=1)
    if days is not None and tokens is None:
        raise ValueError("days needs tokens: give the number of training tokens too")
    n_tokens = None if tokens is None else params_of("tokens", tokens)
    n_days = None if days is None else validate.number("days", days, minimum=0.01, maximum=1e5)
    validate.usd_per_kwh(usd_per_kwh)
    validate.pue(pue)
    validate.positive_int("zero_stage", zero_stage, minimum=0, maximum=3)

    settings = LayoutSettings(
        seq_len=seq_len,
        micro_batch=micro_batch,
        zero_stage=zero_stage,
        sequence_parallel=sequence_parallel,
        recompute=recompute,
        precision=precision,
        optimizer=optimizer,
    )
    layout = smallest_layout(
        config, usable_memory_bytes=usable, max_tensor_parallel=sys_.gpus, settings=settings
    )
    t, p = layout.tensor_parallel, layout.pipeline_parallel
    params = config.params
    full = recompute == "full"
    d = 1
    if n_tokens is not None and n_days is not None:
        flops = training_flops(params, n_tokens, recompute=full)
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
        memory_per_gpu_bytes=layout_memory_bytes(config, t, p, d, settings),
        usable_memory_per_gpu_bytes=usable,
        training_seconds=seconds,
        power_watts=power,
        annual_electricity_usd=energy.annual_electricity_usd(power, usd_per_kwh, pue=pue),
    )


@dataclass(frozen=True)
class DgxDesign(Report):
    """A training design: memory, layout, time, systems, SUs, network, power, racks, energy,
    cost."""

    _title = "DGX design"
    _formats = {"mfu": "percent"}

    model: str
    system: str
    params: float
    tokens: float
    flops: float  # 6 x params x tokens (8 x with full recomputation)
    model_state_bytes: float  # all replicas' model states, unsharded (16 B/param, lesson 04)
    memory_per_gpu_bytes: float  # busiest GPU of the layout (lesson 06)
    tensor_parallel: int
    pipeline_parallel: int
    data_parallel: int
    gpus: int
    systems: int
    sus: int
    leaf_switches: int
    spine_switches: int
    core_switches: int
    network_bytes_per_s: float  # all compute NICs, one direction
    mfu: float
    training_seconds: float
    it_power_watts: float  # systems at maximum draw
    facility_power_watts: float  # x PUE
    racks: int
    energy_joules: float  # facility power x training time
    electricity_usd: float
    hardware_usd: float  # systems x usd_per_system (0 unless given)
    total_usd: float


def dgx_design(
    config: TransformerConfig,
    *,
    tokens: float,
    days: float | None = None,
    gpus: int | None = None,
    system: str | hardware.System = "dgx-h100",
    dtype: str = "bf16",
    mfu: float = 0.4,
    recompute: str = "selective",
    seq_len: int = 2048,
    pipeline_parallel: int | None = None,
    systems_per_rack: int = 4,
    usd_per_kwh: float = 0.10,
    pue: float = PUE_INDUSTRY_AVERAGE,
    usd_per_system: float = 0.0,
) -> DgxDesign:
    """Practice question 8 of *AI Infrastructure* ("Design a DGX-based infrastructure for training a
    175B parameter model"), from the model to the electricity bill.

    Layout from :func:`cluster_for_model` (tensor parallelism inside a DGX, pipeline stages
    across, data parallelism for the time target ``days``); or give ``gpus`` (a multiple of the
    model-parallel group) instead of ``days`` to ask how long a fixed cluster takes. Then SUs of
    32 systems and their fabric (:func:`superpod`), racks of ``systems_per_rack``, power at
    maximum draw x PUE for the whole run, energy cost, and the systems' price if you give
    ``usd_per_system``. ``pipeline_parallel`` forces the number of pipeline stages (tensor
    parallelism stays at the system's GPUs); it must divide the layers and fit in memory.
    Check (tests): GPT-3 175B, 300B tokens on 1,024 A100s at 140 TFLOP/s (45 % of 312) with
    full recomputation takes 34 days (Narayanan et al. 2021, sec. 5.1).
    """
    if (days is None) == (gpus is None):
        raise ValueError(f"give exactly one of days and gpus, got days={days!r}, gpus={gpus!r}")
    sys_ = hardware.system(system)
    plan = cluster_for_model(
        config,
        system=sys_,
        seq_len=seq_len,
        tokens=tokens,
        days=days,
        dtype=dtype,
        mfu=mfu,
        recompute=recompute,
        usd_per_kwh=usd_per_kwh,
        pue=pue,
    )
    t, p, d = plan.tensor_parallel, plan.pipeline_parallel, plan.data_parallel
    settings = LayoutSettings(seq_len=seq_len, recompute=recompute)  # cluster_for_model's defaults
    if pipeline_parallel is not None:
        p = validate.positive_int("pipeline_parallel", pipeline_parallel, maximum=config.layers)
        if config.layers % p:
            raise ValueError(
                f"pipeline_parallel must divide the {config.layers} layers of "
                f"{config.name}; got {pipeline_parallel!r}"
            )
        if layout_memory_bytes(config, t, p, 1, settings) > plan.usable_memory_per_gpu_bytes:
            raise ValueError(
                f"pipeline_parallel={p} does not fit {config.name} on "
                f"{hardware.gpu(sys_.gpu).name} GPUs with tensor_parallel={t}: "
                f"use more stages (the smallest that fits is "
                f"{plan.pipeline_parallel})"
            )
        if gpus is None:
            d = max(1, math.ceil(plan.gpus / (t * p)))
    if gpus is not None:
        n = validate.positive_int("gpus", gpus, maximum=MAX_SUS * 32 * sys_.gpus)
        if n % (t * p):
            raise ValueError(
                f"gpus must be a multiple of tensor x pipeline = {t} x {p} = "
                f"{t * p} for {config.name}; got {gpus!r}"
            )
        d = n // (t * p)
    n_gpus = t * p * d
    card = hardware.gpu(sys_.gpu)
    full = recompute == "full"
    seconds = training_seconds(
        config.params, float(tokens), n_gpus, card.dense_flop_per_s[dtype], mfu=mfu, recompute=full
    )
    n_systems = math.ceil(n_gpus / sys_.gpus)
    arch = next((a for a in hardware.SUPERPODS.values() if a.system == sys_.key), None)
    su_size = arch.systems_per_su if arch else 32
    n_su = math.ceil(n_systems / su_size)
    if n_su > MAX_SUS:  # only with days: validate.positive_int caps gpus
        raise ValueError(
            f"{n_gpus:,} GPUs ({n_su:,} scalable units of {su_size} systems) would train "
            f"{float(tokens):.3g} tokens in {days:g} days, more than the {MAX_SUS} SUs a "
            "SuperPOD's three-tier fabric of 64-port switches connects: give a later deadline "
            "(days) or fewer training tokens"
        )
    if arch is not None:
        fabric = superpod(n_su, architecture=arch.key)
        leaf, spine, core = fabric.leaf_switches, fabric.spine_switches, fabric.core_switches
    else:  # no tabulated SuperPOD for this system (the DGX A100 SuperPOD used 40-port HDR
        # switches): the H100 architecture's rail-optimised rule, 8 rails and 64-port switches
        fabric = superpod(n_su)
        leaf, spine, core = fabric.leaf_switches, fabric.spine_switches, fabric.core_switches
    nics = hardware.SYSTEM_FABRICS.get(sys_.key)
    network = (
        n_systems * nics.compute_nics * nics.compute_nic_bandwidth_bytes_per_s if nics else math.nan
    )
    per_rack = validate.positive_int("systems_per_rack", systems_per_rack, maximum=64)
    it_power = n_systems * sys_.max_power_watts
    facility = it_power * validate.pue(pue)
    joules = energy.energy_joules(it_power, seconds, pue=pue)
    hw = n_systems * validate.number("usd_per_system", usd_per_system, minimum=0, maximum=1e9)
    electricity = energy.electricity_usd(joules, usd_per_kwh)
    return DgxDesign(
        model=config.name,
        system=sys_.name,
        params=float(config.params),
        tokens=float(tokens),
        flops=training_flops(config.params, float(tokens), recompute=full),
        model_state_bytes=model_state_bytes(config.params).total_bytes,
        memory_per_gpu_bytes=plan.memory_per_gpu_bytes
        if gpus is None
        else layout_memory_bytes(config, t, p, d, settings),
        tensor_parallel=t,
        pipeline_parallel=p,
        data_parallel=d,
        gpus=n_gpus,
        systems=n_systems,
        sus=n_su,
        leaf_switches=leaf,
        spine_switches=spine,
        core_switches=core,
        network_bytes_per_s=network,
        mfu=float(mfu),
        training_seconds=seconds,
        it_power_watts=it_power,
        facility_power_watts=facility,
        racks=math.ceil(n_systems / per_rack),
        energy_joules=joules,
        electricity_usd=electricity,
        hardware_usd=hw,
        total_usd=electricity + hw,
    )


__all__ = [
    "ClusterPlan",
    "DgxDesign",
    "cluster_for_model",
    "dgx_design",
]
