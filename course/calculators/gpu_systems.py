"""GPU systems from their parts: a DGX summed from the registry, the SuperPOD fabric, MIG
instances on one GPU, and which GPU suits a workload.

Every number comes from :mod:`course.facts.hardware`. Lessons 08 and 10 (practice questions 2, 4 and
5 of *AI Infrastructure*).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from course.calculators import energy
from course.calculators.compute import decode_step, training_flops
from course.calculators.memory import (
    gpus_needed,
    inference_memory,
    training_memory,
)
from course.facts import hardware, validate
from course.facts.models import TransformerConfig
from course.facts.report import Report
from course.facts.units import YEAR

#: Longest job :func:`gpu_job` times (about 31,700 years: energy.energy_joules' limit).
MAX_JOB_SECONDS = 1e12
MAX_SUS = 256  # 65,536 GPUs: the most a three-tier fat tree of 64-port switches connects


def _peak_or_none(card: hardware.GPU, dtype: str, *, sparse: bool) -> float | None:
    table = card.sparse_flop_per_s if sparse else card.dense_flop_per_s
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

    DGX H100: 8 x 1,978.9 = 15.8 PFLOP/s dense FP8 (31.7 sparse: the datasheet's "32 PF"); 8 x 80
    GB; 8 x 900 GB/s NVLink through 4 NVSwitch chips; 8 x 400 Gb/s = 400 GB/s of compute network.
    DGX A100: 8 x 312 = 2.5 PFLOP/s dense FP16 (*AI Infrastructure*'s "5 PF" is sparse).
    """
    sys_ = hardware.system(system)
    if sys_.key not in hardware.SYSTEM_FABRICS:
        raise ValueError(
            f"system must be one of {', '.join(hardware.SYSTEM_FABRICS)} (systems "
            f"with a tabulated fabric); got {system!r}"
        )
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
        memory_bandwidth_bytes_per_s=n * card.memory_bandwidth_bytes_per_s,
        dense_fp8_flop_per_s=total("fp8", False),
        sparse_fp8_flop_per_s=total("fp8", True),
        dense_bf16_flop_per_s=n * card.dense_flop_per_s["bf16"],
        sparse_bf16_flop_per_s=n * card.sparse_flop_per_s["bf16"],
        dense_tf32_flop_per_s=n * card.dense_flop_per_s["tf32"],
        sparse_tf32_flop_per_s=n * card.sparse_flop_per_s["tf32"],
        nvswitches=fabric.nvswitches,
        nvlink_per_gpu_bytes_per_s=card.nvlink_bandwidth_bytes_per_s,
        nvlink_total_bytes_per_s=n * card.nvlink_bandwidth_bytes_per_s,
        compute_nics=fabric.compute_nics,
        network_bytes_per_s=fabric.compute_nics * fabric.compute_nic_bandwidth_bytes_per_s,
        max_power_watts=sys_.max_power_watts,
    )


@dataclass(frozen=True)
class SuperPod(Report):
    """A DGX SuperPOD of some scalable units: systems, GPUs, compute-fabric switches, peaks,
    power."""

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
        raise ValueError(
            f"architecture must be one of {', '.join(hardware.SUPERPODS)}; got {architecture!r}"
        )
    arch = hardware.SUPERPODS[architecture]
    n_su = validate.positive_int("sus", sus, maximum=MAX_SUS)
    switch_watts = validate.watts("watts_per_switch", watts_per_switch)
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
        dense_fp8_flop_per_s=gpus * card.dense_flop_per_s["fp8"],
        sparse_fp8_flop_per_s=gpus * card.sparse_flop_per_s["fp8"],
        dense_bf16_flop_per_s=gpus * card.dense_flop_per_s["bf16"],
        systems_power_watts=systems_power,
        switches_power_watts=switches * switch_watts,
        it_power_watts=systems_power + switches * switch_watts,
    )


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
    card = hardware.gpu(gpu)
    table = {p.name: p for p in hardware.mig_profiles(card.key)}
    if not isinstance(profiles, list | tuple) or not profiles:
        raise ValueError(
            f"profiles must be a non-empty list of MIG profile names "
            f"({', '.join(table)}); got {profiles!r}"
        )
    chosen = [_mig_profile(table, name) for name in profiles]
    for p in table.values():
        count = sum(1 for c in chosen if c.name == p.name)
        if count > p.instances:
            raise ValueError(
                f"at most {p.instances} x {p.name} fit on one {card.name}; got {count}"
            )
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

    Memory = :func:`course.calculators.memory.inference_memory` (weights + KV
    cache + ``overhead_fraction`` of both). A profile fits when that is at most its memory.
    ``instances_per_gpu`` is how many of the smallest fitting profile one GPU holds: that many
    independent replicas (MIG's use case: many small models or tenants on one GPU). Llama-2-7B in
    bf16 (13.5 GB) needs a 20 GB slice on an H100: 4 replicas, not 7.
    """
    card = hardware.gpu(gpu)
    table = hardware.mig_profiles(card.key)
    need = inference_memory(
        model, dtype=dtype, seq_len=seq_len, batch=batch, overhead_fraction=overhead_fraction
    ).total_bytes
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
    """Practice question 4 of *AI Infrastructure* ("A100 vs H100, when would you choose each?"),
    with numbers.

    Training: tokens/s per GPU = ``mfu`` x dense peak / (6 x params) (Kaplan 2020's 6N; the same MFU
    on both), so the speed-up is the ratio of dense peaks in the dtype each GPU can use (``fp8`` on
    an A100 falls back to ``bf16``). GPUs needed = training memory (model states + activations,
    lesson 04) / 90 % of one GPU. Serving: one decoding step's roofline floor
    (:func:`course.calculators.compute.decode_step`, weights only) at ``batch``: memory-bound at
    small batches, so the speed-up is the bandwidth ratio; compute-bound at large ones. Cost per
    million tokens = price per GPU-hour / tokens per GPU-hour. The pick is the cheaper per token;
    the reason says by how much and what limits it. Estimates, not measurements.
    """
    if not isinstance(model, TransformerConfig):
        raise ValueError(
            f"model must be a TransformerConfig (a preset from course.facts.models), got {model!r}"
        )
    kind = validate.choice("workload", workload, WORKLOADS)
    validate.choice("dtype", dtype, ("fp32", "tf32", "fp16", "bf16", "fp8"))
    cards = (hardware.gpu(gpu_a), hardware.gpu(gpu_b))
    prices = (
        validate.number("usd_per_gpu_hour_a", usd_per_gpu_hour_a, minimum=1e-4, maximum=1e4),
        validate.number("usd_per_gpu_hour_b", usd_per_gpu_hour_b, minimum=1e-4, maximum=1e4),
    )
    b = validate.positive_int("batch", batch, maximum=10**5)
    s = validate.positive_int("seq_len", seq_len, maximum=2**20)
    util = validate.fraction("mfu", mfu)
    budget = validate.number("budget_usd", budget_usd, minimum=0, maximum=1e12)
    dtypes = tuple(
        dtype
        if dtype in c.dense_flop_per_s
        else ("bf16" if "bf16" in c.dense_flop_per_s else "fp16")
        for c in cards
    )  # a V100 has neither fp8 nor bf16: fp16
    peaks = tuple(c.dense_flop_per_s[d] for c, d in zip(cards, dtypes, strict=True))
    params = float(model.params)
    if kind == "training":
        mem = training_memory(model, batch=b, seq_len=s, recompute="selective").total_bytes
        tps = tuple(util * peak / training_flops(params, 1) for peak in peaks)
        bound = "compute"
    else:
        weights_dtype = "fp8" if dtype == "fp8" else ("fp32" if dtype == "fp32" else "bf16")
        mem = inference_memory(model, dtype=weights_dtype, seq_len=s, batch=b).total_bytes
        steps = tuple(
            decode_step(params, weights_dtype, c, b, compute_dtype=d)
            for c, d in zip(cards, dtypes, strict=True)
        )
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
        bandwidth_ratio=cards[1].memory_bandwidth_bytes_per_s
        / cards[0].memory_bandwidth_bytes_per_s,
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


@dataclass(frozen=True)
class GpuJob(Report):
    """One job (a training run or a serving load) on two GPUs: time, cost, energy, and the price
    ratio at which each wins."""

    _title = "One job on two GPUs"

    workload: str
    model: str
    tokens: float
    gpu_a: str
    gpu_b: str
    gpus_a: int  # as many as asked, or as many as hold the model
    gpus_b: int
    seconds_a: float
    seconds_b: float
    cost_a_usd: float
    cost_b_usd: float
    energy_a_joules: float  # GPUs at their TDP for the job's time, x PUE
    energy_b_joules: float
    speedup: float  # b over a, per GPU (the roofline ratio of choose_gpu)
    price_ratio: float  # price per GPU-hour of b / a
    breakeven_price_ratio: float  # b is cheaper per token while price_ratio is below this
    pick: str


def gpu_job(
    model: TransformerConfig,
    *,
    tokens: float,
    gpus: int = 8,
    workload: str = "training",
    dtype: str = "bf16",
    gpu_a: str | hardware.GPU = "a100-80gb-sxm",
    gpu_b: str | hardware.GPU = "h100-sxm",
    usd_per_gpu_hour_a: float,
    usd_per_gpu_hour_b: float,
    batch: int = 1,
    seq_len: int = 2048,
    mfu: float = 0.4,
    pue: float = 1.0,
) -> GpuJob:
    """Practice question 4 ("A100 or H100?") as a job: ``tokens`` trained or generated on ``gpus``
    of each kind (more where the model needs more to fit), from :func:`choose_gpu`'s tokens per
    second per GPU (same MFU on both; ideal scaling across GPUs).

    time = tokens / (tokens/s per GPU x GPUs); cost = GPUs x hours x price per GPU-hour; energy =
    GPUs x TDP x time x PUE (:func:`course.calculators.energy.energy_joules`). Per token, b costs
    ``price_b / speedup`` against ``price_a``: b wins while ``price_b / price_a`` is below the
    speed-up (the break-even price ratio), a wins above it. Estimates, not measurements.
    """
    c = choose_gpu(
        model,
        workload=workload,
        dtype=dtype,
        gpu_a=gpu_a,
        gpu_b=gpu_b,
        usd_per_gpu_hour_a=usd_per_gpu_hour_a,
        usd_per_gpu_hour_b=usd_per_gpu_hour_b,
        batch=batch,
        seq_len=seq_len,
        mfu=mfu,
    )
    n_tokens = validate.number("tokens", tokens, minimum=1, maximum=1e18)
    asked = validate.positive_int("gpus", gpus, maximum=validate.MAX_GPUS)
    counts = (max(asked, c.gpus_needed_a), max(asked, c.gpus_needed_b))
    rates = (c.tokens_per_s_per_gpu_a, c.tokens_per_s_per_gpu_b)
    prices = (float(usd_per_gpu_hour_a), float(usd_per_gpu_hour_b))
    cards = (hardware.gpu(gpu_a), hardware.gpu(gpu_b))
    seconds = tuple(n_tokens / (r * g) for r, g in zip(rates, counts, strict=True))
    if max(seconds) > MAX_JOB_SECONDS:
        raise ValueError(
            f"tokens is too many for these GPUs: the job would take over "
            f"{MAX_JOB_SECONDS / YEAR:,.0f} years; ask for fewer tokens or more GPUs"
        )
    cost = tuple(g * t / 3600 * p for g, t, p in zip(counts, seconds, prices, strict=True))
    joules = tuple(
        energy.energy_joules(card.tdp_watts * g, t, pue=pue)
        for card, g, t in zip(cards, counts, seconds, strict=True)
    )
    return GpuJob(
        workload=c.workload,
        model=c.model,
        tokens=n_tokens,
        gpu_a=c.gpu_a,
        gpu_b=c.gpu_b,
        gpus_a=counts[0],
        gpus_b=counts[1],
        seconds_a=seconds[0],
        seconds_b=seconds[1],
        cost_a_usd=cost[0],
        cost_b_usd=cost[1],
        energy_a_joules=joules[0],
        energy_b_joules=joules[1],
        speedup=c.speedup,
        price_ratio=prices[1] / prices[0],
        breakeven_price_ratio=c.speedup,
        pick=c.pick,
    )


__all__ = [
    "DgxSummary",
    "GpuChoice",
    "GpuJob",
    "MAX_SUS",
    "MigLayout",
    "MigServingFit",
    "SuperPod",
    "WORKLOADS",
    "choose_gpu",
    "dgx_from_parts",
    "gpu_job",
    "mig_layout",
    "mig_serving_fit",
    "superpod",
]
