"""Every branch of lesson 13's findings, from synthetic records."""

from __future__ import annotations

import math

import pytest

from course.calculators import queueing
from course.facts.units import fmt_seconds
from course.presentation.findings import server_load as f


def _p(rate, p99, thr=None, p50=None, policy="continuous", repeat=0):
    return {
        "policy": policy,
        "repeat": repeat,
        "offered_per_s": rate,
        "ttft_p99_seconds": p99,
        "ttft_p50_seconds": p50 if p50 is not None else p99 / 2,
        "requests_per_s": thr if thr is not None else rate,
    }


def test_knee_found():
    pts = [_p(2, 0.05), _p(4, 0.06), _p(6, 0.2, 5.5), _p(8, 0.9, 5.8)]
    assert f.knee_rate(pts) == 6
    text = f.knee(pts, capacity_per_s=6.0)
    assert "The knee: at 6.0" in text and "5.8 requests/s" in text and "noisy" not in text


def test_knee_not_reached_missing_and_noisy():
    assert "stayed below the knee" in f.knee([_p(1, 0.05), _p(2, 0.05), _p(3, 0.06)])
    assert math.isnan(f.knee_rate([_p(1, 0.05), _p(2, 0.5)]))
    assert "Fewer than three" in f.knee([_p(1, 0.05)])
    noisy = [_p(1, 0.05), _p(2, 0.3), _p(3, 0.06), _p(4, 0.5)]
    assert "noisy" in f.knee(noisy)
    assert "Fewer than three" in f.knee([_p(1, math.nan), _p(2, 0.1), _p(3, math.nan)])


def _pair(static_thr, cont_thr, rep, s99=1.0, c99=0.1):
    return [
        _p(5, s99, static_thr, policy="static", repeat=rep),
        _p(5, c99, cont_thr, policy="continuous", repeat=rep),
    ]


def test_batching_branches():
    faster = f.batching(_pair(3, 5, 0) + _pair(3.2, 5.1, 1))
    assert "holds every slot" in faster and "lower" in faster
    same = f.batching(_pair(5, 5.1, 0) + _pair(5, 4.9, 1))
    assert "within 10%" in same
    slower = f.batching(_pair(5, 3, 0, s99=0.1, c99=1.0))
    assert "Unexpected" in slower and "did not improve" in slower
    assert "noise wins" in f.batching(_pair(3, 5, 0) + _pair(5, 3, 1))
    mixed = f.batching(_pair(3, 5, 0) + _pair(5, 5.2, 1))
    assert "Faster in 1 of 2 repeats and about the same" in mixed
    assert "not both measured" in f.batching(_pair(3, 5, 0)[:1])


def _q(rate, p90, p99, realised=None):
    return {**_p(rate, p99), "ttft_p90_seconds": p90, "realised_per_s": realised or rate}


def test_queue_model_compares_the_tail_and_says_where_it_fails():
    cap, slots, t0 = 10.0, 4, 0.01
    model = {
        q: queueing.ttft_quantile_seconds(
            8, service_seconds=slots / cap, servers=slots, prefill_seconds=t0, quantile=q
        )
        for q in (0.9, 0.99)
    }
    kw = dict(capacity_per_s=cap, slots=slots, unloaded_ttft_seconds=t0)
    close = f.queue_model([_q(8, model[0.9] * 1.2, model[0.99] * 0.9)], **kw)
    assert "within 2x at 2 of 2 percentiles" in close and "p99 model" in close
    assert "longer" not in close and "less than half" not in close
    shorter = f.queue_model([_q(8, 0.011, 0.012), _q(12, 0.02, 0.03)], **kw)
    assert "less than half the model's at 2" in shorter and "exponential" in shorter
    assert "unbounded" in shorter  # 12/s on a 10/s capacity
    longer = f.queue_model([_q(8, 50.0, 90.0)], **kw)
    assert "more than 2x longer at 2" in longer and "batch fills" in longer
    # repeats of one load are compared as their median
    pair = [_q(8, model[0.9], model[0.99]), _q(8, model[0.9], 100 * model[0.99])]
    text = f.queue_model(pair + [_q(8, model[0.9], model[0.99])], **kw)
    assert text.count("- 8.0/s") == 1 and "within 2x at 2 of 2" in text
    # the realised rate, not the nominal one, is what the model is fed
    moved = f.queue_model([_q(8, 1.0, 1.0, realised=12.0)], **kw)
    assert "12.0/s" in moved and "nothing finite" in moved
    assert "nothing to compare" in f.queue_model([_q(5, 0.1, math.nan)], **kw)


def test_load_sweep_reports_requests_spread_and_realised_rate():
    pts = [
        {**_q(5, 0.1, 0.2, realised=5.5), "measured": 180, "sent": 200, "completed": 200},
        {**_q(5, 0.1, 0.6, realised=4.8), "measured": 180, "sent": 200, "completed": 190},
        {**_q(9, 0.3, 0.9, realised=9.1), "measured": 170, "sent": 200, "completed": 200},
        {**_q(9, 0.3, 0.9, realised=9.0), "measured": 175, "sent": 200, "completed": 200},
    ]
    text = f.load_sweep(pts)
    assert "at least 170 requests" in text and "2 repeats" in text
    assert "up to 3.0×" in text and "95% of requests completed" in text
    assert "10% off their nominal rate" in text
    assert "only from 368 requests on" in text and "(n too small: 170 < 368" in text
    big = [{**p, "measured": 400} for p in pts]
    assert "n too small" not in f.load_sweep(big) and "95 % interval" in f.load_sweep(big)
    rows = f.by_load(pts)
    assert [r["offered_per_s"] for r in rows] == [5, 9]
    assert rows[0]["ttft_p99_seconds"] == pytest.approx(0.4)  # median of the two repeats
    one = f.load_sweep([{**_q(5, 0.1, math.nan), "measured": 40}])
    assert "not carried" in one and "no spread" in one
    assert "No load point" in f.load_sweep([])


def test_every_percentile_a_finding_prints_carries_its_interval_or_a_mark():
    """Issue 44: one repeat per load (the live run): knee, load_sweep and queue_model print each
    p90/p99 with the interval its record carries, or 'n too small' where the requests it rests on
    cannot bound it; medians over repeats say their interval was not recorded."""
    pts = [
        {**_q(r, 0.01 * r, 0.02 * r), "measured": 400, "ttft_p99_ci": f"[p99 ci {r}]"}
        for r in (2, 4, 6)
    ] + [{**_q(8, 0.5, 1.0), "measured": 140}]
    pts[0]["ttft_p90_ci"] = "[p90 ci 2]"
    knee, sweep = f.knee(pts), f.load_sweep(pts)
    assert "low-load 40 ms [p99 ci 2]" in knee and "1.0 s (n too small: 140 < 368)" in knee
    for r in (2, 4, 6):
        assert f"p99 TTFT {fmt_seconds(0.02 * r)} [p99 ci {r}];" in sweep
    model = f.queue_model(pts, capacity_per_s=10, slots=4, unloaded_ttft_seconds=0.01)
    assert "measured 20 ms [p90 ci 2]" in model and "measured 40 ms [p99 ci 2]" in model
    assert "measured 60 ms (interval not recorded)" in model  # p90 of 4/s: no interval held
    repeated = f.knee(pts + [{**p, "repeat": 1} for p in pts])
    assert "[p99 ci" not in repeated and "(interval not recorded)" in repeated
    text = f.tools_disagree([{"itl_seconds": (0.01,) * 19 + (0.5,)} for _ in range(20)])
    assert (
        "n too small: an upper bound needs n >= 368" in text
    )  # 400 gaps bound it, 20 requests do not
    assert text.count(" [") == 1


def test_tools_disagree_branches():
    spiky = [{"itl_seconds": (0.01,) * 19 + (0.5,)} for _ in range(5)]
    assert "pooled gaps give the larger p99" in f.tools_disagree(spiky)
    even = [{"itl_seconds": (0.01,) * 5} for _ in range(5)]
    assert "agree within 10 %" in f.tools_disagree(even)
    slow = [{"itl_seconds": (0.01,) * 20} for _ in range(97)] + [{"itl_seconds": (1.0,)}] * 3
    assert "per-request averages give the larger" in f.tools_disagree(slow)
    assert "Too few" in f.tools_disagree([{"itl_seconds": (0.1,)}])


def test_routing_branches():
    def r(policy, w):
        return {"policy": policy, "p99_wait_seconds": w}

    assert "cut it by" in f.routing([r("round-robin", 1.0), r("least-outstanding", 0.2)])
    assert "was worse" in f.routing([r("round-robin", 0.2), r("least-outstanding", 1.0)])
    assert "about the same" in f.routing([r("round-robin", 1.0), r("least-outstanding", 0.95)])
    assert "Nobody waited" in f.routing([r("round-robin", 0.0), r("least-outstanding", 0.0)])
    assert "Both routing" in f.routing([r("round-robin", 1.0)])
    assert "not two live servers" in f.routing([r("round-robin", 1.0), r("least-outstanding", 1)])


def _burst(blocks, admission, batch, steps, preempted=0, recomputed=0, tps=100.0):
    return {
        "pool_blocks": blocks,
        "admission": admission,
        "mean_batch": batch,
        "steps": steps,
        "peak_pool_share": 0.5,
        "preempted": preempted,
        "recomputed_tokens": recomputed,
        "output_tokens_per_s": tps,
    }


def test_paging_says_when_the_pool_limits_and_what_preemption_costs():
    big = [_burst(256, "reserve", 11.6, 137), _burst(256, "optimistic", 11.6, 137)]
    small = [
        _burst(32, "reserve", 3.2, 502),
        _burst(32, "optimistic", 6.8, 227, preempted=37, recomputed=1336),
    ]
    text = f.paging(big + small)
    assert "the same schedule" in text and "changed nothing" in text
    assert "2.2× fewer" in text and "37 evictions and 1,336 tokens" in text
    assert text.index("256 blocks") < text.index("32 blocks")
    assert "Both admission policies" in f.paging(big[:1])


def _chunk(rep, whole, chunked, gaps=1200):
    row = {"repeat": rep, "itl_samples": gaps, "ttft_p50_seconds": 0.01, "measured": 40}
    return [
        {
            **row,
            "policy": "whole prompts",
            "itl_p99_seconds": whole,
            "ttft_p50_ci": "[9 ms, 11 ms]",
        },
        {**row, "policy": "chunked", "itl_p99_seconds": chunked, "ttft_p50_seconds": 0.03},
    ]


def _e2e(rep, tput_ratio, e2e_ratio):
    row = {"repeat": rep, "itl_samples": 1200, "ttft_p50_seconds": 0.01, "itl_p99_seconds": 0.02}
    return [
        {**row, "policy": "whole prompts", "output_tokens_per_s": 100.0, "e2e_p50_seconds": 0.5},
        {
            **row,
            "policy": "chunked",
            "output_tokens_per_s": 100.0 * tput_ratio,
            "e2e_p50_seconds": 0.5 * e2e_ratio,
        },
    ]


def test_chunked_prefill_reports_throughput_and_end_to_end_either_way():
    slower = [p for r in range(4) for p in _e2e(r, 0.8, 1.3)]
    text = f.chunked_prefill(slower, chunk_tokens=64)
    assert "slower end to end in 4 of 4 repeats" in text and "1.3×, 1.3×, 1.3×, 1.3×" in text
    assert "throughput 0.8×, 0.8×" in text
    faster = [p for r in range(2) for p in _e2e(r, 1.2, 0.7)]
    assert "faster end to end in 2 of 2" in f.prefill_end_to_end(faster)
    assert "the same within 10 %" in f.prefill_end_to_end(_e2e(0, 1.0, 1.02))
    assert "rerun" in f.prefill_end_to_end(_e2e(0, 1.0, 1.3) + _e2e(1, 1.0, 0.7))
    assert "not recorded" in f.prefill_end_to_end(_chunk(0, 0.02, 0.02))


def test_chunked_prefill_says_whether_chunking_removed_the_long_gaps():
    cut = [p for r in range(3) for p in _chunk(r, 0.06, 0.02)]
    text = f.chunked_prefill(cut, chunk_tokens=64)
    assert "3.0×, 3.0×, 3.0×" in text and "1,200 gaps" in text and "at most 64 tokens" in text
    # each repeat's percentile with its interval, or the mark that none was recorded
    assert "from 10 ms [9 ms, 11 ms], 10 ms [9 ms, 11 ms], 10 ms [9 ms, 11 ms] to 30 ms" in text
    assert "30 ms (interval not recorded): a long prompt" in text
    assert "whole prompts 60 ms (interval not recorded)" in text
    same = [{**p, "ttft_p50_seconds": 0.01} for p in cut]
    assert "no higher here" in f.chunked_prefill(same, chunk_tokens=64)
    mixed = _chunk(0, 0.06, 0.02) + _chunk(1, 0.02, 0.02)
    assert "Lower in 1 of 2 repeats only" in f.chunked_prefill(mixed, chunk_tokens=64)
    none = _chunk(0, 0.02, 0.02) + _chunk(1, 0.02, 0.03)
    assert "did not lower" in f.chunked_prefill(none, chunk_tokens=64)
    assert "rerun" in f.chunked_prefill(_chunk(0, math.nan, 0.02), chunk_tokens=64)
