"""Time and throughput of serving a language model: prefill, decode, time to first token, GPUs.

Generating text has two phases with different bottlenecks (lesson 02's roofline):

- **Prefill** runs the whole prompt through the model in one pass: ``2 x params`` FLOPs per token
  plus attention, every weight read once for all the prompt's tokens, so it is compute-bound.
  Its time is the *time to first token* (the first new token comes out of the prompt's last
  position).
- **Decode** makes one token per sequence per step: every weight (and each sequence's KV cache) is
  read again for a handful of FLOPs, so at small batch it is bandwidth-bound; batching sequences
  shares the weight read until the compute roof is reached
  (:func:`course.calculators.compute.decode_step`).

Both are roofline *floors* divided by an achieved fraction of the roof (``efficiency``); the H100
reference run (``course.facts.data.reference``, ``inference_7b``) measured prefill at 56-60 % of the
bf16 peak and decode at batch 1 at ~65 % of the HBM bandwidth. :func:`serving` turns a request rate
into GPUs and a cost per million tokens. Used by lesson 05.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from course.calculators import cloud, compute, energy
from course.calculators.memory import gpus_needed, kv_cache_bytes
from course.facts import hardware, units, validate
from course.facts.dtypes import BYTES_PER_VALUE
from course.facts.models import TransformerConfig, checked_config
from course.facts.report import Report

#: Longest time to a million output tokens :func:`serving_footprint` accepts (the 1e12 s limit
#: of :func:`course.calculators.energy.energy_joules`, about 31,700 years).
MAX_SERVING_SECONDS = 1e12
#: Number formats a weight or KV cache can be served in.
DTYPES = ("fp32", "fp16", "bf16", "fp8")


def _efficiency(value: object) -> float:
    return validate.number("efficiency", value, minimum=0, maximum=1, strict_min=True)


def _dtype(value: object) -> str:
    return str(validate.choice("dtype", value, DTYPES))


@dataclass(frozen=True)
class Prefill(Report):
    """Time of the prefill of ``batch`` prompts of ``prompt_tokens`` each (= time to first
    token)."""

    _title = "Prefill (time to first token)"
    _formats = {"prompt_tokens": "number"}

    gpu: str
    prompt_tokens: int
    batch: int
    work_flops: float  # forward FLOPs of all prompt tokens, attention (causal) included
    weights_bytes: float  # read once for the whole pass
    compute_floor_seconds: float
    memory_floor_seconds: float
    efficiency: float  # achieved fraction of the binding roof
    seconds: float  # max(floors) / efficiency
    bound: str
    tokens_per_s: float  # prompt tokens processed per second


def prefill(
    config: TransformerConfig,
    prompt_tokens: int,
    gpu: hardware.GPU | str,
    *,
    batch: int = 1,
    dtype: str = "bf16",
    efficiency: float = 1.0,
) -> Prefill:
    """Prefill time of ``batch`` prompts: max(FLOPs / peak, weight bytes / bandwidth) / efficiency.

    FLOPs from :func:`course.calculators.compute.forward_flops` with a causal mask counted as half
    the attention square (what FlashAttention-style kernels execute). ``efficiency`` = 1 gives the
    floor; the H100 reference run reached 0.56-0.60 of the dense bf16 peak.
    """
    c, card = checked_config(config), hardware.gpu(gpu)
    s = validate.positive_int("prompt_tokens", prompt_tokens, maximum=validate.MAX_TOKENS)
    b = validate.positive_int("batch", batch, maximum=10**6)
    d, eff = _dtype(dtype), _efficiency(efficiency)
    flops = compute.forward_flops(c, s, batch=b, causal=True)
    w_bytes = c.params * BYTES_PER_VALUE[d]
    roof = compute.roofline_seconds(
        flops, w_bytes, card.peak_flop_per_s(d), card.memory_bandwidth_bytes_per_s
    )
    seconds = roof.seconds / eff
    return Prefill(
        gpu=card.name,
        prompt_tokens=s,
        batch=b,
        work_flops=flops,
        weights_bytes=w_bytes,
        compute_floor_seconds=roof.compute_seconds,
        memory_floor_seconds=roof.memory_seconds,
        efficiency=eff,
        seconds=seconds,
        bound=roof.bound,
        tokens_per_s=s * b / seconds,
    )


@dataclass(frozen=True)
class Decode(Report):
    """One decoding step of a batch, weights *and* KV cache read (see :func:`decode`)."""

    _title = "Decoding step"
    _formats = {"context_tokens": "number"}

    gpu: str
    batch: int
    context_tokens: int
    weights_bytes: float
    kv_cache_bytes: float  # read once per step: every sequence's cache
    work_flops: float
    memory_floor_seconds: float
    compute_floor_seconds: float
    efficiency: float
    step_seconds: float
    bound: str
    tokens_per_s: float  # all sequences together
    tokens_per_s_per_sequence: float
    compute_bound_batch: float  # weights only (course.calculators.compute.decode_step)


def decode(
    config: TransformerConfig,
    gpu: hardware.GPU | str,
    *,
    batch: int = 1,
    context_tokens: int = 1024,
    dtype: str = "bf16",
    efficiency: float = 1.0,
) -> Decode:
    """Time of one decoding step: (weights + KV cache) / bandwidth or FLOPs / peak, / efficiency.

    Extends :func:`course.calculators.compute.decode_step` with the KV cache (``context_tokens`` per
    sequence, :func:`course.calculators.memory.kv_cache_bytes`) and the attention FLOPs over it,
    which is why the H100 reference run's step grew from 6.4 ms at batch 1 to 17.7 ms at batch 64.
    """
    c, card = checked_config(config), hardware.gpu(gpu)
    b = validate.positive_int("batch", batch, maximum=10**6)
    ctx = validate.positive_int("context_tokens", context_tokens, maximum=validate.MAX_TOKENS)
    d, eff = _dtype(dtype), _efficiency(efficiency)
    step = compute.decode_step(c.params, d, card, b)
    kv = kv_cache_bytes(
        c.layers, c.kv_heads, c.head_dim, ctx, batch=b, bytes_per_value=BYTES_PER_VALUE[d]
    )
    flops = step.work_flops + b * compute.attention_flops_per_token(c, ctx)
    roof = compute.roofline_seconds(
        flops, step.weights_bytes + kv, card.peak_flop_per_s(d), card.memory_bandwidth_bytes_per_s
    )
    seconds = roof.seconds / eff
    return Decode(
        gpu=card.name,
        batch=b,
        context_tokens=ctx,
        weights_bytes=step.weights_bytes,
        kv_cache_bytes=kv,
        work_flops=flops,
        memory_floor_seconds=roof.memory_seconds,
        compute_floor_seconds=roof.compute_seconds,
        efficiency=eff,
        step_seconds=seconds,
        bound=roof.bound,
        tokens_per_s=b / seconds,
        tokens_per_s_per_sequence=1 / seconds,
        compute_bound_batch=step.compute_bound_batch,
    )


def request_tokens(
    config: TransformerConfig, prompt_tokens: object, output_tokens: object
) -> tuple[int, int]:
    """A request's prompt and answer lengths, checked to fit the model's context window."""
    config = checked_config(config)
    p = validate.positive_int("prompt_tokens", prompt_tokens, maximum=validate.MAX_TOKENS)
    out = validate.positive_int("output_tokens", output_tokens, maximum=validate.MAX_TOKENS)
    if p + out > config.max_positions:
        raise ValueError(
            f"prompt tokens + output tokens must be <= {config.max_positions:,} for "
            f"{config.name} (its context window), got {p:,} + {out:,} = {p + out:,}"
        )
    return p, out


@dataclass(frozen=True)
class Serving(Report):
    """GPUs and cost to serve a steady stream of requests (see :func:`serving`)."""

    _title = "Serving estimate"
    _formats = {"usd_per_million_output_tokens": "usd"}

    gpu: str
    batch: int
    requests_per_s: float
    context_tokens: int  # prompt + output: the longest context a sequence reaches
    weights_bytes: float
    kv_cache_bytes: float  # the whole batch at its longest context
    gpus_per_replica: int  # enough to hold weights + KV cache (90 % of memory usable)
    replica_busy_seconds: float  # GPU-replica time one request costs (prefill + its decode share)
    replicas: int
    gpus: int
    output_tokens_per_s: float
    time_to_first_token_seconds: float
    cost_per_hour_usd: float
    usd_per_million_output_tokens: float


def serving(
    config: TransformerConfig,
    gpu: hardware.GPU | str,
    *,
    requests_per_s: float,
    prompt_tokens: int = 512,
    output_tokens: int = 256,
    batch: int = 16,
    dtype: str = "bf16",
    efficiency: float = 0.6,
    usd_per_gpu_hour: float = 2.0,
) -> Serving:
    """GPUs needed for ``requests_per_s`` and the cost per million generated tokens (estimate).

    One replica (the fewest GPUs that hold the weights and the KV cache of ``batch`` sequences at
    their longest context, prompt + output, in 90 % of their memory) serves ``batch`` sequences at a
    time; prompt + output must fit in the model's context window. A request costs it the prefill of
    its prompt plus ``output_tokens`` decode steps shared by the batch (context = prompt + half the
    output, on average): ``busy = prefill + output_tokens x step(batch) / batch``.
    Replicas = ceil(rate x busy). Cost per 1M output tokens = GPUs x price per GPU-hour / (output
    tokens per hour) x 1e6. A replica of several GPUs is assumed to split each pass evenly (tensor
    parallelism with free communication). Leaves out queueing and uneven request lengths.
    """
    c, card = checked_config(config), hardware.gpu(gpu)
    rate = validate.number(
        "requests_per_s", requests_per_s, minimum=0, maximum=1e9, strict_min=True
    )
    p, out = request_tokens(c, prompt_tokens, output_tokens)
    price = validate.number("usd_per_gpu_hour", usd_per_gpu_hour, minimum=0, maximum=1e6)
    d = _dtype(dtype)
    first = prefill(c, p, card, dtype=d, efficiency=efficiency)
    step = decode(c, card, batch=batch, context_tokens=p + out // 2, dtype=d, efficiency=efficiency)
    kv = kv_cache_bytes(
        c.layers,
        c.kv_heads,
        c.head_dim,
        p + out,
        batch=step.batch,
        bytes_per_value=BYTES_PER_VALUE[d],
    )
    per_replica = gpus_needed(first.weights_bytes + kv, card)
    busy = first.seconds / per_replica + out * step.step_seconds / per_replica / step.batch
    if not math.isfinite(rate * busy):
        raise ValueError(f"efficiency={efficiency!r} is too small to give a finite serving time")
    if rate * busy * per_replica > compute.MAX_GPUS:
        raise ValueError(
            f"efficiency is too small for {rate:,.6g} requests per second: serving "
            f"them needs {rate * busy * per_replica:.3g} GPUs, more than "
            f"{compute.MAX_GPUS:,}"
        )
    replicas = max(1, math.ceil(rate * busy - 1e-9))
    gpus = replicas * per_replica
    tokens_per_s = rate * out
    cost = gpus * price
    return Serving(
        gpu=card.name,
        batch=step.batch,
        requests_per_s=rate,
        context_tokens=p + out,
        weights_bytes=first.weights_bytes,
        kv_cache_bytes=kv,
        gpus_per_replica=per_replica,
        replica_busy_seconds=busy,
        replicas=replicas,
        gpus=gpus,
        output_tokens_per_s=tokens_per_s,
        time_to_first_token_seconds=first.seconds / per_replica,
        cost_per_hour_usd=cost,
        usd_per_million_output_tokens=cloud.usd_per_million_tokens(cost, tokens_per_s),
    )


@dataclass(frozen=True)
class ServingFootprint(Report):
    """What a million output tokens cost a :class:`Serving` estimate: time, energy, money, CO2."""

    _title = "Per million output tokens"

    gpus: int
    seconds: float  # the serving GPUs' time to generate a million output tokens
    energy_joules: float  # the GPUs at TDP x PUE for that time
    gpu_time_usd: float
    electricity_usd: float
    total_usd: float
    co2_kg: float


def serving_footprint(
    s: Serving,
    gpu: hardware.GPU | str,
    *,
    usd_per_kwh: float = 0.0,
    pue: float = 1.0,
    grid_g_per_kwh: float = 0.0,
) -> ServingFootprint:
    """Energy, electricity, CO2 and total cost per million output tokens of a serving estimate.

    Time = 1e6 / output tokens per second; energy = GPUs x TDP x time x PUE
    (:func:`course.calculators.energy.energy_joules`, whose limits apply); GPU time at the hourly
    price of :func:`serving`. Renting includes the electricity: set ``usd_per_kwh`` only when you
    own the GPUs.
    """
    if not isinstance(s, Serving):
        raise ValueError(f"s must be a Serving estimate (see serving()), got {s!r}")
    card = hardware.gpu(gpu)
    seconds = 1e6 / s.output_tokens_per_s
    if seconds > MAX_SERVING_SECONDS:
        raise ValueError(
            f"requests per second x output tokens must reach a million output tokens "
            f"in {MAX_SERVING_SECONDS / 3.15576e7:,.0f} years; got "
            f"{s.output_tokens_per_s:.3g} tokens/s"
        )
    if s.gpus * card.tdp_watts > validate.MAX_WATTS:
        raise ValueError(
            f"requests per second: serving {s.requests_per_s:,.3g} requests per second takes "
            f"{s.gpus:,} GPUs drawing {units.fmt_watts(s.gpus * card.tdp_watts)}, more than the "
            f"{units.fmt_watts(validate.MAX_WATTS)} of any datacenter campus; serve fewer"
        )
    joules = energy.energy_joules(s.gpus * card.tdp_watts, seconds, pue=pue)
    power_usd = energy.electricity_usd(joules, usd_per_kwh)
    return ServingFootprint(
        gpus=s.gpus,
        seconds=seconds,
        energy_joules=joules,
        gpu_time_usd=s.usd_per_million_output_tokens,
        electricity_usd=power_usd,
        total_usd=s.usd_per_million_output_tokens + power_usd,
        co2_kg=energy.co2_kg(joules, grid_g_per_kwh),
    )


__all__ = [
    "DTYPES",
    "Decode",
    "Prefill",
    "Serving",
    "ServingFootprint",
    "decode",
    "prefill",
    "request_tokens",
    "serving",
    "serving_footprint",
]
