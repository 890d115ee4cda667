"""Findings of lesson 13: a real server under load (records of ``course.measure.loadgen``).

- :func:`by_load`, :func:`load_sweep`: the repeats of each load together, at the realised arrival
  rate, with the requests each percentile rests on and the spread over repeats;
- :func:`knee_rate` / :func:`knee`: the load at which p99 TTFT leaves its low-load level, and the
  throughput plateau;
- :func:`batching`: static vs continuous batching on the same requests, repeat by repeat;
- :func:`queue_model`: the M/M/c prediction beside the measured p90 and p99 TTFT at each load;
- :func:`chunked_prefill`: whole-prompt against chunked prefill, the ITL p99 chunking removes;
- :func:`paging`: max-length reservation against optimistic admission with preemption;
- :func:`tools_disagree`: one run's ITL as vLLM's benchmark and GenAI-Perf would report it;
- :func:`routing`: round-robin vs least-outstanding (a replay, not a measurement: says so).

Records are ``LoadPoint``-like (dataclasses or dicts with the same fields).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from course.calculators import queueing
from course.facts.units import fmt_seconds
from course.presentation.findings._common import SAME, bound, get, times

#: p99 TTFT this many times its lowest-load value marks the knee.
KNEE_FACTOR = 3.0


def _finite(points: Sequence[Any], *names: str) -> list[Any]:
    return [p for p in points if all(math.isfinite(get(p, n, math.nan)) for n in names)]


def _median(xs: Sequence[float]) -> float:
    xs = sorted(x for x in xs if math.isfinite(x))
    if not xs:
        return math.nan
    mid = len(xs) // 2
    return xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2


def _rate(p: Any) -> float:
    """The arrival rate a point really had (its realised rate; the nominal one if not recorded)."""
    r = get(p, "realised_per_s", math.nan)
    return r if r is not None and math.isfinite(r) else get(p, "offered_per_s")


def by_load(points: Sequence[Any]) -> list[dict]:
    """The repeats of each offered load together: the mean realised rate, the median (and range)
    of p99 TTFT and of throughput over repeats, and the fewest requests a percentile rested on."""
    groups: dict[float, list[Any]] = {}
    for p in points:
        groups.setdefault(round(get(p, "offered_per_s"), 9), []).append(p)
    rows = []
    for offered, ps in groups.items():
        p99 = [get(p, "ttft_p99_seconds", math.nan) for p in ps]
        fin = [x for x in p99 if math.isfinite(x)]
        rows.append(
            {
                "offered_per_s": offered,
                "realised_per_s": sum(_rate(p) for p in ps) / len(ps),
                "realised_range": (min(_rate(p) for p in ps), max(_rate(p) for p in ps)),
                "ttft_p99_seconds": _median(p99),
                "ttft_p90_seconds": _median([get(p, "ttft_p90_seconds", math.nan) for p in ps]),
                "p99_range": (min(fin), max(fin)) if fin else (math.nan, math.nan),
                "requests_per_s": _median([get(p, "requests_per_s", math.nan) for p in ps]),
                "repeats": len(ps),
                "measured": min(get(p, "measured", 0) or get(p, "completed", 0) for p in ps),
                "completed_share": min(
                    get(p, "completed", 0) / max(get(p, "sent", 1), 1) for p in ps
                ),
                "ttft_p90_ci": get(ps[0], "ttft_p90_ci", "") if len(ps) == 1 else "",
                "ttft_p99_ci": get(ps[0], "ttft_p99_ci", "") if len(ps) == 1 else "",
            }
        )
    return sorted(rows, key=lambda r: r["realised_per_s"])


def knee_rate(points: Sequence[Any], factor: float = KNEE_FACTOR) -> float:
    """The lowest realised load (median over repeats) whose p99 TTFT is ``factor`` x that of the
    lowest load (NaN if none, or fewer than three loads carry a p99)."""
    rows = [r for r in by_load(points) if math.isfinite(r["ttft_p99_seconds"])]
    if len(rows) < 3:
        return math.nan
    base = rows[0]["ttft_p99_seconds"]
    hit = next((r for r in rows[1:] if r["ttft_p99_seconds"] > factor * base), None)
    return math.nan if hit is None else hit["realised_per_s"]


def knee(points: Sequence[Any], *, capacity_per_s: float | None = None) -> str:
    """Where latency explodes and what throughput the server reached (medians over repeats,
    against the realised arrival rate)."""
    rows = [
        r
        for r in by_load(points)
        if math.isfinite(r["ttft_p99_seconds"]) and math.isfinite(r["requests_per_s"])
    ]
    if len(rows) < 3:
        return (
            "Fewer than three loads carry a p99 (at least 100 requests each, or the budget ran "
            "out): no knee to find; rerun."
        )
    low, top = rows[0], max(rows, key=lambda r: r["requests_per_s"])
    k = knee_rate(points)
    plateau = (
        f"Throughput peaked at {top['requests_per_s']:.1f} requests/s (arrivals at "
        f"{top['realised_per_s']:.1f}/s)"
    )
    if capacity_per_s:
        plateau += f", against {capacity_per_s:.1f}/s measured in the burst"
    base = low["ttft_p99_seconds"]
    base_text = fmt_seconds(base) + bound(low, "ttft_p99_seconds", 99)
    if math.isnan(k):
        return (
            f"{plateau}. p99 TTFT never reached {KNEE_FACTOR:g}x its low-load value "
            f"({base_text}): this sweep stayed below the knee."
        )
    after = [r for r in rows if r["realised_per_s"] >= k]
    top_row = max(after, key=lambda r: r["ttft_p99_seconds"])
    worst = top_row["ttft_p99_seconds"]
    text = (
        f"{plateau}. The knee: at {k:.1f} arriving requests/s p99 TTFT passed "
        f"{KNEE_FACTOR:g}x its low-load {base_text}, reaching {fmt_seconds(worst)}"
        f"{bound(top_row, 'ttft_p99_seconds', 99)} ({times(worst / base)}) beyond it: requests "
        "now wait in a queue for a batch slot."
    )
    if any(r["ttft_p99_seconds"] <= KNEE_FACTOR * base for r in after[1:]):
        text += (
            " A higher load measured below the threshold again: the points are noisy (a shared "
            "machine); look at the spread over repeats before trusting the exact knee."
        )
    return text


def load_sweep(points: Sequence[Any]) -> str:
    """How much each point rests on: requests per percentile, completed share, the realised rate
    against the nominal one, and the spread of p99 TTFT over repeats."""
    rows = by_load(points)
    if not rows:
        return "No load point was measured."
    fewest = min(r["measured"] for r in rows)
    reps = min(r["repeats"] for r in rows)

    def between(lo: str, hi: str) -> str:
        return lo if lo == hi else f"{lo}-{hi}"

    lines = [
        f"- {r['offered_per_s']:.1f}/s offered, "
        + between(f"{r['realised_range'][0]:.1f}", f"{r['realised_range'][1]:.1f}")
        + "/s arrived; p99 TTFT "
        + (
            between(fmt_seconds(r["p99_range"][0]), fmt_seconds(r["p99_range"][1]))
            + bound(r, "ttft_p99_seconds", 99)
            if math.isfinite(r["p99_range"][0])
            else "not carried (under 100 requests)"
        )
        + f"; {r['completed_share']:.0%} of requests completed"
        for r in rows
    ]
    spreads = [
        r["p99_range"][1] / r["p99_range"][0]
        for r in rows
        if r["repeats"] > 1 and math.isfinite(r["p99_range"][0]) and r["p99_range"][0] > 0
    ]
    drift = max(abs(x / r["offered_per_s"] - 1) for r in rows for x in r["realised_range"])
    head = (
        f"Every percentile rests on at least {fewest} requests per point (warm-up excluded), "
        f"{reps} repeat{'s' if reps > 1 else ''} per load; the arrivals really came up to "
        f"{drift:.0%} off their nominal rate, so the points are placed at the realised rate."
    )
    need = queueing.samples_for_bound(99)
    if fewest < need:
        head += (
            f" A p99 has a distribution-free 95 % upper bound only from {need} requests on "
            f"(queueing.samples_for_bound): below that, marked 'n too small', a p99 is one of the "
            "few largest values, with no bound on how far the true p99 lies above it."
        )
    else:
        head += " Each p99 carries its distribution-free 95 % interval where the run recorded one."
    if spreads:
        head += (
            f" Between repeats of one load p99 TTFT varied by up to {times(max(spreads))}: "
            "differences smaller than that are noise."
        )
    else:
        head += " One repeat per load: no spread to give; the recorded sweep has it."
    return head + "\n" + "\n".join(lines)


def _pairs(
    points: Sequence[Any], base: str = "static", new: str = "continuous"
) -> list[tuple[Any, Any]]:
    """(``base``, ``new``) runs of the same repeat, in repeat order."""
    by = {(get(p, "policy"), get(p, "repeat", 0)): p for p in points}
    reps = sorted({r for _, r in by})
    return [(by[(base, r)], by[(new, r)]) for r in reps if (base, r) in by and (new, r) in by]


def batching(points: Sequence[Any]) -> str:
    """Continuous vs static batching, same requests and load: throughput and p99 TTFT."""
    pairs = [
        (s, c)
        for s, c in _pairs(points)
        if get(s, "requests_per_s", 0) > 0 and get(c, "requests_per_s", 0) > 0
    ]
    if not pairs:
        return "Static and continuous batching were not both measured (budget): rerun the cell."
    thr = [get(c, "requests_per_s") / get(s, "requests_per_s") for s, c in pairs]
    lat = [get(s, "ttft_p99_seconds") / get(c, "ttft_p99_seconds") for s, c in pairs]
    shown = ", ".join(times(r) for r in thr)
    head = (
        f"At {get(pairs[0][0], 'offered_per_s'):.1f} offered requests/s, continuous batching "
        f"completed {shown} the requests/s of static batching (repeat by repeat)"
    )
    ups = [r > 1 + SAME for r in thr]
    downs = [r < 1 - SAME for r in thr]
    if any(ups) and any(downs):
        return f"{head}: the repeats disagree in direction, so noise wins here; rerun."
    tail = (
        f"; its p99 TTFT was {', '.join(times(r) for r in lat)} lower"
        if all(r > 1 for r in lat)
        else "; p99 TTFT did not improve in every repeat"
    )
    if all(ups):
        return (
            f"{head}{tail}. Static batching holds every slot until the longest answer ends and "
            "admits no one meanwhile, so short answers leave idle slots and new requests "
            "queue."
        )
    if any(ups) and not any(downs):
        return (
            f"{head}{tail}. Faster in {sum(ups)} of {len(ups)} repeats and about the same (within "
            f"{SAME:.0%}) in the rest: static batching holds every slot until the longest answer "
            "ends, which costs throughput only where the load is near what it can serve."
        )
    if all(downs):
        return (
            f"{head}{tail}. Unexpected: continuous was slower. Below saturation both keep up, "
            "so throughput only follows the offered load; look at TTFT instead."
        )
    return (
        f"{head}{tail}. Throughput within {SAME:.0%}: at this load both keep up with the "
        "arrivals (throughput = offered load below saturation); the difference is in the "
        "wait, not the rate."
    )


def queue_model(
    points: Sequence[Any], *, capacity_per_s: float, slots: int, unloaded_ttft_seconds: float
) -> str:
    """The M/M/c model (``slots`` servers fed the measured capacity, plus the unloaded TTFT)
    against the measured p90 and p99 TTFT (medians over repeats, at the realised rate), load by
    load, and where and why it fails."""
    rows = [r for r in by_load(points) if math.isfinite(r["ttft_p99_seconds"])]
    if not rows or not capacity_per_s or capacity_per_s <= 0:
        return "No load point carries a p99, or no capacity was measured: nothing to compare."
    lines, ratios = [], []
    for r in rows:
        rate = r["realised_per_s"]
        head = f"- {rate:.1f}/s (utilisation {rate / capacity_per_s:.0%}): "
        model = {
            q: queueing.ttft_quantile_seconds(
                rate,
                service_seconds=slots / capacity_per_s,
                servers=slots,
                prefill_seconds=unloaded_ttft_seconds,
                quantile=q,
            )
            for q in (0.9, 0.99)
        }
        if math.isinf(model[0.99]):
            meas = fmt_seconds(r["ttft_p99_seconds"]) + bound(r, "ttft_p99_seconds", 99)
            lines.append(
                f"{head}the model says unbounded; measured p99 {meas} (a finite run cannot wait "
                "forever)."
            )
            continue
        parts = []
        for q in (0.9, 0.99):
            meas = r[f"ttft_p{q * 100:g}_seconds"]
            if math.isfinite(meas):
                ratios.append(meas / model[q])
                parts.append(
                    f"p{q * 100:g} model {fmt_seconds(model[q])}, measured {fmt_seconds(meas)}"
                    f"{bound(r, f'ttft_p{q * 100:g}_seconds', q * 100)} ({times(meas / model[q])})"
                )
        lines.append(head + "; ".join(parts) + ".")
    if not ratios:
        return (
            "Every measured load was at or past the model's saturation: nothing finite to "
            "compare.\n" + "\n".join(lines)
        )
    within = sum(0.5 <= x <= 2 for x in ratios)
    longer = sum(x > 2 for x in ratios)
    shorter = sum(x < 0.5 for x in ratios)
    text = (
        "M/M/c (fed the measured capacity) against the measured tail, p90 and p99 (the median "
        "says nothing: below saturation the model predicts no wait at all). The model was within "
        f"2x at {within} of {len(ratios)} percentiles."
    )
    if longer:
        text += (
            f" The measured tail was more than 2x longer at {longer}: the model's service rate is "
            "fixed, while the real server's steps slow as its batch fills, each newcomer's "
            "prefill pauses every decoding sequence, and on a shared machine other jobs take "
            "the core."
        )
    if shorter:
        text += (
            f" It was less than half the model's at {shorter}: M/M/c draws exponential service "
            "times, whose long ones make long waits; this server's service is far more regular, "
            "and its batch admits a waiting request at the next step."
        )
    return text + "\n" + "\n".join(lines)


def chunked_prefill(points: Sequence[Any], *, chunk_tokens: int) -> str:
    """Whole-prompt prefill against chunked prefill (``loadgen.prefill_interference`` records,
    policies ``"whole prompts"`` and ``"chunked"``), repeat by repeat: the pooled ITL p99 each
    gave, how many gaps carry it, and what chunking cost in TTFT."""
    return _chunked_itl(points, chunk_tokens) + prefill_end_to_end(points)


def _chunked_itl(points: Sequence[Any], chunk_tokens: int) -> str:
    pairs = [
        (w, c)
        for w, c in _pairs(points, "whole prompts", "chunked")
        if math.isfinite(get(w, "itl_p99_seconds", math.nan))
        and math.isfinite(get(c, "itl_p99_seconds", math.nan))
    ]
    if not pairs:
        return "No repeat carried an ITL p99 under both schedules (100 gaps each): rerun."
    gaps = min(get(p, "itl_samples", 0) for pair in pairs for p in pair)
    ratio = [get(w, "itl_p99_seconds") / get(c, "itl_p99_seconds") for w, c in pairs]

    def span(ps: Sequence[Any], k: str) -> str:
        q, n = (50, "measured") if "_p50_" in k else (99, "itl_samples")
        return ", ".join(fmt_seconds(get(p, k)) + bound(p, k, q, n) for p in ps)

    whole, chunked = [w for w, _ in pairs], [c for _, c in pairs]
    head = (
        f"Pooled ITL p99 over {len(pairs)} repeat{'s' if len(pairs) > 1 else ''} (each p99 rests "
        f"on at least {gaps:,} gaps): whole prompts {span(whole, 'itl_p99_seconds')}, chunks of "
        f"{chunk_tokens} tokens {span(chunked, 'itl_p99_seconds')}; whole over chunked "
        f"{', '.join(times(r) for r in ratio)} (repeat by repeat)"
    )
    lower = sum(r > 1 + SAME for r in ratio)
    ttft = (
        f" TTFT p50 went from {span(whole, 'ttft_p50_seconds')} to "
        f"{span(chunked, 'ttft_p50_seconds')}"
    )
    if _median([get(c, "ttft_p50_seconds") for c in chunked]) > _median(
        [get(w, "ttft_p50_seconds") for w in whole]
    ):
        ttft += ": a long prompt now takes several iterations to get in, the price of never "
        ttft += "stalling the decodes."
    else:
        ttft += ": no higher here, although a long prompt now takes several iterations to get in."
    if lower == len(ratio):
        return (
            f"{head}. A whole prompt runs in the iteration it joins, and every sequence decoding "
            "beside it waits for all its tokens: the long gaps are those. In chunks, an "
            f"iteration carries at most {chunk_tokens} tokens, decodes included, so no gap holds "
            f"a whole long prompt.{ttft}"
        )
    if lower:
        return (
            f"{head}. Lower in {lower} of {len(ratio)} repeats only: on this machine the "
            "difference is not above the noise (other jobs take the core); rerun the cell."
        )
    return (
        f"{head}. Chunking did not lower the ITL p99 here: the long prompts' prefill was not "
        "what made the longest gaps (a batch too small to be stalled, or other jobs on the "
        "core)."
    )


def prefill_end_to_end(points: Sequence[Any]) -> str:
    """Throughput (output tokens per second) and end-to-end p50, whole prompts against chunked,
    repeat by repeat: chunking smooths the gaps, and can finish later (each chunk reads the KV
    cache of the chunks before it, and a long prompt waits several iterations to be whole)."""
    pairs = [
        (w, c)
        for w, c in _pairs(points, "whole prompts", "chunked")
        if all(
            math.isfinite(get(p, k, math.nan))
            for p in (w, c)
            for k in ("output_tokens_per_s", "e2e_p50_seconds")
        )
    ]
    if not pairs:
        return " Throughput and end-to-end latency were not recorded for both schedules."
    n = len(pairs)
    tput = [get(c, "output_tokens_per_s") / get(w, "output_tokens_per_s") for w, c in pairs]
    e2e = [get(c, "e2e_p50_seconds") / get(w, "e2e_p50_seconds") for w, c in pairs]
    slower = sum(r > 1 + SAME for r in e2e)
    faster = sum(r < 1 - SAME for r in e2e)
    head = (
        f" End to end: chunked over whole prompts, throughput {', '.join(times(r) for r in tput)}"
        f" and end-to-end p50 {', '.join(times(r) for r in e2e)} (repeat by repeat)"
    )
    if slower == n:
        return (
            f"{head}: chunked was slower end to end in {n} of {n} repeats. Smoother gaps are "
            "paid for in total time here: each chunk re-reads the KV cache of the chunks before "
            "it, and a long prompt needs several iterations before it decodes."
        )
    if faster == n:
        return (
            f"{head}: chunked was faster end to end in {n} of {n} repeats as well: the decodes "
            "no longer waited behind whole prompts."
        )
    if slower == faster == 0:
        return f"{head}: end to end the same within {100 * SAME:.0f} % in every repeat."
    return (
        f"{head}: slower in {slower}, faster in {faster} of {n} repeats: not above this "
        "machine's noise; rerun the cell."
    )


def paging(results: Sequence[Any]) -> str:
    """Reserving each request's whole allowed length against admitting on its prompt and
    preempting when the pool runs dry, per pool size (``llm_server.BurstResult`` records): the
    batch each ran, the steps it took, evictions and recomputed tokens."""
    pools: dict[int, dict[str, Any]] = {}
    for r in results:
        pools.setdefault(get(r, "pool_blocks"), {})[get(r, "admission")] = r
    lines = []
    for blocks in sorted(pools, reverse=True):
        by = pools[blocks]
        if "reserve" not in by or "optimistic" not in by:
            continue
        res, opt = by["reserve"], by["optimistic"]
        head = (
            f"- **{blocks} blocks**: reserving the whole allowed length ran a mean batch of "
            f"{get(res, 'mean_batch'):.1f} over {get(res, 'steps')} steps, using at most "
            f"{get(res, 'peak_pool_share'):.0%} of the pool; admitting on the prompt ran "
            f"{get(opt, 'mean_batch'):.1f} over {get(opt, 'steps')} steps"
        )
        if get(opt, "preempted") == 0 and get(opt, "steps") == get(res, "steps"):
            lines.append(
                f"{head}, the same schedule: the pool never ran short, so how it is handed out "
                "changed nothing."
            )
        else:
            lines.append(
                f"{head} ({times(get(res, 'steps') / get(opt, 'steps'))} fewer), at the price of "
                f"{get(opt, 'preempted')} evictions and {get(opt, 'recomputed_tokens'):,} tokens "
                f"prefilled again; on this machine {get(res, 'output_tokens_per_s'):,.0f} against "
                f"{get(opt, 'output_tokens_per_s'):,.0f} output tokens/s."
            )
    if not lines:
        return "Both admission policies are needed on the same pool to compare them."
    return (
        "The same burst, the same real answer lengths, which the scheduler does not know (it sees "
        "only the cap each client asked for):\n" + "\n".join(lines)
    )


def tools_disagree(records: Sequence[Any]) -> str:
    """One run's inter-token latency two ways: every gap pooled (vLLM's ITL) and per-request
    average (GenAI-Perf's ITL, vLLM's TPOT)."""
    ok = [r for r in records if get(r, "itl_seconds")]
    gaps = [g for r in ok for g in get(r, "itl_seconds")]
    per_req = [sum(get(r, "itl_seconds")) / len(get(r, "itl_seconds")) for r in ok]
    if len(per_req) < 2:
        return "Too few streamed answers to compare the two definitions."
    p_gap, p_req = queueing.percentile(gaps, 99), queueing.percentile(per_req, 99)
    ci_gap, ci_req = (queueing.percentile_interval(xs, 99).text() for xs in (gaps, per_req))
    verdict = (
        "pooled gaps give the larger p99: one slow step (a prefill barging into the "
        "batch) shows up in full, while a per-request average smooths it away"
        if p_gap > p_req * (1 + SAME)
        else "the two agree within 10 % here: no step was much slower than the others"
        if p_gap >= p_req * (1 - SAME)
        else "per-request averages give the larger p99: a few requests were slow throughout"
    )
    return (
        f"p99 inter-token latency from the same {len(ok)} requests: {ci_gap} over "
        f"all {len(gaps)} gaps pooled (vLLM's ITL) vs {ci_req} over per-request "
        f"averages (GenAI-Perf's ITL, vLLM's TPOT); {verdict}. Same run, same words, "
        "different numbers: always say which definition a table uses."
    )


def routing(results: Sequence[Any]) -> str:
    """Round-robin vs least-outstanding, replayed with the measured service times."""
    by = {get(r, "policy"): r for r in results}
    if "round-robin" not in by or "least-outstanding" not in by:
        return "Both routing policies are needed to compare them."
    rr, lor = by["round-robin"], by["least-outstanding"]
    a, b = get(rr, "p99_wait_seconds"), get(lor, "p99_wait_seconds")
    head = (
        f"Replayed (a model fed this machine's measured service times, not two live servers): "
        f"p99 wait {fmt_seconds(a)}{bound(rr, 'p99_wait_seconds', 99, 'requests')} round-robin, "
        f"{fmt_seconds(b)}{bound(lor, 'p99_wait_seconds', 99, 'requests')} least-outstanding"
    )
    if a <= 1e-9 and b <= 1e-9:
        return f"{head}. Nobody waited with either policy: the load is too low to tell them apart."
    if b < a * (1 - SAME):
        return (
            f"{head}: least-outstanding cut it by {times(a / max(b, 1e-12))}. Round-robin is "
            "blind to a replica stuck behind long answers; counting outstanding requests sees "
            "it."
        )
    if b > a * (1 + SAME):
        return (
            f"{head}: least-outstanding was worse here, which happens with few requests "
            "when ties send bursts to one replica; rerun with more requests."
        )
    return (
        f"{head}: about the same (within {SAME:.0%}); at this load and spread of lengths the "
        "policy hardly matters."
    )


__all__ = [
    "KNEE_FACTOR",
    "batching",
    "by_load",
    "chunked_prefill",
    "knee",
    "knee_rate",
    "load_sweep",
    "paging",
    "prefill_end_to_end",
    "queue_model",
    "routing",
    "tools_disagree",
]
