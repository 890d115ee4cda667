"""A serving fleet sized for a peak load and a latency SLO, and a day of traffic with autoscaling.

Built on the course's per-GPU rates (:mod:`course.calculators.inference`: prefill and decode as
roofline floors over an achieved efficiency) and the M/M/c queue
(:mod:`course.calculators.queueing`):

- :func:`replicas_for_slo`: a replica (the fewest GPUs that hold the weights) runs ``batch``
  sequences at once, so it is ``batch`` servers of the queue, each held for one request's
  prefill and decode at that batch. The fleet is the fewest replicas whose p99 time to first
  token (queue wait + prefill) meets the SLO. An approximation: real service times are not
  exponential and a replica's step slows as its batch fills; lesson 13 compares it with a
  measured curve.
- :func:`tensor_parallel_options`: the same GPUs as one wide tensor-parallel replica or as many
  narrow ones. TP divides a pass over ``tp`` GPUs at ``tp_efficiency`` per doubling (the
  all-reduces of Megatron-LM, Shoeybi et al. 2019): lower latency per token, fewer tokens/s per GPU.
- :func:`cost_per_million_tokens`: a fleet's price over the tokens it really serves at a
  utilisation (:func:`course.calculators.cloud.usd_per_million_tokens`).
- :func:`diurnal_rates`, :func:`simulate_day`: a day's request rate and a fleet following it,
  either fixed for the peak or autoscaled (a target utilisation, a minimum, and new replicas that
  serve only after ``scale_up_delay_seconds``: boot plus loading the weights,
  :func:`scale_up_delay_seconds`). GPU-hours are billed from the moment a replica is requested.
- :func:`speculative_decoding`: expected tokens per target-model pass and the speed-up, from the
  acceptance rate (Leviathan et al. 2023, "Fast Inference from Transformers via Speculative
  Decoding", ICML, eq. 1 and theorem 3.8).


"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from types import MappingProxyType

from course.calculators import cloud, inference, memory, queueing
from course.facts import hardware, units, validate
from course.facts.models import TransformerConfig
from course.facts.report import Report

#: Most replicas a plan may need before it gives up.
MAX_REPLICAS = 100_000


@dataclass(frozen=True)
class FleetPlan(Report):
    """Replicas and GPUs that serve a peak load within a time-to-first-token SLO."""

    _title = "Fleet for a peak load and an SLO"
    _formats = MappingProxyType(
        {
            "gpu": "text",
            "peak_requests_per_s": "number",
            "batch": "number",
            "gpus_per_replica": "number",
            "replicas_for_throughput": "number",
            "replicas": "number",
            "gpus": "number",
            "utilisation": "percent",
            "quantile": "percent",
            "requests_per_s_per_replica": "number",
            "usd_per_million_output_tokens": "usd",
        }
    )

    gpu: str
    peak_requests_per_s: float
    batch: int
    gpus_per_replica: int
    slot_seconds: float  # one request's prefill + decode at this batch (the queue's service time)
    prefill_seconds: float  # the floor of the time to first token
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
    quantile: float = 0.99,
    prompt_tokens: int = 512,
    output_tokens: int = 256,
    batch: int = 16,
    dtype: str = "bf16",
    efficiency: float = 0.6,
    usd_per_gpu_hour: float = 2.0,
) -> FleetPlan:
    """Fewest replicas whose modelled ``quantile`` of time to first token meets
    ``ttft_slo_seconds``.

    Per replica, :func:`course.calculators.inference.serving` gives the GPUs that hold the weights,
    the prefill time and the busy time one request costs (``busy``); each of the ``batch`` slots
    is held for ``batch x busy`` seconds. TTFT = M/M/c wait (``c = replicas x batch``) + prefill.
    """
    rate = validate.number(
        "peak_requests_per_s", peak_requests_per_s, minimum=0, maximum=1e7, strict_min=True
    )
    slo = validate.number(
        "ttft_slo_seconds", ttft_slo_seconds, minimum=0, maximum=1e5, strict_min=True
    )
    q = validate.number("quantile", quantile, minimum=0.5, maximum=0.9999)
    base = inference.serving(
        config,
        gpu,
        requests_per_s=rate,
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        batch=batch,
        dtype=dtype,
        efficiency=efficiency,
        usd_per_gpu_hour=usd_per_gpu_hour,
    )
    prefill = base.time_to_first_token_seconds
    if prefill >= slo:
        raise ValueError(
            f"ttft_slo_seconds must exceed the prefill alone ({prefill:.3g} s on "
            f"{base.gpu}), got {slo:g}"
        )
    slot = base.batch * base.replica_busy_seconds
    # the fewest M/M/c servers whose q-quantile wait leaves room for the prefill (queueing's
    # search), rounded up to whole replicas of ``batch`` slots
    most = MAX_REPLICAS * base.batch
    try:
        servers = queueing.servers_for_wait(rate, slot, slo - prefill, quantile=q)
    except ValueError:
        servers = most + 1
    replicas = max(base.replicas, math.ceil(servers / base.batch))
    if replicas > MAX_REPLICAS:
        raise ValueError(
            f"peak_requests_per_s: {rate:g}/s needs more than {MAX_REPLICAS:,} replicas"
        )
    queue = queueing.mmc(rate, slot, replicas * base.batch)
    ttft = queue.wait_quantile_seconds(q) + prefill
    gpus = replicas * base.gpus_per_replica
    price = gpus * usd_per_gpu_hour
    return FleetPlan(
        gpu=base.gpu,
        peak_requests_per_s=rate,
        batch=base.batch,
        gpus_per_replica=base.gpus_per_replica,
        slot_seconds=slot,
        prefill_seconds=prefill,
        replicas_for_throughput=base.replicas,
        replicas=replicas,
        gpus=gpus,
        utilisation=queue.utilisation,
        quantile=q,
        ttft_quantile_seconds=ttft,
        requests_per_s_per_replica=rate / replicas,
        usd_per_hour=price,
        usd_per_million_output_tokens=cloud.usd_per_million_tokens(price, rate * output_tokens),
    )


@dataclass(frozen=True)
class TPOption(Report):
    """One way to spend a number of GPUs: ``replicas`` replicas of ``tp`` GPUs each."""

    _title = "Tensor parallel vs replicas"
    _formats = MappingProxyType(
        {
            "gpu": "text",
            "tp": "number",
            "replicas": "number",
            "output_tokens_per_s": "number",
            "output_tokens_per_s_per_gpu": "number",
        }
    )

    gpu: str
    tp: int  # GPUs per replica (tensor parallel degree)
    replicas: int
    prefill_seconds: float  # time to first token of one prompt, unloaded
    step_seconds: float  # one decode step at the batch: the inter-token latency
    output_tokens_per_s: float  # whole fleet, every replica decoding a full batch
    output_tokens_per_s_per_gpu: float


def tensor_parallel_options(
    config: TransformerConfig,
    gpu: hardware.GPU | str,
    *,
    gpus: int,
    batch: int = 16,
    prompt_tokens: int = 512,
    context_tokens: int = 640,
    tp_efficiency: float = 0.9,
    dtype: str = "bf16",
    efficiency: float = 0.6,
) -> tuple[TPOption, ...]:
    """Every power-of-two TP degree that holds the weights and divides ``gpus``, with its latency
    and throughput. A TP-``t`` pass takes ``t_1 / (t x tp_efficiency ** log2 t)``."""
    card = hardware.gpu(gpu)
    n = validate.positive_int("gpus", gpus, maximum=MAX_REPLICAS)
    eff_tp = validate.fraction("tp_efficiency", tp_efficiency)
    first = inference.prefill(config, prompt_tokens, card, dtype=dtype, efficiency=efficiency)
    step = inference.decode(
        config, card, batch=batch, context_tokens=context_tokens, dtype=dtype, efficiency=efficiency
    )
    fits = memory.gpus_needed(first.weights_bytes, card)  # 90 % of each GPU usable
    out, tp = [], 1
    while tp <= n:
        if tp >= fits and n % tp == 0:
            speed = tp * eff_tp ** math.log2(tp)
            replicas = n // tp
            tokens = replicas * step.batch / (step.step_seconds / speed)
            out.append(
                TPOption(
                    gpu=card.name,
                    tp=tp,
                    replicas=replicas,
                    prefill_seconds=first.seconds / speed,
                    step_seconds=step.step_seconds / speed,
                    output_tokens_per_s=tokens,
                    output_tokens_per_s_per_gpu=tokens / n,
                )
            )
        tp *= 2
    if not out:
        raise ValueError(
            f"gpus must be a multiple of a power of two >= {fits} (the GPUs that "
            f"hold the weights), got {n}"
        )
    return tuple(out)


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
    _formats = MappingProxyType(
        {
            "policy": "text",
            "peak_replicas": "number",
            "min_replicas": "number",
            "gpu_hours": "number",
            "missed_request_fraction": "percent",
        }
    )

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
    whole steps); surplus ones stop at once. ``requests_per_s_per_replica`` is what a replica
    serves within the SLO (:attr:`FleetPlan.requests_per_s_per_replica`).
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
    lag = math.ceil(delay / step - 1e-9)
    peak_need = max(low, math.ceil(max(rates) / cap - 1e-9))
    ready, starting = (peak_need, []) if mode == "fixed" else (low, [])
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
        {
            "acceptance_rate": "percent",
            "draft_tokens": "number",
            "draft_cost_ratio": "percent",
            "tokens_per_target_pass": "number",
            "speedup": "number",
        }
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
    "DayResult",
    "FleetPlan",
    "POLICIES",
    "Speculative",
    "TPOption",
    "cost_per_million_tokens",
    "diurnal_rates",
    "replicas_for_slo",
    "scale_up_delay_seconds",
    "simulate_day",
    "speculative_decoding",
    "tensor_parallel_options",
]
