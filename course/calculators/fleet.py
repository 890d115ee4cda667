"""A serving fleet sized on the batch-latency trade-off, and a day of traffic with autoscaling.

Built on the course's per-GPU rates (:mod:`course.calculators.inference`: prefill and decode as
roofline floors over an achieved efficiency) and the M/M/c queue
(:mod:`course.calculators.queueing`), the way Austin et al. size a server in *How to Scale Your
Model*, part 8, "Serving LLaMA 3-70B on TPUs" (2025,
https://jax-ml.github.io/scaling-book/applied-inference/):

- :func:`tp_degrees`, :func:`kv_room_sequences`: a replica is ``tp`` GPUs in tensor parallel
  (Megatron-LM, Shoeybi et al. 2019, splits attention heads, so ``tp`` divides the heads and the
  KV heads); what memory the weights leave holds the KV caches, and that caps the batch.
- :func:`batch_latency_frontier`: per TP degree, the decode step (the inter-token latency) and
  the tokens/s per GPU at each batch that fits: the latency-throughput Pareto frontier. A TP-``t``
  pass takes ``t_1 / (t x tp_efficiency ** log2 t)`` (the all-reduces cost ``tp_efficiency`` per
  doubling).
- :func:`tensor_parallel_options`: per TP degree, the largest batch whose KV caches fit and whose
  time per output token meets a TPOT SLO, and what a replica then serves.
- :func:`replicas_for_slo`: the fleet: for each option, the fewest replicas whose p99 time to first
  token (M/M/c wait + prefill, :func:`course.calculators.queueing.ttft_quantile_seconds`) meets the
  SLO; the option with the fewest GPUs wins.
- :func:`cost_per_million_tokens`: a fleet's price over the tokens it really serves at a
  utilisation (:func:`course.calculators.cloud.usd_per_million_tokens`).
- :func:`diurnal_rates`, :func:`simulate_day`: a day's request rate and a fleet following it,
  either fixed for the peak or autoscaled (a target utilisation, a minimum, and new replicas that
  serve only after ``scale_up_delay_seconds``: boot plus loading the weights,
  :func:`scale_up_delay_seconds`). GPU-hours are billed from the moment a replica is requested.
- :func:`speculative_decoding`: expected tokens per target-model pass and the speed-up, from the
  acceptance rate (Leviathan et al. 2023, "Fast Inference from Transformers via Speculative
  Decoding", ICML, eq. 1 and theorem 3.8).

The replica model: prefills run in line with decoding (no chunked prefill, no separate prefill
pool), so a replica of ``B`` sequences spends ``slot = B x prefill + output_tokens x step(B)`` to
turn all ``B`` over, serves ``B / slot`` requests/s, and each answer is paused by the ``B - 1``
other prefills: TPOT ``step(B) + (B - 1) x prefill / output_tokens`` with every slot busy; each
sequence at its longest context, as the book does. ``efficiency`` (the share of the roofline floor
achieved) is one float or a ``(decode, prefill)`` pair where the two were measured apart.
Estimates, not measurements: no activation workspace, no scheduler overhead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from types import MappingProxyType

from course.calculators import cloud, inference, memory, queueing
from course.facts import hardware, units, validate
from course.facts.dtypes import BYTES_PER_VALUE
from course.facts.models import TransformerConfig, checked_config
from course.facts.report import Report, Table

#: Most replicas a plan may need before it gives up.
MAX_REPLICAS = 100_000
#: Widest tensor-parallel replica considered by default: one NVLink node of 8 GPUs.
MAX_TP = 8
#: What limits a replica's batch.
BATCH_LIMITS = ("KV room", "TPOT SLO", "fixed")


def tp_degrees(config: TransformerConfig, *, max_tp: int = MAX_TP) -> tuple[int, ...]:
    """Tensor-parallel degrees ``1..max_tp`` that divide both the attention heads and the KV heads
    (each GPU then holds whole heads and its share of the KV cache)."""
    c = checked_config(config)
    top = validate.positive_int("max_tp", max_tp, maximum=1024)
    return tuple(t for t in range(1, top + 1) if c.heads % t == 0 and c.kv_heads % t == 0)


def _tp(config: TransformerConfig, tp: object) -> int:
    t = validate.positive_int("tp", tp, maximum=1024)
    if config.heads % t or (config.kv_heads % t and t % config.kv_heads):
        raise ValueError(
            f"tp must divide the {config.heads} attention heads of {config.name} and divide, or "
            f"be a multiple of, its {config.kv_heads} KV heads; got {t}"
        )
    return t


#: How a replica's GPUs split the KV cache: by whole KV heads (a TP degree above the KV heads
#: keeps ``tp / kv_heads`` copies of each, as vLLM does), or fully, over the batch as well (the
#: scaling book's assumption).
KV_SHARDING = ("heads", "full")


def _kv_copies(config: TransformerConfig, tp: int, kv_sharding: object) -> int:
    mode = validate.choice("kv_sharding", kv_sharding, KV_SHARDING)
    return 1 if mode == "full" else max(1, tp // config.kv_heads)


def tp_speedup(tp: int, tp_efficiency: float) -> float:
    """How many times faster a pass runs on ``tp`` GPUs: ``tp x tp_efficiency ** log2(tp)``
    (``tp_efficiency`` in [0.1, 1]: below that a doubling costs more than it brings, and the
    power would underflow)."""
    t = validate.positive_int("tp", tp, maximum=1024)
    eff = validate.number("tp_efficiency", tp_efficiency, minimum=0.1, maximum=1)
    return t * eff ** math.log2(t)


def kv_room_sequences(
    config: TransformerConfig,
    gpu: hardware.GPU | str,
    *,
    tp: int,
    context_tokens: int,
    dtype: str = "bf16",
    usable_fraction: float = memory.USABLE_MEMORY_FRACTION,
    kv_sharding: str = "heads",
) -> int:
    """Sequences of ``context_tokens`` whose KV caches fit beside the weights on ``tp`` GPUs:
    ``floor((tp x usable_fraction x memory - weights) / KV bytes per sequence)`` (times the
    copies :data:`KV_SHARDING` keeps), 0 when the weights alone do not fit."""
    c, card = checked_config(config), hardware.gpu(gpu)
    t = _tp(c, tp)
    ctx = validate.positive_int("context_tokens", context_tokens, maximum=validate.MAX_TOKENS)
    usable = validate.number("usable_fraction", usable_fraction, minimum=0.01, maximum=1)
    width = BYTES_PER_VALUE[validate.choice("dtype", dtype, inference.DTYPES)]
    room = t * usable * card.memory_bytes - memory.weights_bytes(c.params, dtype)
    per_sequence = memory.kv_cache_bytes(
        c.layers, c.kv_heads, c.head_dim, ctx, bytes_per_value=width
    ) * _kv_copies(c, t, kv_sharding)
    return max(0, math.floor(room / per_sequence))


@dataclass(frozen=True)
class DecodePoint(Report):
    """One point of the batch-latency trade-off: a batch on a ``tp``-GPU replica."""

    _title = "Decode at one batch"

    tp: int
    batch: int
    itl_seconds: float  # one decode step of the whole batch: the gap between two tokens
    output_tokens_per_s_per_gpu: float  # batch / step / tp: decode alone


def _step_seconds(c, card, batch, context, dtype, efficiency, speed, copies=1) -> float:
    step = inference.decode(
        c, card, batch=batch, context_tokens=context, dtype=dtype, efficiency=efficiency
    )
    if copies == 1:
        return step.step_seconds / speed
    extra = (copies - 1) * step.kv_cache_bytes / card.memory_bandwidth_bytes_per_s
    return max(step.compute_floor_seconds, step.memory_floor_seconds + extra) / efficiency / speed


def batch_latency_frontier(
    config: TransformerConfig,
    gpu: hardware.GPU | str,
    *,
    tp: int,
    context_tokens: int,
    dtype: str = "bf16",
    efficiency: float = 0.6,
    tp_efficiency: float = 0.9,
    usable_fraction: float = memory.USABLE_MEMORY_FRACTION,
    kv_sharding: str = "heads",
) -> tuple[DecodePoint, ...]:
    """Inter-token latency and decode tokens/s per GPU at batches 1, 2, 4, ... up to the most
    sequences of ``context_tokens`` the KV room holds (that batch included): one TP degree's
    curve of the latency-throughput Pareto plot. Empty when the weights do not fit."""
    c, card = checked_config(config), hardware.gpu(gpu)
    t = _tp(c, tp)
    speed = tp_speedup(t, tp_efficiency)
    room = kv_room_sequences(
        c,
        card,
        tp=t,
        context_tokens=context_tokens,
        dtype=dtype,
        usable_fraction=usable_fraction,
        kv_sharding=kv_sharding,
    )
    copies = _kv_copies(c, t, kv_sharding)
    batches = sorted({2**k for k in range(room.bit_length()) if 2**k <= room} | {room} - {0})
    out = []
    for b in batches:
        step = _step_seconds(c, card, b, context_tokens, dtype, efficiency, speed, copies)
        out.append(
            DecodePoint(tp=t, batch=b, itl_seconds=step, output_tokens_per_s_per_gpu=b / step / t)
        )
    return tuple(out)


#: How a replica's fields print, shared by :class:`TPOption` and :class:`FleetPlan`.
_REPLICA_FORMATS = {
    "gpu": "text",
    "tp": "number",
    "batch": "number",
    "batch_limit": "text",
    "requests_per_s_per_replica": "number",
}


@dataclass(frozen=True)
class TPOption(Report):
    """A replica of ``tp`` GPUs at the batch its KV room and the TPOT SLO allow."""

    _title = "Replica on the batch-latency trade-off"

    gpu: str
    tp: int  # GPUs per replica (tensor parallel degree)
    kv_room_batch: int  # sequences whose KV caches fit beside the weights
    batch: int
    batch_limit: str  # "KV room", "TPOT SLO" or "fixed"
    prefill_seconds: float  # one prompt's prefill on the replica: the unloaded TTFT
    itl_seconds: float  # one decode step at the batch, every cache at its longest context
    tpot_seconds: float  # step + (batch - 1) x prefill / output tokens: every slot busy
    slot_seconds: float  # batch x prefill + output tokens x step: one turnover of the batch
    requests_per_s_per_replica: float  # batch / slot: the replica's capacity
    output_tokens_per_s_per_gpu: float  # at that capacity, prefills included


def _option(c, card, t, batch, room, limit, p, out, dtype, efficiency, tp_efficiency) -> TPOption:
    speed = tp_speedup(t, tp_efficiency)
    eff, eff_first = efficiency if isinstance(efficiency, tuple) else (efficiency, efficiency)
    first = inference.prefill(c, p, card, dtype=dtype, efficiency=eff_first).seconds / speed
    step = _step_seconds(c, card, batch, p + out, dtype, eff, speed, _kv_copies(c, t, "heads"))
    slot = batch * first + out * step
    return TPOption(
        gpu=card.name,
        tp=t,
        kv_room_batch=room,
        batch=batch,
        batch_limit=limit,
        prefill_seconds=first,
        itl_seconds=step,
        tpot_seconds=step + (batch - 1) * first / out,
        slot_seconds=slot,
        requests_per_s_per_replica=batch / slot,
        output_tokens_per_s_per_gpu=batch * out / slot / t,
    )


def replica_option(
    config: TransformerConfig,
    gpu: hardware.GPU | str,
    *,
    tp: int,
    batch: int | None = None,
    tpot_slo_seconds: float | None = None,
    prompt_tokens: int = 512,
    output_tokens: int = 256,
    dtype: str = "bf16",
    efficiency: float = 0.6,
    tp_efficiency: float = 0.9,
    usable_fraction: float = memory.USABLE_MEMORY_FRACTION,
) -> TPOption:
    """One TP degree's replica: at ``batch`` if given (it must fit the KV room), else at the
    largest batch that fits and whose time per output token meets ``tpot_slo_seconds`` (no limit
    when ``None``). ValueError when the weights do not fit or batch 1 misses the SLO."""
    c, card = checked_config(config), hardware.gpu(gpu)
    t = _tp(c, tp)
    p, out = inference.request_tokens(c, prompt_tokens, output_tokens)
    room = kv_room_sequences(
        c, card, tp=t, context_tokens=p + out, dtype=dtype, usable_fraction=usable_fraction
    )
    if room < 1:
        raise ValueError(
            f"tp: {t} x {card.name} cannot hold {c.name}'s weights and one sequence of "
            f"{p + out:,} tokens; use a larger tp"
        )
    args = (p, out, dtype, efficiency, tp_efficiency)
    if batch is not None:
        b = validate.positive_int("batch", batch, maximum=room)
        return _option(c, card, t, b, room, "fixed", *args)
    best = _option(c, card, t, room, room, "KV room", *args)
    if tpot_slo_seconds is None:
        return best
    slo = validate.number("tpot_slo_seconds", tpot_slo_seconds, minimum=0, strict_min=True)
    if best.tpot_seconds <= slo:
        return best
    low = _option(c, card, t, 1, room, "TPOT SLO", *args)
    if low.tpot_seconds > slo:
        raise ValueError(
            f"tpot_slo_seconds: {slo:g} s is below one decode step of {c.name} on {t} x "
            f"{card.name} ({low.tpot_seconds:.3g} s at batch 1)"
        )
    lo, hi = 1, room  # TPOT grows with the batch: the largest batch within the SLO
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _option(c, card, t, mid, room, "TPOT SLO", *args).tpot_seconds <= slo:
            lo = mid
        else:
            hi = mid
    return _option(c, card, t, lo, room, "TPOT SLO", *args)


def tensor_parallel_options(
    config: TransformerConfig,
    gpu: hardware.GPU | str,
    *,
    tpot_slo_seconds: float | None = None,
    prompt_tokens: int = 512,
    output_tokens: int = 256,
    dtype: str = "bf16",
    efficiency: float = 0.6,
    tp_efficiency: float = 0.9,
    max_tp: int = MAX_TP,
    usable_fraction: float = memory.USABLE_MEMORY_FRACTION,
) -> Table:
    """Every TP degree (:func:`tp_degrees`) whose replica holds the weights and meets the TPOT SLO
    at batch 1, each at its largest allowed batch (:func:`replica_option`): a
    :class:`~course.facts.report.Table` of :class:`TPOption`, one row per degree."""
    c = checked_config(config)
    out = []
    for t in tp_degrees(c, max_tp=max_tp):
        try:
            out.append(
                replica_option(
                    c,
                    gpu,
                    tp=t,
                    tpot_slo_seconds=tpot_slo_seconds,
                    prompt_tokens=prompt_tokens,
                    output_tokens=output_tokens,
                    dtype=dtype,
                    efficiency=efficiency,
                    tp_efficiency=tp_efficiency,
                    usable_fraction=usable_fraction,
                )
            )
        except ValueError as err:
            if not str(err).startswith(("tp:", "tpot_slo_seconds:")):
                raise
    if not out:
        raise ValueError(
            f"max_tp: no tensor-parallel degree up to {max_tp} holds {c.name} and meets "
            f"tpot_slo_seconds={tpot_slo_seconds!r}"
        )
    return Table(
        out,
        title=f"{c.name} on {out[0].gpu}: a replica per TP degree (estimate)",
        columns=[f.name for f in fields(TPOption) if f.name != "gpu"],
    )


@dataclass(frozen=True)
class FleetPlan(Report):
    """Replicas and GPUs that serve a peak load within a TTFT and a TPOT SLO."""

    _title = "Fleet for a peak load and an SLO"
    _formats = MappingProxyType(
        {"utilisation": "percent", "quantile": "percent", "usd_per_million_output_tokens": "usd"}
    )

    gpu: str
    peak_requests_per_s: float
    tp: int  # tensor-parallel degree of a replica
    batch: int
    batch_limit: str  # what set the batch: "KV room", "TPOT SLO" or "fixed"
    gpus_per_replica: int
    slot_seconds: float  # one request's hold on a batch slot (the queue's service time)
    prefill_seconds: float  # the floor of the time to first token
    itl_seconds: float  # one decode step at the batch
    tpot_seconds: float  # time per output token with every slot busy (prefills included)
    replicas_for_throughput: int  # enough for the average work, ignoring queueing
    replicas: int  # enough for the SLO at the peak
    gpus: int
    utilisation: float  # busy share of the batch slots at the peak
    quantile: float
    ttft_quantile_seconds: float  # modelled p-quantile of time to first token at the peak
    requests_per_s_per_replica: float  # the peak / replicas: what one replica takes within the SLO
    usd_per_hour: float
    usd_per_million_output_tokens: float


def replicas_for_slo(
    config: TransformerConfig,
    gpu: hardware.GPU | str,
    *,
    peak_requests_per_s: float,
    ttft_slo_seconds: float,
    tpot_slo_seconds: float | None = None,
    quantile: float = 0.99,
    prompt_tokens: int = 512,
    output_tokens: int = 256,
    tp: int | None = None,
    batch: int | None = None,
    dtype: str = "bf16",
    efficiency: float = 0.6,
    tp_efficiency: float = 0.9,
    max_tp: int = MAX_TP,
    usd_per_gpu_hour: float = 2.0,
) -> FleetPlan:
    """The fleet with the fewest GPUs whose modelled ``quantile`` of time to first token meets
    ``ttft_slo_seconds`` and whose time per output token meets ``tpot_slo_seconds``.

    Each TP degree (or only ``tp``) runs the batch of :func:`replica_option` (or ``batch``, fixed);
    its ``batch`` slots are servers of an M/M/c queue held ``slot_seconds`` each; replicas are
    added until the queue's wait quantile plus the prefill meets the SLO. Ties go to the lower
    TTFT. ``tp=None, batch=16``: the smallest TP that holds 16 sequences, the old fixed-batch plan.
    """
    rate = validate.number(
        "peak_requests_per_s", peak_requests_per_s, minimum=0, maximum=1e7, strict_min=True
    )
    slo = validate.number(
        "ttft_slo_seconds", ttft_slo_seconds, minimum=0, maximum=1e5, strict_min=True
    )
    q = validate.number("quantile", quantile, minimum=0.5, maximum=0.9999)
    price = validate.number("usd_per_gpu_hour", usd_per_gpu_hour, minimum=0, maximum=1e6)
    kw = dict(
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        dtype=dtype,
        efficiency=efficiency,
        tp_efficiency=tp_efficiency,
    )
    if tp is not None:
        options = [
            replica_option(config, gpu, tp=tp, batch=batch, tpot_slo_seconds=tpot_slo_seconds, **kw)
        ]
    elif batch is not None:
        b = validate.positive_int("batch", batch, maximum=memory.MAX_BATCH)
        fits = [
            t
            for t in tp_degrees(config, max_tp=max_tp)
            if kv_room_sequences(
                config, gpu, tp=t, context_tokens=prompt_tokens + output_tokens, dtype=dtype
            )
            >= b
        ]
        if not fits:
            raise ValueError(f"batch: no tp up to {max_tp} holds {b} sequences of {config.name}")
        options = [replica_option(config, gpu, tp=fits[0], batch=b, **kw)]
    else:
        options = tensor_parallel_options(
            config, gpu, tpot_slo_seconds=tpot_slo_seconds, max_tp=max_tp, **kw
        )
    plans = []
    for o in options:
        if o.prefill_seconds >= slo:
            continue
        try:
            servers = queueing.servers_for_wait(
                rate, o.slot_seconds, slo - o.prefill_seconds, quantile=q
            )
        except ValueError:
            continue
        replicas = max(1, math.ceil(servers / o.batch))
        if replicas > MAX_REPLICAS:
            continue
        ttft = queueing.ttft_quantile_seconds(
            rate,
            service_seconds=o.slot_seconds,
            servers=replicas * o.batch,
            prefill_seconds=o.prefill_seconds,
            quantile=q,
        )
        plans.append((replicas * o.tp, ttft, replicas, o))
    if not plans:
        fastest = min(o.prefill_seconds for o in options)
        raise ValueError(
            f"ttft_slo_seconds must exceed the prefill alone ({fastest:.3g} s) with room for "
            f"the queue at {rate:g} requests/s within {MAX_REPLICAS:,} replicas, got {slo:g}"
        )
    gpus, ttft, replicas, o = min(plans, key=lambda x: (x[0], x[1]))
    cost = gpus * price
    return FleetPlan(
        gpu=o.gpu,
        peak_requests_per_s=rate,
        tp=o.tp,
        batch=o.batch,
        batch_limit=o.batch_limit,
        gpus_per_replica=o.tp,
        slot_seconds=o.slot_seconds,
        prefill_seconds=o.prefill_seconds,
        itl_seconds=o.itl_seconds,
        tpot_seconds=o.tpot_seconds,
        replicas_for_throughput=max(1, math.ceil(rate / o.requests_per_s_per_replica - 1e-9)),
        replicas=replicas,
        gpus=gpus,
        utilisation=rate * o.slot_seconds / (replicas * o.batch),
        quantile=q,
        ttft_quantile_seconds=ttft,
        requests_per_s_per_replica=rate / replicas,
        usd_per_hour=cost,
        usd_per_million_output_tokens=cloud.usd_per_million_tokens(cost, rate * output_tokens),
    )


def cost_per_million_tokens(
    usd_per_gpu_hour: float, gpus: int, capacity_tokens_per_s: float, utilisation: float
) -> float:
    """USD per 1M tokens when a fleet of ``gpus`` that could make ``capacity_tokens_per_s`` is busy
    a fraction ``utilisation`` of the time: idle capacity is paid for too."""
    price = validate.number("usd_per_gpu_hour", usd_per_gpu_hour, minimum=0, maximum=1e5)
    n = validate.positive_int("gpus", gpus, maximum=10**7)
    cap = validate.number(
        "capacity_tokens_per_s", capacity_tokens_per_s, minimum=0, maximum=1e12, strict_min=True
    )
    u = validate.fraction("utilisation", utilisation)
    return cloud.usd_per_million_tokens(price * n, cap * u)


def scale_up_delay_seconds(
    weights_bytes: float, load_bytes_per_s: float, *, boot_seconds: float = 60.0
) -> float:
    """Time from asking for a replica to its first request: boot (VM, container, runtime) plus
    reading the weights at ``load_bytes_per_s`` (storage or network)."""
    w = validate.number("weights_bytes", weights_bytes, minimum=0, maximum=1e15)
    bw = validate.number(
        "load_bytes_per_s", load_bytes_per_s, minimum=0, maximum=1e13, strict_min=True
    )
    boot = validate.number("boot_seconds", boot_seconds, minimum=0, maximum=1e5)
    return boot + w / bw


def diurnal_rates(
    peak_requests_per_s: float,
    *,
    trough_fraction: float = 0.2,
    peak_hour: float = 14.0,
    step_seconds: float = 300.0,
) -> tuple[float, ...]:
    """A day's request rate, one value per ``step_seconds``: a cosine between ``trough_fraction x
    peak`` (12 h from the peak) and the peak at ``peak_hour``. A model, not a trace."""
    peak = validate.number(
        "peak_requests_per_s", peak_requests_per_s, minimum=0, maximum=1e7, strict_min=True
    )
    trough = validate.fraction("trough_fraction", trough_fraction, allow_zero=True)
    hour = validate.number("peak_hour", peak_hour, minimum=0, maximum=24)
    step = validate.number("step_seconds", step_seconds, minimum=1, maximum=units.HOUR * 6)
    n = math.ceil(24 * units.HOUR / step)
    rates = []
    for i in range(n):
        h = (i + 0.5) * step / units.HOUR
        shape = (1 + math.cos(2 * math.pi * (h - hour) / 24)) / 2
        rates.append(peak * (trough + (1 - trough) * shape))
    return tuple(rates)


POLICIES = ("fixed", "autoscaled")


@dataclass(frozen=True)
class DayResult(Report):
    """A day of traffic on a fixed or autoscaled fleet: GPU-hours and SLO misses."""

    _title = "A day of traffic"

    policy: str
    min_replicas: int
    peak_replicas: int
    gpu_hours: float  # billed: replicas requested (starting or ready) x GPUs x time
    slo_miss_seconds: float  # time during which demand exceeded the ready replicas' SLO capacity
    missed_request_fraction: float  # requests above that capacity / all requests
    ready_replicas: tuple[int, ...] = field(default=(), repr=False)  # per step, for plotting


def simulate_day(
    rates_per_s: Sequence[float],
    *,
    step_seconds: float,
    requests_per_s_per_replica: float,
    gpus_per_replica: int = 1,
    policy: str = "autoscaled",
    min_replicas: int = 1,
    target_utilisation: float = 0.8,
    scale_up_delay_seconds: float = 300.0,
) -> DayResult:
    """Follow a day's rates with a fixed fleet (enough replicas for the peak, always on) or an
    autoscaler. Every step the autoscaler asks for ``ceil(rate / (target x capacity))`` replicas
    (at least ``min_replicas``); new ones serve after ``scale_up_delay_seconds`` (rounded up to
    whole steps); surplus ones stop at once; the day starts with the replicas its first step asks
    for (the fleet ran before midnight). At ``target_utilisation`` below 1 the autoscaler keeps
    more replicas at the peak than the fixed fleet, which runs its replicas at their full SLO
    capacity. ``requests_per_s_per_replica`` is what a replica serves within the SLO
    (:attr:`FleetPlan.requests_per_s_per_replica`).
    """
    if not isinstance(rates_per_s, Sequence) or not rates_per_s or len(rates_per_s) > 10**6:
        raise ValueError(f"rates_per_s must be a non-empty sequence of rates, got {rates_per_s!r}")
    rates = [validate.number("rates_per_s", r, minimum=0, maximum=1e7) for r in rates_per_s]
    step = validate.number("step_seconds", step_seconds, minimum=1, maximum=units.DAY)
    cap = validate.number(
        "requests_per_s_per_replica",
        requests_per_s_per_replica,
        minimum=0,
        maximum=1e7,
        strict_min=True,
    )
    g = validate.positive_int("gpus_per_replica", gpus_per_replica, maximum=10**4)
    mode = validate.choice("policy", policy, POLICIES)
    low = validate.positive_int("min_replicas", min_replicas, minimum=0, maximum=MAX_REPLICAS)
    target = validate.fraction("target_utilisation", target_utilisation)
    delay = validate.number(
        "scale_up_delay_seconds", scale_up_delay_seconds, minimum=0, maximum=units.DAY
    )
    if max(rates) / cap / target > MAX_REPLICAS:
        raise ValueError(
            f"requests_per_s_per_replica ({cap:g}) and target_utilisation ({target:g}) would need "
            f"more than {MAX_REPLICAS:,} replicas at the day's peak ({max(rates):g} requests/s)"
        )
    lag = math.ceil(delay / step - 1e-9)
    peak_need = max(low, math.ceil(max(rates) / cap - 1e-9))
    first = max(low, math.ceil(rates[0] / (target * cap) - 1e-9))  # the day starts steady
    ready, starting = (peak_need, []) if mode == "fixed" else (first, [])
    billed = miss_seconds = missed = total = 0.0
    history = []
    for rate in rates:
        if mode == "autoscaled":
            want = max(low, math.ceil(rate / (target * cap) - 1e-9))
            starting = [t - 1 for t in starting]
            ready += sum(1 for t in starting if t <= 0)
            starting = [t for t in starting if t > 0]
            if want > ready + len(starting):
                new = want - ready - len(starting)
                if lag == 0:
                    ready += new
                else:
                    starting += [lag] * new
            elif want < ready:
                ready = want
                starting = []
            elif want < ready + len(starting):
                starting = starting[: want - ready]
        history.append(ready)
        billed += (ready + len(starting)) * g * step
        over = max(0.0, rate - ready * cap)
        miss_seconds += step if over > 0 else 0.0
        missed += over * step
        total += rate * step
    return DayResult(
        policy=mode,
        min_replicas=low if mode == "autoscaled" else peak_need,
        peak_replicas=max(history),
        gpu_hours=billed / units.HOUR,
        slo_miss_seconds=miss_seconds,
        missed_request_fraction=missed / total if total else 0.0,
        ready_replicas=tuple(history),
    )


@dataclass(frozen=True)
class Speculative(Report):
    """Speculative decoding: a draft proposes ``draft_tokens``, the target verifies them at once."""

    _title = "Speculative decoding"
    _formats = MappingProxyType(
        {"acceptance_rate": "percent", "draft_tokens": "number", "draft_cost_ratio": "percent"}
    )

    acceptance_rate: float  # alpha: chance the target accepts a draft token
    draft_tokens: int  # gamma
    draft_cost_ratio: float  # c: a draft step's time / a target step's time
    tokens_per_target_pass: float  # (1 - alpha^(gamma+1)) / (1 - alpha)
    speedup: float  # tokens per pass / (gamma c + 1)


def speculative_decoding(
    acceptance_rate: float, draft_tokens: int, *, draft_cost_ratio: float = 0.05
) -> Speculative:
    """Leviathan et al. 2023: with i.i.d. acceptance ``alpha``, a pass of the target over
    ``gamma`` drafted tokens yields ``(1 - alpha^(gamma+1)) / (1 - alpha)`` tokens on average (eq.
    1), and the wall-clock speed-up is that over ``gamma c + 1`` (theorem 3.8)."""
    a = validate.number("acceptance_rate", acceptance_rate, minimum=0, maximum=1)
    g = validate.positive_int("draft_tokens", draft_tokens, maximum=1000)
    c = validate.number("draft_cost_ratio", draft_cost_ratio, minimum=0, maximum=10)
    tokens = g + 1.0 if a == 1 else (1 - a ** (g + 1)) / (1 - a)
    return Speculative(
        acceptance_rate=a,
        draft_tokens=g,
        draft_cost_ratio=c,
        tokens_per_target_pass=tokens,
        speedup=tokens / (g * c + 1),
    )


__all__ = [
    "BATCH_LIMITS",
    "KV_SHARDING",
    "DayResult",
    "DecodePoint",
    "FleetPlan",
    "MAX_TP",
    "POLICIES",
    "Speculative",
    "TPOption",
    "batch_latency_frontier",
    "cost_per_million_tokens",
    "diurnal_rates",
    "kv_room_sequences",
    "replica_option",
    "replicas_for_slo",
    "scale_up_delay_seconds",
    "simulate_day",
    "speculative_decoding",
    "tensor_parallel_options",
    "tp_degrees",
    "tp_speedup",
]
