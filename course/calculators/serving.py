"""Serving calculators: KV-cache allocation (contiguous vs paged) and batching (static vs
continuous).

Two pure simulations of what an inference server does with a stream of requests, each request a
prompt of ``prompt_tokens`` and an answer of ``output_tokens``:

- :func:`kv_allocation` compares how much KV-cache memory a batch of requests *reserves* with how
  much it *uses*. Systems before vLLM reserved one contiguous slab per request, sized for the
  longest sequence it might reach (``max_seq_len``), because the answer's length is unknown in
  advance; paging (Kwon et al. 2023, "Efficient Memory Management for Large Language Model
  Serving with PagedAttention", sec. 4) hands out fixed blocks of ``block_tokens`` tokens on
  demand, so the only waste is the unfilled part of each request's last block. The paper measures
  20.4-38.2 % of reserved KV memory actually used in earlier systems (60-80 % wasted, its Fig. 2)
  and under 4 % wasted with paging (96.3 % used).
- :func:`simulate_batching` is a discrete-event simulation of one model replica decoding
  requests that arrive over time. *Static* batching starts a batch and holds every slot until its
  longest request finishes; *continuous* (iteration-level) batching, Yu et al. 2022 "Orca" (OSDI),
  lets finished requests leave and waiting ones join at every decode step. A decode step over
  ``n`` sequences takes ``step_base_seconds + n * step_per_seq_seconds`` (weights read once per
  step plus per-sequence work: the shape the H100 reference run's 7B decode times follow), and a
  request joining pays ``prefill_seconds_per_token`` per prompt token once.

Seeded where random. Used by lesson 07 and its exercise set.
"""

from __future__ import annotations

import heapq
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from course.calculators.queueing import percentile
from course.facts import validate
from course.facts.report import Report

#: Most requests a simulation accepts.
MAX_REQUESTS = 200_000


@dataclass(frozen=True)
class Request:
    """One request: when it arrives (seconds), its prompt and answer lengths (tokens)."""

    prompt_tokens: int
    output_tokens: int
    arrival_seconds: float = 0.0

    def __post_init__(self) -> None:
        validate.positive_int(
            "prompt_tokens", self.prompt_tokens, minimum=0, maximum=validate.MAX_TOKENS
        )
        validate.positive_int("output_tokens", self.output_tokens, maximum=validate.MAX_TOKENS)
        validate.number("arrival_seconds", self.arrival_seconds, minimum=0, maximum=1e9)

    @property
    def tokens(self) -> int:
        """Prompt + answer: the KV-cache entries this request holds when it finishes."""
        return self.prompt_tokens + self.output_tokens


def _requests(requests: object) -> tuple[Request, ...]:
    if not isinstance(requests, Sequence) or isinstance(requests, str | bytes) or not requests:
        raise ValueError(f"requests must be a non-empty sequence of Request, got {requests!r}")
    if len(requests) > MAX_REQUESTS:
        raise ValueError(
            f"requests must hold at most {MAX_REQUESTS:,} requests, got {len(requests):,}"
        )
    for r in requests:
        if not isinstance(r, Request):
            raise ValueError(f"requests must hold Request objects, got {r!r}")
    return tuple(requests)


def request_mix(
    n: int,
    *,
    mean_prompt_tokens: float = 161,
    mean_output_tokens: float = 338,
    max_seq_len: int = 2048,
    arrivals_per_second: float = 0.0,
    seed: int = 0,
) -> tuple[Request, ...]:
    """``n`` requests with exponentially distributed prompt and answer lengths (seeded).

    The default means are those of the ShareGPT trace in Kwon et al. 2023 (Fig. 11a: 161 input,
    338 output tokens on average). Lengths are at least 1 and capped so that prompt + answer
    <= ``max_seq_len``. With ``arrivals_per_second`` > 0 requests arrive as a Poisson process at
    that rate; with 0 they all arrive at time 0.
    """
    count = validate.positive_int("n", n, maximum=MAX_REQUESTS)
    mp = validate.number(
        "mean_prompt_tokens", mean_prompt_tokens, minimum=1, maximum=validate.MAX_TOKENS
    )
    mo = validate.number(
        "mean_output_tokens", mean_output_tokens, minimum=1, maximum=validate.MAX_TOKENS
    )
    cap = validate.positive_int("max_seq_len", max_seq_len, minimum=2, maximum=validate.MAX_TOKENS)
    rate = validate.number("arrivals_per_second", arrivals_per_second, minimum=0, maximum=1e9)
    validate.positive_int("seed", seed, minimum=0)
    rng = random.Random(seed)
    t, out = 0.0, []
    for _ in range(count):
        prompt = min(cap - 1, max(1, round(rng.expovariate(1 / mp))))
        answer = min(cap - prompt, max(1, round(rng.expovariate(1 / mo))))
        if rate:
            t += rng.expovariate(rate)
        out.append(Request(prompt, answer, t))
    return tuple(out)


ALLOCATIONS = ("contiguous", "paged")


@dataclass(frozen=True)
class KVAllocation(Report):
    """KV-cache memory a set of requests reserves and uses, and how many fit in a memory budget."""

    _title = "KV-cache allocation"

    policy: str
    requests: int
    used_bytes: float  # KV entries the requests really hold when they finish
    reserved_bytes: float  # what the allocator set aside for them
    wasted_bytes: float  # reserved - used
    wasted_fraction: float  # wasted / reserved
    batch_that_fits: int  # requests of this mix that fit at once in memory_bytes (in order)


def kv_allocation(
    requests: Sequence[Request],
    *,
    kv_bytes_per_token: float,
    policy: str = "paged",
    max_seq_len: int = 2048,
    block_tokens: int = 16,
    memory_bytes: float | None = None,
) -> KVAllocation:
    """Reserved vs used KV-cache bytes for ``requests`` under contiguous or paged allocation.

    - ``"contiguous"``: each request reserves ``max_seq_len`` tokens' worth of cache up front (the
      most it may grow to), as servers before vLLM did (Kwon et al. 2023, sec. 3.1).
    - ``"paged"``: each request holds ``ceil(tokens / block_tokens)`` blocks of ``block_tokens``
      tokens (vLLM's default block is 16 tokens); only the last block is partly empty.

    ``kv_bytes_per_token`` is :func:`course.calculators.memory.kv_cache_bytes` for one token
    (OPT-13B: 819,200 B). ``batch_that_fits`` counts how many requests, taken in order (cycling
    through the mix if needed), fit in ``memory_bytes`` at their final length (0 when no budget is
    given). Reservations made for a request's prompt and answer are counted when it finishes, the
    moment it holds the most.
    """
    reqs = _requests(requests)
    per_token = validate.number("kv_bytes_per_token", kv_bytes_per_token, minimum=1, maximum=1e12)
    mode = validate.choice("policy", policy, ALLOCATIONS)
    cap = validate.positive_int("max_seq_len", max_seq_len, maximum=validate.MAX_TOKENS)
    block = validate.positive_int("block_tokens", block_tokens, maximum=validate.MAX_TOKENS)
    budget = 0.0
    if memory_bytes is not None:
        budget = validate.number("memory_bytes", memory_bytes, minimum=0, maximum=1e18)
    longest = max(r.tokens for r in reqs)
    if longest > cap:
        raise ValueError(
            f"max_seq_len must be at least the longest request ({longest:,} tokens), got {cap:,}"
        )

    def reserved_tokens(r: Request) -> int:
        return cap if mode == "contiguous" else block * math.ceil(r.tokens / block)

    used = sum(r.tokens for r in reqs) * per_token
    reserved = sum(reserved_tokens(r) for r in reqs) * per_token
    needs = [reserved_tokens(r) * per_token for r in reqs]
    cycles = int(budget // sum(needs))  # whole passes through the mix, counted at once
    fits, total = cycles * len(needs), cycles * sum(needs)
    for need in needs:  # then the requests of one more, partial pass
        if total + need > budget:
            break
        total, fits = total + need, fits + 1
    return KVAllocation(
        policy=mode,
        requests=len(reqs),
        used_bytes=used,
        reserved_bytes=reserved,
        wasted_bytes=reserved - used,
        wasted_fraction=(reserved - used) / reserved,
        batch_that_fits=fits,
    )


BATCHING = ("static", "continuous")


@dataclass(frozen=True)
class BatchingResult(Report):
    """What a stream of requests experienced under one batching policy (simulated)."""

    _title = "Batching simulation"

    policy: str
    requests: int
    makespan_seconds: float  # first arrival to last completion
    tokens_per_second: float  # answer tokens generated / makespan
    p50_latency_seconds: float  # arrival to last token, median
    p99_latency_seconds: float
    mean_batch: float  # sequences per decode step, averaged over steps


def simulate_batching(
    requests: Sequence[Request],
    *,
    policy: str = "continuous",
    max_batch: int = 16,
    step_base_seconds: float = 7.5e-3,
    step_per_seq_seconds: float = 0.17e-3,
    prefill_seconds_per_token: float = 0.0,
) -> BatchingResult:
    """Decode ``requests`` on one replica with static or continuous batching; report the outcome.

    Each decode step produces one token for every running sequence and takes
    ``step_base_seconds + n * step_per_seq_seconds`` for ``n`` sequences. The defaults come from
    the H100 reference run's Llama-2-7B decode (bf16, 1,024-token cache, eager): 7.69 ms at batch
    1 and 18.2 ms at batch 64 (a line through them: about 7.5 ms + 0.17 ms per sequence).
    A request joining pays ``prefill_seconds_per_token`` x its prompt once, added to that step.

    - ``"static"``: when the replica is idle, it takes up to ``max_batch`` waiting requests and
      decodes until the longest of them is done; finished sequences keep their slot empty.
    - ``"continuous"``: before every step, finished sequences leave and waiting requests join, up
      to ``max_batch`` running at once (Orca's iteration-level scheduling).

    Latency is arrival to last token. Event order is deterministic (ties by request index).
    """
    reqs = _requests(requests)
    mode = validate.choice("policy", policy, BATCHING)
    cap = validate.positive_int("max_batch", max_batch, maximum=100_000)
    base = validate.number("step_base_seconds", step_base_seconds, minimum=0, maximum=3600)
    per_seq = validate.number("step_per_seq_seconds", step_per_seq_seconds, minimum=0, maximum=3600)
    prefill = validate.number(
        "prefill_seconds_per_token", prefill_seconds_per_token, minimum=0, maximum=3600
    )
    if base == 0 and per_seq == 0:
        raise ValueError("step_base_seconds and step_per_seq_seconds must not both be 0")
    order = sorted(range(len(reqs)), key=lambda i: (reqs[i].arrival_seconds, i))
    pending = [(reqs[i].arrival_seconds, i) for i in order]
    heapq.heapify(pending)
    waiting: list[int] = []
    running: dict[int, int] = {}  # request index -> tokens still to generate
    finish = [0.0] * len(reqs)
    t, steps, seq_steps = 0.0, 0, 0
    static_batch_open = True
    while pending or waiting or running:
        while pending and pending[0][0] <= t:
            waiting.append(heapq.heappop(pending)[1])
        if not running and not waiting:
            t = pending[0][0]  # idle: jump to the next arrival
            continue
        joined: list[int] = []
        if mode == "continuous" or (mode == "static" and not running):
            static_batch_open = True
        if static_batch_open:
            while waiting and len(running) < cap:
                i = waiting.pop(0)
                running[i] = reqs[i].output_tokens
                joined.append(i)
            if mode == "static":
                static_batch_open = False
        n_active = sum(1 for left in running.values() if left > 0)
        slots = len(running)  # static batching keeps finished sequences' slots until the end
        dt = base + per_seq * (slots if mode == "static" else n_active)
        dt += prefill * sum(reqs[i].prompt_tokens for i in joined)
        t += dt
        steps += 1
        seq_steps += n_active
        for i in list(running):
            if running[i] > 0:
                running[i] -= 1
                if running[i] == 0:
                    finish[i] = t
        if mode == "continuous" or all(left == 0 for left in running.values()):
            running = {i: left for i, left in running.items() if left > 0}
    latencies = [finish[i] - reqs[i].arrival_seconds for i in range(len(reqs))]
    start = min(r.arrival_seconds for r in reqs)
    makespan = max(finish) - start
    return BatchingResult(
        policy=mode,
        requests=len(reqs),
        makespan_seconds=makespan,
        tokens_per_second=sum(r.output_tokens for r in reqs) / makespan,
        p50_latency_seconds=percentile(latencies, 50),
        p99_latency_seconds=percentile(latencies, 99),
        mean_batch=seq_steps / steps,
    )


__all__ = [
    "ALLOCATIONS",
    "BATCHING",
    "BatchingResult",
    "KVAllocation",
    "Request",
    "kv_allocation",
    "request_mix",
    "simulate_batching",
]
