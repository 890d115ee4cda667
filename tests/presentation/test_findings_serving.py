"""Every branch of lesson 13's findings, from synthetic records."""

from __future__ import annotations

import math

from course.calculators import queueing
from course.presentation.findings import serving as f


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
    assert "not both measured" in f.batching(_pair(3, 5, 0)[:1])


def test_queue_model_branches():
    cap, slots, t0 = 10.0, 4, 0.01
    pred = queueing.ttft_quantile_seconds(
        5, service_seconds=slots / cap, servers=slots, prefill_seconds=t0, quantile=0.5
    )
    assert pred == queueing.mmc(5, 0.4, 4).wait_quantile_seconds(0.5) + t0
    pts = [_p(5, 1, p50=pred * 1.2), _p(9, 1, p50=100.0), _p(12, 1, p50=3.0)]
    text = f.queue_model(pts, capacity_per_s=cap, slots=slots, unloaded_ttft_seconds=t0)
    assert "within 2x of the measured median TTFT at 1 of 2" in text
    assert "off by more than 2x" in text and "unbounded" in text
    assert "nothing to compare" in f.queue_model(
        [], capacity_per_s=cap, slots=4, unloaded_ttft_seconds=t0
    )


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
