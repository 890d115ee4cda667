"""Fleet calculators: hand-derived cases and their consistency with the course's other
calculators."""

from __future__ import annotations

import math

import pytest

from course.calculators import cloud, fleet, inference, queueing
from course.facts.data import serving_published
from course.facts.models import preset

L7, L70 = preset("llama-2-7b"), preset("llama-2-70b")


def test_replicas_for_slo_is_the_fewest_that_meet_it():
    plan = fleet.replicas_for_slo(L7, "h100-sxm", peak_requests_per_s=50, ttft_slo_seconds=0.3)
    base = inference.serving(L7, "h100-sxm", requests_per_s=50)
    assert plan.replicas >= base.replicas == plan.replicas_for_throughput
    assert plan.ttft_quantile_seconds <= 0.3
    fewer = queueing.mmc(50, plan.slot_seconds, (plan.replicas - 1) * plan.batch)
    assert fewer.wait_quantile_seconds(0.99) + plan.prefill_seconds > 0.3
    # cost = GPUs x price / tokens per hour
    assert plan.usd_per_million_output_tokens == pytest.approx(
        plan.gpus * 2.0 / (50 * 256 * 3600) * 1e6
    )


def test_tighter_slo_needs_more_replicas():
    loose = fleet.replicas_for_slo(L7, "a100-80gb-sxm", peak_requests_per_s=20, ttft_slo_seconds=2)
    tight = fleet.replicas_for_slo(
        L7, "a100-80gb-sxm", peak_requests_per_s=20, ttft_slo_seconds=0.12
    )
    assert tight.replicas >= loose.replicas
    assert tight.utilisation <= loose.utilisation


def test_slo_below_prefill_is_refused():
    with pytest.raises(ValueError, match="ttft_slo_seconds must exceed the prefill"):
        fleet.replicas_for_slo(L70, "a100-80gb-sxm", peak_requests_per_s=1, ttft_slo_seconds=1e-4)


def test_70b_needs_two_80gb_gpus_per_replica():
    plan = fleet.replicas_for_slo(L70, "h100-sxm", peak_requests_per_s=5, ttft_slo_seconds=2)
    assert plan.gpus_per_replica == 2  # 140 GB of bf16 weights over 0.9 x 80 GB
    assert plan.gpus == 2 * plan.replicas


def test_tensor_parallel_trades_throughput_for_latency():
    opts = fleet.tensor_parallel_options(L7, "h100-sxm", gpus=8)
    assert [o.tp for o in opts] == [1, 2, 4, 8]
    one = inference.decode(L7, "h100-sxm", batch=16, context_tokens=640, efficiency=0.6)
    assert opts[0].step_seconds == pytest.approx(one.step_seconds)
    assert opts[0].output_tokens_per_s == pytest.approx(8 * 16 / one.step_seconds)
    for a, b in zip(opts, opts[1:], strict=False):
        assert b.step_seconds < a.step_seconds
        assert b.output_tokens_per_s < a.output_tokens_per_s
    perfect = fleet.tensor_parallel_options(L7, "h100-sxm", gpus=8, tp_efficiency=1.0)
    assert len({round(o.output_tokens_per_s) for o in perfect}) == 1
    assert [o.tp for o in fleet.tensor_parallel_options(L70, "h100-sxm", gpus=8)] == [2, 4, 8]


def test_cost_per_million_tokens_at_a_utilisation():
    # 8 GPUs at $2/h making 10,000 tokens/s at full load, busy half the time:
    # $16/h / (5,000 x 3,600 tokens/h) x 1e6 = $0.889
    usd = fleet.cost_per_million_tokens(2.0, 8, 10_000, 0.5)
    assert usd == pytest.approx(16 / (5000 * 3600) * 1e6)
    assert usd == pytest.approx(2 * fleet.cost_per_million_tokens(2.0, 8, 10_000, 1.0))
    assert usd == pytest.approx(cloud.usd_per_million_tokens(16, 5000))


def test_scale_up_delay():
    # 13.5 GB of Llama-2-7B weights at 2 GB/s plus a 60 s boot
    assert fleet.scale_up_delay_seconds(13.5e9, 2e9, boot_seconds=60) == pytest.approx(66.75)


def test_diurnal_rates_span_trough_to_peak():
    rates = fleet.diurnal_rates(100, trough_fraction=0.25, step_seconds=60)
    assert len(rates) == 1440
    assert max(rates) == pytest.approx(100, rel=1e-3)
    assert min(rates) == pytest.approx(25, rel=1e-3)
    assert sum(rates) / len(rates) == pytest.approx(62.5, rel=1e-3)  # mean of the cosine


def test_constant_load_fixed_equals_autoscaled():
    rates = [10.0] * 24
    kw = dict(step_seconds=3600, requests_per_s_per_replica=4, scale_up_delay_seconds=0)
    fixed = fleet.simulate_day(rates, policy="fixed", **kw)
    auto = fleet.simulate_day(rates, policy="autoscaled", target_utilisation=1.0, **kw)
    assert fixed.gpu_hours == auto.gpu_hours == 3 * 24
    assert fixed.slo_miss_seconds == auto.slo_miss_seconds == 0


def test_a_step_up_is_missed_for_the_scale_up_delay():
    # 1 req/s for 10 steps then 8 req/s; a replica takes 2 req/s; new ones need 2 steps
    rates = [1.0] * 10 + [8.0] * 10
    auto = fleet.simulate_day(
        rates,
        step_seconds=60,
        requests_per_s_per_replica=2,
        target_utilisation=1.0,
        scale_up_delay_seconds=120,
    )
    assert auto.slo_miss_seconds == 2 * 60
    assert auto.missed_request_fraction == pytest.approx(2 * 60 * 6 / (10 * 60 + 10 * 60 * 8))
    # billed: 1 replica x 10 steps, then 4 (3 of them starting) x 10 steps, in GPU-hours
    assert auto.gpu_hours == pytest.approx((10 + 40) * 60 / 3600)
    fixed = fleet.simulate_day(rates, step_seconds=60, requests_per_s_per_replica=2, policy="fixed")
    assert fixed.missed_request_fraction == 0 and fixed.gpu_hours == pytest.approx(20 * 4 / 60)


def test_autoscaling_saves_gpu_hours_on_a_diurnal_day():
    rates = fleet.diurnal_rates(50, trough_fraction=0.2)
    kw = dict(step_seconds=300, requests_per_s_per_replica=5)
    fixed, auto = (fleet.simulate_day(rates, policy=p, **kw) for p in fleet.POLICIES)
    assert auto.gpu_hours < fixed.gpu_hours
    assert fixed.gpu_hours == pytest.approx(10 * 24)


def test_speculative_decoding_limits_and_hand_case():
    assert fleet.speculative_decoding(0.0, 4, draft_cost_ratio=0.1).speedup == pytest.approx(
        1 / 1.4
    )
    assert fleet.speculative_decoding(1.0, 4).tokens_per_target_pass == 5
    s = fleet.speculative_decoding(0.8, 5, draft_cost_ratio=0.05)
    assert s.tokens_per_target_pass == pytest.approx((1 - 0.8**6) / 0.2)
    assert s.speedup == pytest.approx(3.68928 / 1.25, rel=1e-5)


def test_published_slos_are_sourced():
    for slo in serving_published.MLPERF_SLOS:
        assert slo.source.startswith("MLCommons") and "https://" in slo.source
        assert 0 < slo.tpot_seconds < slo.ttft_seconds
    for factor, source in serving_published.PUBLISHED_GAINS.values():
        assert factor > 1 and "https://" in source
    assert math.isclose(serving_published.MLPERF_SLOS[0].ttft_seconds, 2.0)
