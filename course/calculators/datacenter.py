"""Power, cooling, racks, and planning a GPU cluster for a model.

- Energy cost = power x hours x price (x PUE for the whole facility). *AI Infrastructure*'s example,
  1 DGX H100 at 10.2 kW and $0.10/kWh, is 10.2 x 8,760 x 0.10 = $8,935 a year at full power.
- Every watt a rack draws becomes heat the cooling must remove: 1 W = 3.412 BTU/h; one "ton" of
  cooling = 12,000 BTU/h = 3.517 kW (ASHRAE definitions).
- :func:`cluster_for_model` answers practice question 8 of *AI Infrastructure* ("Design a DGX-based
  infrastructure for training a 175B parameter model"): the smallest tensor x pipeline split that
  fits the memory, then data parallelism for a time target (Megatron-LM practice: tensor
  parallelism inside a server's NVLink domain, pipeline across servers; Narayanan et al. 2021).

Used by lessons 08, 09 and 10. Layer 2: no torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from course.calculators import energy
from course.calculators.compute import decode_step, training_flops, training_seconds
from course.calculators.energy import MAX_SYSTEMS, MAX_WATTS
from course.calculators.memory import (
    gpus_needed,
    inference_memory,
    model_state_bytes,
    params_of,
    training_memory,
)
from course.calculators.parallel import parallel_training_memory_per_gpu
from course.facts import hardware, validate
from course.facts.models import TransformerConfig, checked_config
from course.facts.report import Report
from course.facts.units import DAY, YEAR
from course.facts.validate import MAX_GPUS

#: 1 watt in BTU per hour (1 BTU/h = 0.29307107 W).
BTU_PER_HOUR_PER_WATT = 1 / 0.29307107
#: One ton of refrigeration: 12,000 BTU/h, in watts.
WATTS_PER_COOLING_TON = 12_000 * 0.29307107


def _watts(name: str, value: object) -> float:
    return validate.number(name, value, minimum=0, maximum=MAX_WATTS)


def _system(value: object) -> hardware.System:
    if isinstance(value, hardware.System):
        return value
    if isinstance(value, str) and value in hardware.SYSTEMS:
        return hardware.SYSTEMS[value]
    raise ValueError(f"system must be one of {', '.join(hardware.SYSTEMS)}; got {value!r}")


@dataclass(frozen=True)
class PodEnergy(Report):
    """Yearly power and electricity cost of a number of DGX-class systems."""

    _title = "Annual energy"

    system: str
    systems: int
    gpus: int
    it_power_watts: float  # all systems at their maximum draw
    facility_power_watts: float  # x utilization x PUE
    energy_per_year_joules: float
    cost_per_year_usd: float


def pod_annual_energy(
    system: str | hardware.System = "dgx-h100",
    *,
    usd_per_kwh: float,
    gpus: int | None = None,
    systems: int | None = None,
    utilization: float = 1.0,
    pue: float = 1.0,
) -> PodEnergy:
    """Practice question 10 of *AI Infrastructure*: the annual power cost of a "32-GPU DGX POD".

    The question is ambiguous: 32 GPUs are 4 DGX H100 systems (``gpus=32``), while an NVIDIA DGX
    POD is 32 *systems* (``systems=32``, 256 GPUs). Give exactly one of ``gpus`` and ``systems``.
    At 10.2 kW each and $0.10/kWh: 4 systems $35,741/year, 32 systems $285,926/year (*AI Infrastructure*
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
    facility = it_power * util * validate.pue(pue)
    return PodEnergy(
        system=sys_.name,
        systems=n_systems,
        gpus=n_systems * sys_.gpus,
        it_power_watts=it_power,
        facility_power_watts=facility,
        energy_per_year_joules=facility * YEAR,
        cost_per_year_usd=energy.annual_electricity_usd(
            sys_.max_power_watts, usd_per_kwh, systems=n_systems, utilization=util, pue=pue
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

    Defaults follow *AI Infrastructure*'s "typical AI rack": 4 DGX H100 (4 x 10.2 kW) plus switches (2 kW)
    and storage (1 kW) = 43.8 kW against its "air cooling up to 30-40 kW/rack". That limit is
    the reading's (unverified); many enterprise racks are provisioned for 10-20 kW, so set
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
    usable_fraction: float = 0.9,
    usd_per_kwh: float = 0.10,
    pue: float = 1.0,
) -> ClusterPlan:
    """Plan the GPUs for training ``config``: memory first, then the time target.

    1. Model parallelism, by Megatron-LM's rule (Narayanan et al. 2021, takeaway 1): raise the
       tensor-parallel degree t through 1, 2, 4 ... up to the GPUs of one system (and dividing the
       heads); if even that does not fit, add pipeline stages p (dividing the layers) until the
       busiest GPU's memory (:func:`course.calculators.parallel.parallel_training_memory_per_gpu`, with
       ``data_parallel=1``) fits ``usable_fraction`` of a GPU.
    2. Data parallelism d: 1, or, given ``tokens`` and ``days``, enough replicas that 6 x params x
       tokens FLOPs (8 x with ``recompute="full"``) finish in ``days`` at ``mfu`` of the dense
       ``dtype`` peak. ZeRO (``zero_stage``) then shards model states over the d replicas.
    3. Systems = ceil(t x p x d / GPUs per system); power at their maximum draw.

    Raises ValueError when no split fits (try ``recompute="full"``, a smaller ``micro_batch``
    or a GPU with more memory).
    """
    checked_config(config)
    sys_ = _system(system)
    card = hardware.gpu(sys_.gpu)
    peak = card.peak_flops(validate.choice("dtype", dtype, tuple(card.dense_flops)))
    usable = validate.fraction("usable_fraction", usable_fraction) * card.memory_bytes
    util = validate.number("mfu", mfu, minimum=1e-6, maximum=1)
    if days is not None and tokens is None:
        raise ValueError("days needs tokens: give the number of training tokens too")
    n_tokens = None if tokens is None else params_of("tokens", tokens)
    n_days = None if days is None else validate.number("days", days, minimum=0.01, maximum=1e5)
    validate.usd_per_kwh(usd_per_kwh)
    validate.pue(pue)
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
        memory_per_gpu_bytes=memory(t, p, d),
        usable_memory_per_gpu_bytes=usable,
        training_seconds=seconds,
        power_watts=power,
        annual_electricity_usd=energy.annual_electricity_usd(power, usd_per_kwh, pue=pue),
    )


# =============================================================================================
# Lesson 08: DGX systems from parts, the SuperPOD, MIG, power and PUE, GPU choice, Grace
# Hopper offload, and a whole training design (practice questions 4, 5, 7, 8 and 10 of *AI Infrastructure*)
# =============================================================================================

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
#: A liquid-cooled DGX GB200 NVL72 scalable unit (8 racks of 72 GPUs) needs a TDP of 1.2 MW
#: (NVIDIA DGX SuperPOD GB200 reference architecture): 150 kW per rack.
GB200_NVL72_SU_WATTS = 1.2e6
GB200_NVL72_RACKS_PER_SU = 8
MAX_SUS = 256  # 65,536 GPUs: the most a three-tier fat tree of 64-port switches connects


def _gpu(value: object) -> hardware.GPU:
    if isinstance(value, hardware.GPU):
        return value
    if isinstance(value, str):
        return hardware.gpu(value)
    raise ValueError(f"gpu must be one of {', '.join(hardware.GPUS)}; got {value!r}")


def _peak_or_none(card: hardware.GPU, dtype: str, *, sparse: bool) -> float | None:
    table = card.sparse_flops if sparse else card.dense_flops
    return table.get(dtype)


@dataclass(frozen=True)
class DgxSummary(Report):
    """A DGX system's aggregate figures, each = GPUs x the GPU's datasheet figure (None: no such
    peak on this GPU, e.g. FP8 on an A100)."""

    _title = "DGX from its parts"

    system: str
    gpus: int
    gpu_memory_bytes: float
    memory_bandwidth_bytes_per_s: float
    dense_fp8_flop_per_s: float | None
    sparse_fp8_flop_per_s: float | None
    dense_bf16_flop_per_s: float
    sparse_bf16_flop_per_s: float
    dense_tf32_flop_per_s: float
    sparse_tf32_flop_per_s: float
    nvswitches: int
    nvlink_per_gpu_bytes_per_s: float  # both directions, the figure NVIDIA quotes
    nvlink_total_bytes_per_s: float
    compute_nics: int
    network_bytes_per_s: float  # all compute NICs, one direction
    max_power_watts: float


def dgx_from_parts(system: str | hardware.System = "dgx-h100") -> DgxSummary:
    """A DGX's totals computed from its GPU row and its fabric (``hardware.SYSTEM_FABRICS``).

    DGX H100: 8 x 1,978.9 = 15.8 PFLOP/s dense FP8 (31.7 sparse: the datasheet's "32 PF");
    8 x 80 GB; 8 x 900 GB/s NVLink through 4 NVSwitch chips; 8 x 400 Gb/s = 400 GB/s of
    compute network. DGX A100: 8 x 312 = 2.5 PFLOP/s dense FP16 (*AI Infrastructure*'s "5 PF" is sparse).
    """
    sys_ = _system(system)
    if sys_.key not in hardware.SYSTEM_FABRICS:
        raise ValueError(f"system must be one of {', '.join(hardware.SYSTEM_FABRICS)} (systems "
                         f"with a tabulated fabric); got {system!r}")  # fmt: skip
    fabric = hardware.SYSTEM_FABRICS[sys_.key]
    card = hardware.gpu(sys_.gpu)
    n = sys_.gpus

    def total(dtype: str, sparse: bool) -> float | None:
        peak = _peak_or_none(card, dtype, sparse=sparse)
        return None if peak is None else n * peak

    return DgxSummary(
        system=sys_.name,
        gpus=n,
        gpu_memory_bytes=n * card.memory_bytes,
        memory_bandwidth_bytes_per_s=n * card.memory_bandwidth,
        dense_fp8_flop_per_s=total("fp8", False),
        sparse_fp8_flop_per_s=total("fp8", True),
        dense_bf16_flop_per_s=n * card.dense_flops["bf16"],
        sparse_bf16_flop_per_s=n * card.sparse_flops["bf16"],
        dense_tf32_flop_per_s=n * card.dense_flops["tf32"],
        sparse_tf32_flop_per_s=n * card.sparse_flops["tf32"],
        nvswitches=fabric.nvswitches,
        nvlink_per_gpu_bytes_per_s=card.nvlink_bandwidth,
        nvlink_total_bytes_per_s=n * card.nvlink_bandwidth,
        compute_nics=fabric.compute_nics,
        network_bytes_per_s=fabric.compute_nics * fabric.compute_nic_bandwidth,
        max_power_watts=sys_.max_power_watts,
    )


@dataclass(frozen=True)
class SuperPod(Report):
    """A DGX SuperPOD of some scalable units: systems, GPUs, compute-fabric switches, peaks, power."""

    _title = "DGX SuperPOD"

    architecture: str
    sus: int
    systems: int
    gpus: int
    tiers: int
    leaf_switches: int
    spine_switches: int
    core_switches: int
    node_leaf_cables: int
    leaf_spine_cables: int
    spine_core_cables: int
    dense_fp8_flop_per_s: float
    sparse_fp8_flop_per_s: float
    dense_bf16_flop_per_s: float
    systems_power_watts: float  # DGX systems at maximum draw
    switches_power_watts: float  # switches x watts_per_switch (0 unless given)
    it_power_watts: float


def superpod(
    sus: int, *, architecture: str = "dgx-superpod-h100", watts_per_switch: float = 0.0
) -> SuperPod:
    """A DGX SuperPOD of ``sus`` scalable units, its compute fabric derived from the switch radix.

    Each SU is 32 DGX; rail-optimised: NIC *i* of each DGX in an SU goes to leaf switch *i* of
    that SU, so 8 leaves per SU, each using half its 64 ports for the SU's 32 systems and half
    going up. Two tiers while GPUs <= ports**2 / 2 (2,048): spines = leaves / 2 (all 64 ports
    down). Beyond, three tiers: spines = leaves (half down, half up), cores = spines / 2. One
    cable per GPU between each pair of tiers. These reproduce the reference architecture's
    table (2 SU: 16 leaf, 8 spine; 16 SU: 128, 128, 64 core). Switch power is not in the RA:
    give ``watts_per_switch`` from your switch's datasheet to count it.
    """
    if not isinstance(architecture, str) or architecture not in hardware.SUPERPODS:
        raise ValueError(f"architecture must be one of {', '.join(hardware.SUPERPODS)}; "
                         f"got {architecture!r}")  # fmt: skip
    arch = hardware.SUPERPODS[architecture]
    n_su = validate.positive_int("sus", sus, maximum=MAX_SUS)
    switch_w = _watts("watts_per_switch", watts_per_switch)
    sys_ = hardware.SYSTEMS[arch.system]
    card = hardware.gpu(sys_.gpu)
    systems = n_su * arch.systems_per_su
    gpus = systems * sys_.gpus
    half = arch.switch_ports // 2
    leaves = n_su * arch.rails
    if gpus <= arch.switch_ports * half:
        tiers, spines, cores = 2, math.ceil(leaves * half / arch.switch_ports), 0
    else:
        tiers, spines = 3, leaves
        cores = math.ceil(spines * half / arch.switch_ports)
    switches = leaves + spines + cores
    systems_power = systems * sys_.max_power_watts
    return SuperPod(
        architecture=arch.key,
        sus=n_su,
        systems=systems,
        gpus=gpus,
        tiers=tiers,
        leaf_switches=leaves,
        spine_switches=spines,
        core_switches=cores,
        node_leaf_cables=gpus,
        leaf_spine_cables=gpus,
        spine_core_cables=gpus if tiers == 3 else 0,
        dense_fp8_flop_per_s=gpus * card.dense_flops["fp8"],
        sparse_fp8_flop_per_s=gpus * card.sparse_flops["fp8"],
        dense_bf16_flop_per_s=gpus * card.dense_flops["bf16"],
        systems_power_watts=systems_power,
        switches_power_watts=switches * switch_w,
        it_power_watts=systems_power + switches * switch_w,
    )


# ---------------------------------------------------------------------------------------------
# MIG: placing instances on one GPU (practice question 5)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class MigLayout(Report):
    """GPU instances placed on one GPU: where each starts, SMs and memory used and left idle."""

    _title = "MIG layout"

    gpu: str
    placement: str  # "3g.40gb@0, 2g.20gb@4, 1g.10gb@6": profile@first memory slice
    instances: int
    sms_used: int
    sms_idle: int
    sms_total: int
    compute_slices_used: int
    memory_slices_used: int
    memory_bytes: float  # all instances together
    idle_sm_fraction: float
    starts: tuple = field(default=(), repr=False)  # (profile name, start) per instance


def _mig_profile(profiles: dict, name: object) -> hardware.MigProfile:
    if not isinstance(name, str) or name not in profiles:
        raise ValueError(f"MIG profile must be one of {', '.join(profiles)}; got {name!r}")
    return profiles[name]


def mig_layout(gpu: str | hardware.GPU, profiles: list[str] | tuple[str, ...]) -> MigLayout:
    """Place instances of the named ``profiles`` on one GPU, or refuse with the reason.

    Rules (NVIDIA MIG user guide): a GPU is 8 memory slices and 7 compute slices; a profile
    starts only at its listed placements and covers consecutive memory slices; instances may
    not share a memory slice; their compute slices add up to at most 7. A depth-first search
    tries every placement (largest instances first), so a mix is refused only when no
    arrangement exists. Seven 1g.10gb on an H100: 7 x 16 = 112 of 132 SMs; 20 SMs idle.
    """
    card = _gpu(gpu)
    table = {p.name: p for p in hardware.mig_profiles(card.key)}
    if not isinstance(profiles, list | tuple) or not profiles:
        raise ValueError(f"profiles must be a non-empty list of MIG profile names "
                         f"({', '.join(table)}); got {profiles!r}")  # fmt: skip
    chosen = [_mig_profile(table, name) for name in profiles]
    for p in table.values():
        count = sum(1 for c in chosen if c.name == p.name)
        if count > p.instances:
            raise ValueError(f"at most {p.instances} x {p.name} fit on one {card.name}; "
                             f"got {count}")  # fmt: skip
    compute = sum(p.compute_slices for p in chosen)
    if compute > hardware.MIG_COMPUTE_SLICES:
        raise ValueError(
            f"profiles use {compute} compute slices; one {card.name} has "
            f"{hardware.MIG_COMPUTE_SLICES}: remove "
            f"{compute - hardware.MIG_COMPUTE_SLICES} slice(s) of instances"
        )
    order = sorted(chosen, key=lambda p: (-p.memory_slices, -p.compute_slices, p.name))

    def place(i: int, used: frozenset) -> list[int] | None:
        if i == len(order):
            return []
        p = order[i]
        for start in p.placements:
            cover = frozenset(range(start, start + p.memory_slices))
            if cover & used:
                continue
            rest = place(i + 1, used | cover)
            if rest is not None:
                return [start, *rest]
        return None

    starts = place(0, frozenset())
    if starts is None:
        mix = ", ".join(p.name for p in order)
        raise ValueError(
            f"no valid placement of {mix} on one {card.name}: their memory slices overlap in "
            "every arrangement (each profile starts only at its allowed slices; see the MIG "
            "user guide's placement table)"
        )
    pairs = sorted(zip((p.name for p in order), starts, strict=True), key=lambda x: x[1])
    sms_used = sum(p.sms for p in chosen)
    return MigLayout(
        gpu=card.name,
        placement=", ".join(f"{name}@{start}" for name, start in pairs),
        instances=len(chosen),
        sms_used=sms_used,
        sms_idle=card.sms - sms_used,
        sms_total=card.sms,
        compute_slices_used=compute,
        memory_slices_used=sum(p.memory_slices for p in chosen),
        memory_bytes=sum(p.memory_bytes for p in chosen),
        idle_sm_fraction=(card.sms - sms_used) / card.sms,
        starts=tuple(pairs),
    )


@dataclass(frozen=True)
class MigServingFit(Report):
    """The smallest MIG slice that holds a model's serving memory (weights + KV cache)."""

    _title = "Serving on a MIG slice"

    gpu: str
    model: str
    dtype: str
    needed_bytes: float  # weights + KV cache (+ overhead) from course.calculators.memory
    smallest_profile: str  # "none" if even the whole GPU is too small
    profile_memory_bytes: float
    instances_per_gpu: int  # replicas of the model one GPU can serve side by side
    fits_on: str  # every profile that holds it


def mig_serving_fit(
    model: TransformerConfig | float,
    *,
    gpu: str | hardware.GPU = "h100-sxm",
    dtype: str = "bf16",
    seq_len: int = 0,
    batch: int = 1,
    overhead_fraction: float = 0.1,
) -> MigServingFit:
    """Which MIG profiles of ``gpu`` hold ``model`` for serving ``batch`` sequences of ``seq_len``.

    Memory = :func:`course.calculators.memory.inference_memory` (weights + KV cache + ``overhead_fraction``
    of both). A profile fits when that is at most its memory. ``instances_per_gpu`` is how many
    of the smallest fitting profile one GPU holds: that many independent replicas (MIG's use
    case: many small models or tenants on one GPU). Llama-2-7B in bf16 (13.5 GB) needs a
    20 GB slice on an H100: 4 replicas, not 7.
    """
    card = _gpu(gpu)
    table = hardware.mig_profiles(card.key)
    need = inference_memory(model, dtype=dtype, seq_len=seq_len, batch=batch,
                            overhead_fraction=overhead_fraction).total_bytes  # fmt: skip
    fitting = [p for p in table if p.memory_bytes >= need]
    name = model.name if isinstance(model, TransformerConfig) else f"{float(model):.3g} params"
    if not fitting:
        return MigServingFit(card.name, name, dtype, need, "none", 0.0, 0, "none")
    best = min(fitting, key=lambda p: (p.memory_bytes, p.compute_slices))
    return MigServingFit(
        gpu=card.name,
        model=name,
        dtype=dtype,
        needed_bytes=need,
        smallest_profile=best.name,
        profile_memory_bytes=best.memory_bytes,
        instances_per_gpu=best.instances,
        fits_on=", ".join(p.name for p in fitting),
    )


# ---------------------------------------------------------------------------------------------
# Power from the GPU to the hall, PUE
# ---------------------------------------------------------------------------------------------


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

    Defaults: 32 DGX H100 (one SU) at *AI Infrastructure*'s 4 per rack with 3 kW of switches and storage
    per rack, at the industry-average PUE (Uptime Institute, 1.58). A DGX H100's 8 x 700 W =
    5.6 kW of GPUs is 55 % of its 10.2 kW: CPUs, memory, NICs, NVSwitches and fans draw the rest.
    """
    sys_ = _system(system)
    n = validate.positive_int("systems", systems, maximum=MAX_SYSTEMS)
    per_rack = validate.positive_int("systems_per_rack", systems_per_rack, maximum=64)
    other = _watts("other_watts_per_rack", other_watts_per_rack)
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


# ---------------------------------------------------------------------------------------------
# Practice question 4: A100 or H100 for a workload
# ---------------------------------------------------------------------------------------------

WORKLOADS = ("training", "serving")


@dataclass(frozen=True)
class GpuChoice(Report):
    """Two GPUs compared for one workload: speed-up, GPUs needed, cost per million tokens."""

    _title = "Which GPU?"

    workload: str
    model: str
    gpu_a: str
    gpu_b: str
    dtype_a: str  # the dtype each GPU computes in (an A100 has no FP8: it falls back to bf16)
    dtype_b: str
    compute_ratio: float  # dense peak of b / a, in their dtypes
    bandwidth_ratio: float  # memory bandwidth of b / a
    speedup: float  # b over a for this workload (roofline: the ratio of the binding resource)
    bound: str  # what limits the workload: "compute" or "memory"
    gpus_needed_a: int  # to hold the model (memory)
    gpus_needed_b: int
    tokens_per_s_per_gpu_a: float
    tokens_per_s_per_gpu_b: float
    usd_per_million_tokens_a: float
    usd_per_million_tokens_b: float
    budget_usd: float  # 0 = not given
    million_tokens_for_budget_a: float
    million_tokens_for_budget_b: float
    pick: str
    reason: str


def choose_gpu(
    model: TransformerConfig,
    *,
    workload: str = "training",
    dtype: str = "bf16",
    gpu_a: str | hardware.GPU = "a100-80gb-sxm",
    gpu_b: str | hardware.GPU = "h100-sxm",
    usd_per_gpu_hour_a: float,
    usd_per_gpu_hour_b: float,
    batch: int = 1,
    seq_len: int = 2048,
    mfu: float = 0.4,
    budget_usd: float = 0.0,
) -> GpuChoice:
    """Practice question 4 of *AI Infrastructure* ("A100 vs H100, when would you choose each?"), with numbers.

    Training: tokens/s per GPU = ``mfu`` x dense peak / (6 x params) (Kaplan 2020's 6N; the same
    MFU on both), so the speed-up is the ratio of dense peaks in the dtype each GPU can use
    (``fp8`` on an A100 falls back to ``bf16``). GPUs needed = training memory (model states +
    activations, lesson 04) / 90 % of one GPU. Serving: one decoding step's roofline floor
    (:func:`course.calculators.compute.decode_step`, weights only) at ``batch``: memory-bound at small
    batches, so the speed-up is the bandwidth ratio; compute-bound at large ones. Cost per
    million tokens = price per GPU-hour / tokens per GPU-hour. The pick is the cheaper per token;
    the reason says by how much and what limits it. Estimates, not measurements.
    """
    if not isinstance(model, TransformerConfig):
        raise ValueError(f"model must be a TransformerConfig (a preset from course.facts.models), "
                         f"got {model!r}")  # fmt: skip
    kind = validate.choice("workload", workload, WORKLOADS)
    validate.choice("dtype", dtype, ("fp32", "tf32", "fp16", "bf16", "fp8"))
    cards = (_gpu(gpu_a), _gpu(gpu_b))
    prices = (
        validate.number("usd_per_gpu_hour_a", usd_per_gpu_hour_a, minimum=1e-4, maximum=1e4),
        validate.number("usd_per_gpu_hour_b", usd_per_gpu_hour_b, minimum=1e-4, maximum=1e4),
    )  # fmt: skip
    b = validate.positive_int("batch", batch, maximum=10**5)
    s = validate.positive_int("seq_len", seq_len, maximum=2**20)
    util = validate.fraction("mfu", mfu)
    budget = validate.number("budget_usd", budget_usd, minimum=0, maximum=1e12)
    dtypes = tuple(dtype if dtype in c.dense_flops else "bf16" for c in cards)
    peaks = tuple(c.dense_flops[d] for c, d in zip(cards, dtypes, strict=True))
    params = float(model.params)
    if kind == "training":
        mem = training_memory(model, batch=b, seq_len=s, recompute="selective").total_bytes
        tps = tuple(util * peak / training_flops(params, 1) for peak in peaks)
        bound = "compute"
    else:
        weights_dtype = "fp8" if dtype == "fp8" else ("fp32" if dtype == "fp32" else "bf16")
        mem = inference_memory(model, dtype=weights_dtype, seq_len=s, batch=b).total_bytes
        steps = tuple(decode_step(params, weights_dtype, c, b, compute_dtype=d)
                      for c, d in zip(cards, dtypes, strict=True))  # fmt: skip
        tps = tuple(st.tokens_per_s for st in steps)
        bound = steps[1].bound
    needed = tuple(gpus_needed(mem, c) for c in cards)
    usd_per_m = tuple(p / (t * 3600) * 1e6 for p, t in zip(prices, tps, strict=True))
    m_tokens = tuple(budget / u if budget else 0.0 for u in usd_per_m)
    speedup = tps[1] / tps[0]
    cheaper = 0 if usd_per_m[0] <= usd_per_m[1] else 1
    other = 1 - cheaper
    limit = "dense peak" if bound == "compute" else "memory bandwidth"
    reason = (
        f"{cards[1].name} is {speedup:.2f}x the speed of {cards[0].name} here ({kind} is "
        f"{bound}-bound, so the {limit} ratio counts: {dtypes[1]} vs {dtypes[0]}), at "
        f"{prices[1] / prices[0]:.2f}x the price per GPU-hour; {cards[cheaper].name} costs "
        f"${usd_per_m[cheaper]:.3g} per million tokens vs ${usd_per_m[other]:.3g} "
        f"({usd_per_m[other] / usd_per_m[cheaper]:.2f}x); the model needs {needed[0]} x "
        f"{cards[0].name} or {needed[1]} x {cards[1].name} to fit in memory."
    )
    return GpuChoice(
        workload=kind,
        model=model.name,
        gpu_a=cards[0].name,
        gpu_b=cards[1].name,
        dtype_a=dtypes[0],
        dtype_b=dtypes[1],
        compute_ratio=peaks[1] / peaks[0],
        bandwidth_ratio=cards[1].memory_bandwidth / cards[0].memory_bandwidth,
        speedup=speedup,
        bound=bound,
        gpus_needed_a=needed[0],
        gpus_needed_b=needed[1],
        tokens_per_s_per_gpu_a=tps[0],
        tokens_per_s_per_gpu_b=tps[1],
        usd_per_million_tokens_a=usd_per_m[0],
        usd_per_million_tokens_b=usd_per_m[1],
        budget_usd=budget,
        million_tokens_for_budget_a=m_tokens[0],
        million_tokens_for_budget_b=m_tokens[1],
        pick=cards[cheaper].name,
        reason=reason,
    )


# ---------------------------------------------------------------------------------------------
# Practice question 7: Grace Hopper's NVLink-C2C against PCIe for offloading
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class OffloadStep(Report):
    """One decoding step when what does not fit in GPU memory lives in CPU memory."""

    _title = "Decoding with CPU offload"
    _formats = {"fits_host": "text"}

    gpu: str
    model: str
    link: str
    link_bandwidth_bytes_per_s: float  # one direction (host to GPU)
    needed_bytes: float  # weights + KV cache
    gpu_usable_bytes: float
    offloaded_bytes: float  # read over the link every step
    host_memory_bytes: float | None  # None: not tabulated (a PCIe server's RAM varies)
    fits_host: bool
    gpu_read_seconds: float  # the resident part from HBM
    link_seconds: float  # the offloaded part over the link
    step_seconds: float  # the larger (reads overlap at best)
    tokens_per_s: float


def offload_decode_step(
    model: TransformerConfig,
    *,
    gpu: str | hardware.GPU = "h100-sxm",
    dtype: str = "bf16",
    seq_len: int = 4096,
    batch: int = 1,
    usable_fraction: float = 0.9,
) -> OffloadStep:
    """Floor of one decoding step when weights + KV cache exceed GPU memory and the excess is
    streamed from CPU memory each step (every weight and every cached token is read per step).

    time >= max(resident bytes / HBM bandwidth, offloaded bytes / host-link bandwidth), the
    link being the GPU's ``host_link``: PCIe 5.0 x16 (63 GB/s per direction) on an H100 SXM,
    NVLink-C2C (450 GB/s per direction, 900 both ways) on a GH200, whose Grace CPU holds up to
    480 GB. Same offloaded bytes: 7.1x faster over C2C. Weights only matter when the batch is
    small; KV caches grow with ``batch`` x ``seq_len`` (lesson 04).
    """
    if not isinstance(model, TransformerConfig):
        raise ValueError(f"model must be a TransformerConfig, got {model!r}")
    card = _gpu(gpu)
    mem = inference_memory(model, dtype=dtype, seq_len=seq_len, batch=batch)
    usable = validate.fraction("usable_fraction", usable_fraction) * card.memory_bytes
    need = mem.total_bytes
    offloaded = max(0.0, need - usable)
    link = hardware.INTERCONNECTS[card.host_link]
    cpu = next((c for c in hardware.CPUS.values() if c.gpu_link == card.host_link), None)
    host = cpu.memory_bytes if cpu else None
    gpu_s = (need - offloaded) / card.memory_bandwidth
    link_s = offloaded / link.bandwidth
    step = max(gpu_s, link_s)
    return OffloadStep(
        gpu=card.name,
        model=model.name,
        link=link.name,
        link_bandwidth_bytes_per_s=link.bandwidth,
        needed_bytes=need,
        gpu_usable_bytes=usable,
        offloaded_bytes=offloaded,
        host_memory_bytes=host,
        fits_host=host is None or offloaded <= host,
        gpu_read_seconds=gpu_s,
        link_seconds=link_s,
        step_seconds=step,
        tokens_per_s=int(batch) / step,
    )


# ---------------------------------------------------------------------------------------------
# Practice question 8: a DGX design for training a large model, end to end
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DgxDesign(Report):
    """A training design: memory, layout, time, systems, SUs, network, power, racks, energy, cost."""

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
    """Practice question 8 of *AI Infrastructure* ("Design a DGX-based infrastructure for training a 175B
    parameter model"), from the model to the electricity bill.

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
    sys_ = _system(system)
    plan = cluster_for_model(config, system=sys_, seq_len=seq_len, tokens=tokens, days=days,
                             dtype=dtype, mfu=mfu, recompute=recompute, usd_per_kwh=usd_per_kwh,
                             pue=pue)  # fmt: skip
    t, p, d = plan.tensor_parallel, plan.pipeline_parallel, plan.data_parallel
    if pipeline_parallel is not None:
        p = validate.positive_int("pipeline_parallel", pipeline_parallel, maximum=config.layers)
        if config.layers % p:
            raise ValueError(f"pipeline_parallel must divide the {config.layers} layers of "
                             f"{config.name}; got {pipeline_parallel!r}")  # fmt: skip
        usable = 0.9 * hardware.gpu(sys_.gpu).memory_bytes
        if _layout_memory(config, t, p, 1, seq_len, recompute) > usable:
            raise ValueError(f"pipeline_parallel={p} does not fit {config.name} on "
                             f"{hardware.gpu(sys_.gpu).name} GPUs with tensor_parallel={t}: "
                             f"use more stages (the smallest that fits is "
                             f"{plan.pipeline_parallel})")  # fmt: skip
        if gpus is None:
            d = max(1, math.ceil(plan.gpus / (t * p)))
    if gpus is not None:
        n = validate.positive_int("gpus", gpus, maximum=MAX_SUS * 32 * sys_.gpus)
        if n % (t * p):
            raise ValueError(f"gpus must be a multiple of tensor x pipeline = {t} x {p} = "
                             f"{t * p} for {config.name}; got {gpus!r}")  # fmt: skip
        d = n // (t * p)
    n_gpus = t * p * d
    card = hardware.gpu(sys_.gpu)
    full = recompute == "full"
    seconds = training_seconds(config.params, float(tokens), n_gpus,
                               card.dense_flops[dtype], mfu=mfu, recompute=full)  # fmt: skip
    n_systems = math.ceil(n_gpus / sys_.gpus)
    arch = next((a for a in hardware.SUPERPODS.values() if a.system == sys_.key), None)
    su_size = arch.systems_per_su if arch else 32
    n_su = math.ceil(n_systems / su_size)
    if arch is not None:
        fabric = superpod(n_su, architecture=arch.key)
        leaf, spine, core = fabric.leaf_switches, fabric.spine_switches, fabric.core_switches
    else:  # no tabulated SuperPOD for this system (the DGX A100 SuperPOD used 40-port HDR
        # switches): the H100 architecture's rail-optimised rule, 8 rails and 64-port switches
        fabric = superpod(n_su)
        leaf, spine, core = fabric.leaf_switches, fabric.spine_switches, fabric.core_switches
    nics = hardware.SYSTEM_FABRICS.get(sys_.key)
    network = n_systems * nics.compute_nics * nics.compute_nic_bandwidth if nics else math.nan
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
        else _layout_memory(config, t, p, d, seq_len, recompute),
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


def _layout_memory(config: TransformerConfig, t: int, p: int, d: int, seq_len: int,
                   recompute: str) -> float:  # fmt: skip
    """Busiest GPU's memory of a t x p x d layout (ZeRO-1, sequence parallel, micro-batch 1)."""
    return parallel_training_memory_per_gpu(
        config, seq_len=seq_len, micro_batch=1, tensor_parallel=t, pipeline_parallel=p,
        data_parallel=d, zero_stage=1, sequence_parallel=True, recompute=recompute,
    ).total_bytes  # fmt: skip


__all__ = [
    "AVERAGE_RACK_WATTS",
    "DgxDesign",
    "DgxSummary",
    "GB200_NVL72_RACKS_PER_SU",
    "GB200_NVL72_SU_WATTS",
    "GpuChoice",
    "MigLayout",
    "MigServingFit",
    "OffloadStep",
    "PUE_HYPERSCALE",
    "PUE_INDUSTRY_AVERAGE",
    "PowerLevels",
    "SuperPod",
    "WORKLOADS",
    "choose_gpu",
    "dgx_design",
    "dgx_from_parts",
    "mig_layout",
    "mig_serving_fit",
    "offload_decode_step",
    "power_levels",
    "superpod",
    "BTU_PER_HOUR_PER_WATT",
    "ClusterPlan",
    "PodEnergy",
    "RackCheck",
    "WATTS_PER_COOLING_TON",
    "cluster_for_model",
    "pod_annual_energy",
    "rack_check",
]
