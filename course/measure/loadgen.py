"""A load generator for :mod:`course.measure.llm_server`, measuring as serving benchmarks do.

Requests come from :func:`course.calculators.serving.request_mix` (seeded exponential prompt and
answer lengths, Poisson arrivals at the offered rate). Each is sent over its own HTTP connection
at its arrival time, and the client stamps every streamed token, so:

- **TTFT** = first token received - request sent (queueing + prefill + network, as the client
  sees it);
- **ITL** = each gap between successive tokens of a request (vLLM's benchmark pools them over
  requests before taking percentiles);
- **TPOT** = (e2e - TTFT) / (tokens - 1) per request (GenAI-Perf calls this ITL);
- **e2e** = last token - request sent; throughput = completed requests (or tokens) / the time
  from the first send to the last token; **goodput** = requests per second that met the SLO.

Everything is bounded: a number of requests and a time budget, after which unfinished requests
are cancelled (their connection closes, and the server frees their KV blocks).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import math
import random
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from course.calculators import queueing, serving
from course.calculators.queueing import percentile
from course.facts import validate
from course.facts.report import Table
from course.measure import llm_server
from course.measure.decoding import serve_model
from course.measure.llm_server import POLICIES, Engine, running_server
from course.measure.timing import progress


@dataclass(frozen=True)
class RequestRecord:
    """One request as the client saw it (times in seconds; NaN where it never got there)."""

    rid: int
    prompt_tokens: int
    output_tokens: int  # asked for
    received_tokens: int
    sent_seconds: float  # since the start of the run
    ttft_seconds: float
    e2e_seconds: float
    itl_seconds: tuple[float, ...]
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error and self.received_tokens == self.output_tokens

    @property
    def tpot_seconds(self) -> float:
        if self.received_tokens < 2:
            return math.nan
        return (self.e2e_seconds - self.ttft_seconds) / (self.received_tokens - 1)


async def _request(
    host: str, port: int, prompt: list[int], max_tokens: int, abort_after: int | None = None
) -> tuple[list[float], str]:
    """Send one request; return the arrival time of each token (perf_counter) and an error."""
    stamps: list[float] = []
    if host.startswith("unix:"):  # the server fell back to a Unix socket (no loopback)
        reader, writer = await asyncio.open_unix_connection(host[5:])
    else:
        reader, writer = await asyncio.open_connection(host, port)
    try:
        body = json.dumps({"prompt": prompt, "max_tokens": max_tokens}).encode()
        writer.write(
            b"POST /generate HTTP/1.1\r\nHost: "
            + host.encode()
            + b"\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode()
            + b"\r\n\r\n"
            + body
        )
        await writer.drain()
        status = (await reader.readline()).decode()
        if " 200 " not in status:
            return stamps, status.strip() or "no response"
        await reader.readuntil(b"\r\n\r\n")
        while True:
            line = await reader.readline()
            if not line:
                return stamps, "connection closed early"
            if not line.startswith(b"data: "):
                continue
            if line.strip() == b"data: [DONE]":
                return stamps, ""
            stamps.append(time.perf_counter())
            if abort_after is not None and len(stamps) >= abort_after:
                return stamps, "aborted by the client"
    finally:
        writer.close()
        with contextlib.suppress(ConnectionError, OSError):
            await writer.wait_closed()


async def _run(
    host: str,
    port: int,
    mix: Sequence[serving.Request],
    vocab: int,
    budget_seconds: float,
    seed: int,
    abort_every: int,
) -> list[RequestRecord]:
    rng = random.Random(seed)
    start = time.perf_counter()
    tasks, sent = [], []

    async def one(i: int, r: serving.Request) -> RequestRecord:
        prompt = [rng.randrange(vocab) for _ in range(r.prompt_tokens)]
        t0 = time.perf_counter()
        sent.append(t0)
        abort = (
            1 + r.output_tokens // 2 if abort_every and i % abort_every == abort_every - 1 else None
        )
        try:
            stamps, err = await _request(host, port, prompt, r.output_tokens, abort)
        except (ConnectionError, OSError, asyncio.IncompleteReadError) as exc:
            stamps, err = [], type(exc).__name__
        except asyncio.CancelledError:
            return RequestRecord(
                i,
                r.prompt_tokens,
                r.output_tokens,
                0,
                t0 - start,
                math.nan,
                math.nan,
                (),
                "cancelled at the time budget",
            )
        ttft = stamps[0] - t0 if stamps else math.nan
        e2e = stamps[-1] - t0 if stamps else math.nan
        gaps = tuple(b - a for a, b in zip(stamps, stamps[1:], strict=False))
        return RequestRecord(
            i, r.prompt_tokens, r.output_tokens, len(stamps), t0 - start, ttft, e2e, gaps, err
        )

    for i, r in enumerate(mix):
        delay = r.arrival_seconds - (time.perf_counter() - start)
        if time.perf_counter() - start + max(delay, 0) > budget_seconds:
            break  # the time budget: stop sending
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(i, r)))
    left = max(0.5, budget_seconds - (time.perf_counter() - start))
    done, pending = await asyncio.wait(tasks, timeout=left) if tasks else (set(), set())
    for t in pending:
        t.cancel()
    await asyncio.gather(*pending, return_exceptions=True)
    return [t.result() for t in tasks if not t.cancelled() and t.exception() is None]


def run_load(
    host: str,
    port: int,
    mix: Sequence[serving.Request],
    *,
    vocab: int,
    budget_seconds: float = 20.0,
    seed: int = 0,
    abort_every: int = 0,
) -> list[RequestRecord]:
    """Send ``mix`` to the server at its arrival times and time every token (a fresh event loop in
    a thread of its own, so it runs the same from a script or a notebook). ``abort_every`` = k
    makes every k-th client hang up halfway through its answer (tests use it)."""
    validate.number("budget_seconds", budget_seconds, minimum=0, maximum=3600, strict_min=True)
    box: dict = {}

    def go() -> None:
        try:
            box["records"] = asyncio.run(
                _run(host, port, mix, vocab, budget_seconds, seed, abort_every)
            )
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=go, name="loadgen", daemon=True)
    t.start()
    t.join(budget_seconds + 30)
    if "error" in box:
        raise box["error"]
    return box.get("records", [])


@dataclass(frozen=True)
class LoadPoint:
    """One offered load on one server: what the clients measured, and the engine's batches."""

    policy: str
    offered_per_s: float  # the nominal rate the arrivals were drawn at
    sent: int
    completed: int
    duration_seconds: float  # first send to last token
    requests_per_s: float  # completed / duration
    output_tokens_per_s: float
    ttft_p50_seconds: float
    ttft_p99_seconds: float  # NaN unless at least 100 requests carry it (see percentile_of)
    itl_p50_seconds: float  # all gaps pooled (vLLM's ITL)
    itl_p99_seconds: float
    tpot_p50_seconds: float  # per request (GenAI-Perf's "ITL")
    e2e_p50_seconds: float
    e2e_p99_seconds: float
    goodput_per_s: float  # completed requests meeting the SLO, per second
    mean_batch: float  # sequences per engine step
    repeat: int = 0
    realised_per_s: float = math.nan  # (sent - 1) / (last send - first send): what really came
    measured: int = 0  # completed requests the percentiles are taken over (warm-up excluded)
    ttft_p90_seconds: float = math.nan
    itl_samples: int = 0  # gaps the ITL percentiles pool
    # 95 % distribution-free intervals of the percentiles above ("n too small" where none exists)
    ttft_p50_ci: str = ""
    ttft_p90_ci: str = ""
    ttft_p99_ci: str = ""
    itl_p50_ci: str = ""
    itl_p99_ci: str = ""
    e2e_p50_ci: str = ""
    e2e_p99_ci: str = ""
    tpot_p50_ci: str = ""


def samples_for(q: float) -> int:
    """Fewest samples that carry the ``q``-th percentile (0-100): ``ceil(100 / (100 - q))``, so
    that at least one sample lies above it (p50: 2, p90: 10, p99: 100). With fewer, a "p99" is
    the sample's maximum."""
    return math.ceil(100 / (100 - q) - 1e-9)


def percentile_of(xs: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of the finite values, NaN when too few carry it
    (:func:`samples_for`)."""
    xs = [x for x in xs if math.isfinite(x)]
    return percentile(xs, q) if len(xs) >= samples_for(q) else math.nan


def interval_of(xs: Sequence[float], q: float, confidence: float = 0.95) -> str:
    """The ``confidence`` interval of the ``q``-th percentile of the finite values
    (``queueing.percentile_interval``: distribution-free, from order statistics) as text,
    ``"[8.0 ms, 9.1 ms]"``, or ``"(n too small: 140 < 368)"`` where the sample has no bound
    (``queueing.samples_for_bound``: the values an upper and a lower end need)."""
    xs = [x for x in xs if math.isfinite(x)]
    if not xs:
        return "(no samples)"
    r = queueing.percentile_interval(xs, q, confidence)
    if r.bounded:
        return r.bracket()
    need = max(queueing.samples_for_bound(p, confidence) for p in (q, 100 - q))
    return f"(n too small: {r.count:,} < {need:,})"


def summarise(
    records: Sequence[RequestRecord],
    *,
    policy: str,
    offered_per_s: float,
    mean_batch: float,
    ttft_slo_seconds: float = math.inf,
    tpot_slo_seconds: float = math.inf,
    repeat: int = 0,
    warmup: int = 0,
) -> LoadPoint:
    """A :class:`LoadPoint` from one run's records: throughput over all of them, percentiles over
    the completed requests but the first ``warmup`` sent (the server still filling up), each only
    where enough samples carry it (:func:`percentile_of`)."""
    ok = [r for r in records if r.ok]
    sends = sorted(r.sent_seconds for r in records)
    skip = sends[warmup - 1] if 0 < warmup <= len(sends) else -math.inf
    steady = [r for r in ok if r.sent_seconds > skip]
    span = sends[-1] - sends[0] if len(sends) > 1 else 0.0
    if ok:
        t0 = min(r.sent_seconds for r in records)
        t1 = max(r.sent_seconds + r.e2e_seconds for r in ok)
        duration = max(t1 - t0, 1e-9)
    else:
        duration = math.nan
    good = [
        r
        for r in ok
        if r.ttft_seconds <= ttft_slo_seconds
        and (r.received_tokens < 2 or r.tpot_seconds <= tpot_slo_seconds)
    ]
    gaps = [g for r in steady for g in r.itl_seconds]
    rate = lambda n: n / duration if ok else 0.0  # noqa: E731
    return LoadPoint(
        policy=policy,
        offered_per_s=offered_per_s,
        sent=len(records),
        completed=len(ok),
        duration_seconds=duration,
        requests_per_s=rate(len(ok)),
        output_tokens_per_s=rate(sum(r.received_tokens for r in ok)),
        ttft_p50_seconds=percentile_of([r.ttft_seconds for r in steady], 50),
        ttft_p99_seconds=percentile_of([r.ttft_seconds for r in steady], 99),
        itl_p50_seconds=percentile_of(gaps, 50),
        itl_p99_seconds=percentile_of(gaps, 99),
        tpot_p50_seconds=percentile_of([r.tpot_seconds for r in steady], 50),
        e2e_p50_seconds=percentile_of([r.e2e_seconds for r in steady], 50),
        e2e_p99_seconds=percentile_of([r.e2e_seconds for r in steady], 99),
        goodput_per_s=rate(len(good)),
        mean_batch=mean_batch,
        repeat=repeat,
        realised_per_s=(len(sends) - 1) / span if span > 0 else math.nan,
        measured=len(steady),
        ttft_p90_seconds=percentile_of([r.ttft_seconds for r in steady], 90),
        itl_samples=len(gaps),
        ttft_p50_ci=interval_of([r.ttft_seconds for r in steady], 50),
        ttft_p90_ci=interval_of([r.ttft_seconds for r in steady], 90),
        ttft_p99_ci=interval_of([r.ttft_seconds for r in steady], 99),
        itl_p50_ci=interval_of(gaps, 50),
        itl_p99_ci=interval_of(gaps, 99),
        e2e_p50_ci=interval_of([r.e2e_seconds for r in steady], 50),
        e2e_p99_ci=interval_of([r.e2e_seconds for r in steady], 99),
        tpot_p50_ci=interval_of([r.tpot_seconds for r in steady], 50),
    )


def _mean_batch(engine: Engine, since: int) -> float:
    steps = engine.stats.steps[since:]
    return sum(s.batch for s in steps) / len(steps) if steps else math.nan


@dataclass
class ServingRun:
    """A whole lesson-13 measurement: capacity, the load sweep, static vs continuous, raw
    records."""

    capacity_per_s: float  # requests/s while saturated, from a burst (continuous batching)
    unloaded_ttft_seconds: float  # median TTFT of requests sent one at a time
    max_batch: int
    ttft_slo_seconds: float
    tpot_slo_seconds: float
    sweep: list[LoadPoint] = field(default_factory=list)
    batching: list[LoadPoint] = field(default_factory=list)  # static and continuous, interleaved
    records: dict[str, list[RequestRecord]] = field(default_factory=dict)
    service_seconds: list[float] = field(default_factory=list)  # e2e of unloaded requests
    elapsed_seconds: float = 0.0
    skipped: list[str] = field(default_factory=list)


def _mix(n: int, rate: float, seed: int, prompt: float, output: float) -> tuple:
    return serving.request_mix(
        n,
        mean_prompt_tokens=prompt,
        mean_output_tokens=output,
        max_seq_len=4 * int(prompt + output),
        arrivals_per_second=rate,
        seed=seed,
    )


def _capacity(records: Sequence[RequestRecord], max_batch: int) -> float:
    """Requests/s the server completes while it is saturated: in a burst of ``n`` requests, the
    first ``n - max_batch`` completions over the time they took (after that, fewer requests than
    batch slots are left and the batch runs part-empty, so the whole burst's rate would
    understate it). Everything the client sees is included: HTTP, scheduling, prefill, decode."""
    ends = sorted(r.sent_seconds + r.e2e_seconds for r in records if r.ok)
    k = len(ends) - max_batch
    if k < 1:
        raise RuntimeError("the burst completed too few requests: the server is not serving")
    start = min(r.sent_seconds for r in records)
    return k / (ends[k - 1] - start)


def _sweep(
    srv,
    engine: Engine,
    vocab: int,
    bar,
    left,
    *,
    fractions,
    n: int,
    point_seconds: float,
    repeats: int,
    warmup: float,
    seed: int,
    max_batch: int,
    prompt: float,
    output: float,
    reserve_seconds,
) -> ServingRun:
    solo = _mix(6, 0.0, seed, prompt, output)
    unloaded = []
    for i, r in enumerate(solo):  # one at a time: no queue
        unloaded += run_load(srv.host, srv.port, [r], vocab=vocab, budget_seconds=10, seed=seed + i)
    ok = [r for r in unloaded if r.ok]
    if not ok:
        raise RuntimeError(
            "the server answered no request: " + "; ".join(r.error for r in unloaded)
        )
    ttft0 = percentile([r.ttft_seconds for r in ok], 50)
    tpot0 = percentile([r.tpot_seconds for r in ok if math.isfinite(r.tpot_seconds)], 50)
    bar.update()
    burst = _mix(16 * max_batch, 0.0, seed + 1, prompt, output)
    recs = run_load(srv.host, srv.port, burst, vocab=vocab, budget_seconds=max(5.0, left() / 3))
    cap = _capacity(recs, max_batch)
    bar.update()
    run = ServingRun(
        capacity_per_s=cap,
        unloaded_ttft_seconds=ttft0,
        max_batch=max_batch,
        ttft_slo_seconds=5 * ttft0,
        tpot_slo_seconds=3 * tpot0,
        service_seconds=[r.e2e_seconds for r in ok],
    )
    run.records["burst"] = recs
    reserve = reserve_seconds(cap)
    for rep in range(repeats):  # repeats outermost: drift of a shared machine spreads over loads
        for k, f in enumerate(fractions):
            rate = f * cap
            count = max(n, round(rate * point_seconds))
            need = count / rate + 2
            if need > left() - reserve:
                run.skipped.append(
                    f"offered {f:.0%} of capacity, repeat {rep + 1}: would not fit the budget"
                )
            else:
                since = len(engine.stats.steps)
                recs = run_load(
                    srv.host,
                    srv.port,
                    _mix(count, rate, seed + 10 + k + 1000 * rep, prompt, output),
                    vocab=vocab,
                    budget_seconds=need * 3,
                )
                run.records[f"continuous@{f:g}#{rep}"] = recs
                run.sweep.append(
                    summarise(
                        recs,
                        policy="continuous",
                        offered_per_s=rate,
                        mean_batch=_mean_batch(engine, since),
                        ttft_slo_seconds=run.ttft_slo_seconds,
                        tpot_slo_seconds=run.tpot_slo_seconds,
                        repeat=rep,
                        warmup=round(warmup * count),
                    )
                )
            bar.update()
    return run


def serving_run(
    *,
    fractions: Sequence[float] = (0.5, 0.8, 1.0, 1.2),
    requests_per_point: int = 120,
    point_seconds: float = 3.0,
    repeats: int = 1,
    warmup_fraction: float = 0.1,
    max_batch: int = 8,
    mean_prompt_tokens: float = 24,
    mean_output_tokens: float = 24,
    batching_fraction: float = 0.8,
    batching_repeats: int = 2,
    budget_seconds: float = 60.0,
    seed: int = 0,
    model=None,
) -> ServingRun:
    """Measure the served model under load, as lesson 13 does.

    1. Unloaded: a few requests one at a time (TTFT and service time without queueing).
    2. Capacity: a burst of ``16 x max_batch`` requests at once; the rate of its completions while
       the batch is full is the saturated throughput (requests/s).
    3. The sweep: Poisson arrivals at each ``fraction`` of that capacity for ``point_seconds``
       (at least ``requests_per_point`` requests), the first ``warmup_fraction`` of them left out
       of the percentiles (the batch still filling),
       all of it ``repeats`` times with fresh seeds; a percentile is reported only where enough
       requests carry it (p99: 100, :func:`samples_for`). Each point records the rate its arrivals
       really had (``realised_per_s``). The time the batching comparison needs is kept back from
       the sweep. The SLO for goodput is 5x the unloaded TTFT and 3x the unloaded TPOT.
    4. Static vs continuous batching at ``batching_fraction`` of capacity, each on its own server,
       interleaved ``batching_repeats`` times with the same requests.

    Every point runs while the budget lasts (the rest is listed in ``skipped``).
    """
    t_start = time.perf_counter()
    n = validate.positive_int("requests_per_point", requests_per_point, maximum=10_000)
    reps = validate.positive_int("repeats", repeats, maximum=100)
    span = validate.number("point_seconds", point_seconds, minimum=0, maximum=3600)
    warm = validate.number("warmup_fraction", warmup_fraction, minimum=0, maximum=0.5)
    engine = Engine(model, policy="continuous", max_batch=max_batch)
    vocab = engine.decoder.config.vocab
    left = lambda: budget_seconds - (time.perf_counter() - t_start)  # noqa: E731
    steps = reps * len(fractions) + 2 + 2 * batching_repeats
    with progress(
        steps, desc="serving under load", budget_seconds=budget_seconds, show=True
    ) as bar:
        with running_server(engine) as srv:
            run = _sweep(
                srv,
                engine,
                vocab,
                bar,
                left,
                fractions=fractions,
                n=n,
                point_seconds=span,
                repeats=reps,
                warmup=warm,
                seed=seed,
                max_batch=max_batch,
                prompt=mean_prompt_tokens,
                output=mean_output_tokens,
                reserve_seconds=lambda cap: (
                    batching_repeats * 2 * (n / (batching_fraction * cap) + 2)
                ),
            )
        rate = batching_fraction * run.capacity_per_s
        mix = _mix(n, rate, seed + 99, mean_prompt_tokens, mean_output_tokens)
        for rep in range(batching_repeats):
            for policy in POLICIES:
                need = n / rate + 2
                if need * 2 > left():
                    run.skipped.append(
                        f"{policy} batching, repeat {rep + 1}: would not fit the budget"
                    )
                else:
                    eng = Engine(engine.decoder.model, policy=policy, max_batch=max_batch)
                    with running_server(eng) as srv:
                        recs = run_load(
                            srv.host, srv.port, mix, vocab=vocab, budget_seconds=need * 4
                        )
                    run.records[f"{policy}#{rep}"] = recs
                    run.batching.append(
                        summarise(
                            recs,
                            policy=policy,
                            offered_per_s=rate,
                            mean_batch=_mean_batch(eng, 0),
                            ttft_slo_seconds=run.ttft_slo_seconds,
                            tpot_slo_seconds=run.tpot_slo_seconds,
                            repeat=rep,
                        )
                    )
                bar.update()
    run.elapsed_seconds = time.perf_counter() - t_start
    return run


def replay(engine: Engine, mix: Sequence[serving.Request], *, seed: int = 0) -> list[RequestRecord]:
    """Run ``mix`` through ``engine``'s scheduler alone (no HTTP), each request submitted at the
    first iteration boundary after its arrival time, and time every token as the engine emits
    it: the same records as :func:`run_load` (TTFT from the arrival time, as a client that sent
    it then would see), without the sockets (whose cost on two shared cores would blur a few
    milliseconds' difference between schedules)."""
    rng = random.Random(seed)
    vocab = engine.decoder.config.vocab
    loop = asyncio.new_event_loop()
    live, queue = [], sorted(mix, key=lambda r: r.arrival_seconds)
    try:
        start = time.perf_counter()
        while queue or engine.running or engine.waiting:
            while queue and queue[0].arrival_seconds <= time.perf_counter() - start:
                r = queue.pop(0)
                prompt = [rng.randrange(vocab) for _ in range(r.prompt_tokens)]
                live.append((r, engine.submit(prompt, r.output_tokens, loop)))
            if not engine.step() and queue:  # idle: sleep until the next arrival
                time.sleep(max(0.0, queue[0].arrival_seconds - (time.perf_counter() - start)))
    finally:
        loop.close()
    return [
        RequestRecord(
            i,
            r.prompt_tokens,
            r.output_tokens,
            len(x.stamps),
            r.arrival_seconds,
            x.stamps[0] - start - r.arrival_seconds,
            x.stamps[-1] - start - r.arrival_seconds,
            tuple(b - a for a, b in zip(x.stamps, x.stamps[1:], strict=False)),
        )
        for i, (r, x) in enumerate(live)
    ]


#: Lesson 13's prefill experiment: the two schedules, and the iteration's token budget.
PREFILLS = ("whole prompts", "chunked")


def prefill_interference(
    model=None,
    *,
    chunk_tokens: int = 64,
    requests: int = 40,
    rate_per_s: float = 0.0,
    mean_prompt_tokens: float = 24,
    mean_output_tokens: float = 32,
    long_every: int = 4,
    long_prompt_tokens: int = 384,
    max_batch: int = 8,
    repeats: int = 3,
    seed: int = 0,
) -> Table:
    """Whole-prompt prefill (every newcomer's prompt runs in full in the iteration it joins, ahead
    of the decodes: prefill first) against chunked prefill (``chunk_tokens`` per iteration,
    decodes first), on the same arrivals (Poisson at ``rate_per_s``; 0, the default: all at once,
    so the batch stays full whatever this machine's speed), the two interleaved ``repeats`` times
    with fresh seeds. Chat-like requests (exponential lengths: ``mean_prompt_tokens``,
    ``mean_output_tokens``) with, every ``long_every``-th, a document of ``long_prompt_tokens``
    instead of the prompt (the mixed workloads Sarathi-Serve measured). Returns a table of one
    :class:`LoadPoint` per run (``policy`` is the schedule): throughput (output tokens per second
    over the run) and end-to-end latency beside ITL and TTFT, since chunking can smooth the gaps
    and still finish later; ITL percentiles pool every gap (vLLM's ITL), and a p99 is reported
    only where 100 gaps carry it. Each percentile prints with its 95 % interval (the table
    appends a record's ``*_ci`` to its percentile's cell)."""
    n = validate.positive_int("requests", requests, maximum=10_000)
    reps = validate.positive_int("repeats", repeats, maximum=100)
    rate = validate.number("rate_per_s", rate_per_s, minimum=0, maximum=1e6)
    model = serve_model(llm_server.MODEL_CONFIG) if model is None else model
    cap = model.config.max_positions
    every = validate.positive_int("long_every", long_every, maximum=10_000)
    long = validate.positive_int("long_prompt_tokens", long_prompt_tokens, maximum=cap - 1)
    points = []
    with progress(2 * reps, desc="prefill: whole vs chunked", budget_seconds=60, show=True) as bar:
        for rep in range(reps):
            mix = serving.request_mix(
                n,
                mean_prompt_tokens=mean_prompt_tokens,
                mean_output_tokens=mean_output_tokens,
                max_seq_len=cap - long,
                arrivals_per_second=rate,
                seed=seed + rep,
            )
            mix = [
                dataclasses.replace(r, prompt_tokens=long) if i % every == every - 1 else r
                for i, r in enumerate(mix)
            ]
            for label, chunk in zip(PREFILLS, (0, chunk_tokens), strict=True):
                engine = Engine(model, max_batch=max_batch, num_blocks=1024, chunk_tokens=chunk)
                recs = replay(engine, mix, seed=seed + rep)
                points.append(
                    summarise(
                        recs,
                        policy=label,
                        offered_per_s=rate,
                        mean_batch=_mean_batch(engine, 0),
                        repeat=rep,
                    )
                )
                bar.update()
    return Table(
        points,
        title="Whole prompts against chunked prefill, run by run (the scheduler alone)",
        columns=(
            "policy",
            "repeat",
            "output_tokens_per_s",
            "itl_samples",
            "itl_p99_seconds",
            "ttft_p50_seconds",
            "e2e_p50_seconds",
        ),
        formats={"output_tokens_per_s": "number"},
    )


def routing_replay(
    run: ServingRun,
    *,
    replicas: int = 2,
    utilisation: float = 0.8,
    requests: int = 2000,
    seed: int = 0,
) -> tuple:
    """Round-robin vs least-outstanding over ``replicas`` copies of the measured server, replayed
    with :func:`course.calculators.queueing.route`: Poisson arrivals at ``utilisation`` of their
    slots, each request's service time drawn (seeded) from the end-to-end times measured at the
    lowest load of the sweep (little queueing there). A model fed with measurements, not live
    servers: two servers on two shared cores would measure the cores, not the routing."""
    keys = sorted(
        (k for k in run.records if k.startswith("continuous@")),
        key=lambda k: float(k.split("@")[1].split("#")[0]),
    )
    services = [r.e2e_seconds for r in run.records[keys[0]] if r.ok] if keys else []
    services = services or run.service_seconds
    if not services:
        raise ValueError("run holds no measured service time")
    rng = random.Random(seed)
    mean = sum(services) / len(services)
    rate = utilisation * replicas * run.max_batch / mean
    t, arrivals, drawn = 0.0, [], []
    for _ in range(validate.positive_int("requests", requests, maximum=10**6)):
        t += rng.expovariate(rate)
        arrivals.append(t)
        drawn.append(rng.choice(services))
    return tuple(
        queueing.route(arrivals, drawn, replicas=replicas, slots=run.max_batch, policy=p)
        for p in queueing.ROUTING
    )


__all__ = [
    "LoadPoint",
    "PREFILLS",
    "interval_of",
    "RequestRecord",
    "ServingRun",
    "routing_replay",
    "run_load",
    "serving_run",
    "percentile_of",
    "prefill_interference",
    "replay",
    "samples_for",
    "summarise",
]
