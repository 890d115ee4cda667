"""Findings of lesson 13: a real server under load (records of ``course.measure.loadgen``).

- :func:`knee_rate` / :func:`knee`: the offered load at which p99 TTFT leaves its low-load level,
  and the throughput plateau;
- :func:`batching`: static vs continuous batching on the same requests, repeat by repeat;
- :func:`queue_model`: the M/M/c prediction beside the measured TTFT at each load;
- :func:`tools_disagree`: one run's ITL as vLLM's benchmark and GenAI-Perf would report it;
- :func:`routing`: round-robin vs least-outstanding (a replay, not a measurement: says so).

Records are ``LoadPoint``-like (dataclasses or dicts with the same fields). Layer 4.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from course.calculators import queueing
from course.facts.units import fmt_seconds
from course.presentation.findings._common import SAME, get, times

#: p99 TTFT this many times its lowest-load value marks the knee.
KNEE_FACTOR = 3.0


def _finite(points: Sequence[Any], *names: str) -> list[Any]:
    return [p for p in points if all(math.isfinite(get(p, n, math.nan)) for n in names)]


def knee_rate(points: Sequence[Any], factor: float = KNEE_FACTOR) -> float:
    """The lowest offered load whose p99 TTFT is ``factor`` x that of the lowest load (NaN if
    none, or fewer than three points)."""
    rows = sorted(
        _finite(points, "offered_per_s", "ttft_p99_seconds"), key=lambda p: get(p, "offered_per_s")
    )
    if len(rows) < 3:
        return math.nan
    base = get(rows[0], "ttft_p99_seconds")
    hit = next((p for p in rows[1:] if get(p, "ttft_p99_seconds") > factor * base), None)
    return math.nan if hit is None else get(hit, "offered_per_s")


def knee(points: Sequence[Any], *, capacity_per_s: float | None = None) -> str:
    """Where latency explodes and what throughput the server reached."""
    rows = sorted(
        _finite(points, "offered_per_s", "ttft_p99_seconds", "requests_per_s"),
        key=lambda p: get(p, "offered_per_s"),
    )
    if len(rows) < 3:
        return "Fewer than three loads were measured (the budget ran out): no knee to find; rerun."
    low, top = rows[0], max(rows, key=lambda p: get(p, "requests_per_s"))
    k = knee_rate(rows)
    plateau = (
        f"Throughput peaked at {get(top, 'requests_per_s'):.1f} requests/s (offered "
        f"{get(top, 'offered_per_s'):.1f}/s)"
    )
    if capacity_per_s:
        plateau += f", against {capacity_per_s:.1f}/s measured in the burst"
    if math.isnan(k):
        return (
            f"{plateau}. p99 TTFT never reached {KNEE_FACTOR:g}x its low-load value "
            f"({fmt_seconds(get(low, 'ttft_p99_seconds'))}): this sweep stayed below the knee "
            "(the server kept up, or too few requests per point to build a queue)."
        )
    after = [p for p in rows if get(p, "offered_per_s") >= k]
    worst = max(get(p, "ttft_p99_seconds") for p in after)
    text = (
        f"{plateau}. The knee: at {k:.1f} offered requests/s p99 TTFT passed "
        f"{KNEE_FACTOR:g}x its low-load {fmt_seconds(get(low, 'ttft_p99_seconds'))}, reaching "
        f"{fmt_seconds(worst)} ({times(worst / get(low, 'ttft_p99_seconds'))}) beyond it: "
        "requests now wait in a queue for a batch slot."
    )
    later = [
        p
        for p in after[1:]
        if get(p, "ttft_p99_seconds") <= KNEE_FACTOR * get(low, "ttft_p99_seconds")
    ]
    if later:
        text += (
            " A higher load measured below the threshold again: the points are noisy (few "
            "requests per point on a shared machine); rerun before trusting the exact knee."
        )
    return text


def _pairs(points: Sequence[Any]) -> list[tuple[Any, Any]]:
    by = {(get(p, "policy"), get(p, "repeat", 0)): p for p in points}
    reps = sorted({r for _, r in by})
    return [
        (by[("static", r)], by[("continuous", r)])
        for r in reps
        if ("static", r) in by and ("continuous", r) in by
    ]


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
    """How well the M/M/c model (fed the measured capacity) predicts the measured p50 TTFT."""
    rows = sorted(
        _finite(points, "offered_per_s", "ttft_p50_seconds"), key=lambda p: get(p, "offered_per_s")
    )
    if not rows or not capacity_per_s or capacity_per_s <= 0:
        return "No load point or no capacity measured: nothing to compare the model with."
    lines, within = [], 0
    for p in rows:
        rate = get(p, "offered_per_s")
        pred = queueing.ttft_quantile_seconds(
            rate,
            service_seconds=slots / capacity_per_s,
            servers=slots,
            prefill_seconds=unloaded_ttft_seconds,
            quantile=0.5,
        )
        meas = get(p, "ttft_p50_seconds")
        if math.isinf(pred):
            lines.append(
                f"- {rate:.1f}/s (utilisation {rate / capacity_per_s:.0%}): the model "
                f"says unbounded; measured p50 {fmt_seconds(meas)} (a finite run of a "
                "few requests cannot wait forever)."
            )
            continue
        ok = 0.5 <= meas / pred <= 2
        within += ok
        lines.append(
            f"- {rate:.1f}/s (utilisation {rate / capacity_per_s:.0%}): model "
            f"{fmt_seconds(pred)}, measured {fmt_seconds(meas)} "
            f"({times(meas / pred)} the model{'' if ok else ', off by more than 2x'})."
        )
    finite = sum(1 for ln in lines if "unbounded" not in ln)
    head = (
        f"The M/M/c model was within 2x of the measured median TTFT at {within} of {finite} "
        "loads below saturation. It assumes exponential service and a fixed service rate; "
        "the real server's steps slow down as its batch fills and prefills interrupt decoding, "
        "so expect it to be optimistic at low load and to miss where the knee sits exactly."
    )
    return head + "\n" + "\n".join(lines)


def tools_disagree(records: Sequence[Any]) -> str:
    """One run's inter-token latency two ways: every gap pooled (vLLM's ITL) and per-request
    average (GenAI-Perf's ITL, vLLM's TPOT)."""
    ok = [r for r in records if get(r, "itl_seconds")]
    gaps = [g for r in ok for g in get(r, "itl_seconds")]
    per_req = [sum(get(r, "itl_seconds")) / len(get(r, "itl_seconds")) for r in ok]
    if len(per_req) < 2:
        return "Too few streamed answers to compare the two definitions."
    p_gap, p_req = queueing.percentile(gaps, 99), queueing.percentile(per_req, 99)
    verdict = (
        "pooled gaps give the larger p99: one slow step (a prefill barging into the "
        "batch) shows up in full, while a per-request average smooths it away"
        if p_gap > p_req * (1 + SAME)
        else "the two agree within 10 % here: no step was much slower than the others"
        if p_gap >= p_req * (1 - SAME)
        else "per-request averages give the larger p99: a few requests were slow throughout"
    )
    return (
        f"p99 inter-token latency from the same {len(ok)} requests: {fmt_seconds(p_gap)} over "
        f"all {len(gaps)} gaps pooled (vLLM's ITL) vs {fmt_seconds(p_req)} over per-request "
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
        f"p99 wait {fmt_seconds(a)} with round-robin, {fmt_seconds(b)} with "
        "least-outstanding-requests"
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
    "knee",
    "knee_rate",
    "queue_model",
    "routing",
    "tools_disagree",
]
