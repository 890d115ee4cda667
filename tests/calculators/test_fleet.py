"""Fleet calculators: hand-derived cases and their consistency with the course's other
calculators."""

from __future__ import annotations

import dataclasses
import math
from types import MappingProxyType

import pytest

from course.calculators import cloud, fleet, inference, queueing
from course.facts import hardware, units
from course.facts.data import serving_published
from course.facts.models import preset
from course.facts.report import Table

L7, L70 = preset("llama-2-7b"), preset("llama-2-70b")


def test_replicas_for_slo_is_the_fewest_that_meet_it():
    plan = fleet.replicas_for_slo(
        L7, "h100-sxm", peak_requests_per_s=50, ttft_slo_seconds=0.3, tp=1, batch=16
    )
    assert plan.replicas >= plan.replicas_for_throughput
    assert plan.ttft_quantile_seconds <= 0.3
    fewer = queueing.mmc(50, plan.slot_seconds, (plan.replicas - 1) * plan.batch)
    assert fewer.wait_quantile_seconds(0.99) + plan.prefill_seconds > 0.3
    # cost = GPUs x price / tokens per hour
    assert plan.usd_per_million_output_tokens == pytest.approx(
        plan.gpus * 2.0 / (50 * 256 * 3600) * 1e6
    )


def test_tighter_slo_needs_more_replicas():
    kw = dict(peak_requests_per_s=20, tp=1, batch=16)
    loose = fleet.replicas_for_slo(L7, "a100-80gb-sxm", ttft_slo_seconds=2, **kw)
    tight = fleet.replicas_for_slo(L7, "a100-80gb-sxm", ttft_slo_seconds=0.12, **kw)
    assert tight.replicas >= loose.replicas
    assert tight.utilisation <= loose.utilisation


def test_slo_below_prefill_is_refused():
    with pytest.raises(ValueError, match="ttft_slo_seconds must exceed the prefill"):
        fleet.replicas_for_slo(L70, "a100-80gb-sxm", peak_requests_per_s=1, ttft_slo_seconds=1e-4)


def test_fixed_batch_takes_the_smallest_tp_that_holds_it():
    plan = fleet.replicas_for_slo(
        L70, "h100-sxm", peak_requests_per_s=5, ttft_slo_seconds=2, batch=16
    )
    assert plan.gpus_per_replica == plan.tp == 2  # 138 GB of bf16 weights over 0.9 x 80 GiB
    assert plan.gpus == 2 * plan.replicas and plan.batch_limit == "fixed"


# Llama-2-70B: 80 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 327,680 bytes per token.
KV_70B_PER_TOKEN = 80 * 8 * 128 * 2 * 2


@pytest.mark.parametrize("tp", [2, 4, 8])
def test_kv_room_by_hand(tp):
    # (tp x 0.9 x 80 GiB - 2 bytes x params) / (768 tokens x KV per token): 66, 680, 1,909
    room = tp * 0.9 * 80 * 2**30 - 2 * L70.params
    expected = math.floor(room / (768 * KV_70B_PER_TOKEN))
    assert expected == {2: 66, 4: 680, 8: 1909}[tp]
    got = fleet.kv_room_sequences(L70, "h100-sxm", tp=tp, context_tokens=768)
    assert got == expected
    assert fleet.kv_room_sequences(L70, "h100-sxm", tp=1, context_tokens=768) == 0


def test_tp_degrees_divide_heads_and_kv_heads():
    assert fleet.tp_degrees(L7) == (1, 2, 4, 8)  # 32 heads, 32 KV heads
    assert fleet.tp_degrees(L70, max_tp=16) == (1, 2, 4, 8)  # 8 KV heads stop TP16
    assert fleet.tp_degrees(preset("llama-2-13b")) == (1, 2, 4, 5, 8)  # 40 heads
    with pytest.raises(ValueError, match="tp must divide"):
        fleet.kv_room_sequences(L70, "h100-sxm", tp=3, context_tokens=768)
    with pytest.raises(ValueError, match="tp must divide"):
        fleet.kv_room_sequences(L70, "h100-sxm", tp=12, context_tokens=768)  # 12 % 8, 8 % 12


V5E = dataclasses.replace(
    hardware.gpu("h100-sxm"),
    key="tpu-v5e",
    name="TPU v5e (as the scaling book states it)",
    memory_bytes=16e9,
    memory_bandwidth_bytes_per_s=8.2e11,
    dense_flop_per_s=MappingProxyType({"bf16": 1.97e14}),
)


def test_frontier_reproduces_the_scaling_book_llama3_70b_on_v5e():
    """Austin et al. 2025, How to Scale Your Model, part 8 "Serving LLaMA 3-70B on TPUs"
    (https://jax-ml.github.io/scaling-book/applied-inference/): in bf16 on a 4x4 TPU v5e slice
    (16 chips of 16 GB, 8.2e11 B/s), 116 GB remain for KV caches, 43 caches of 8k tokens fit, a
    step that reads all HBM takes 16 GB / 8.2e11 B/s = 19 ms, and with 512-token answers that is
    0.27 queries/s per chip. The book assumes all of HBM usable and perfect sharding."""
    room = dict(tp=16, context_tokens=8192, usable_fraction=1.0, kv_sharding="full")
    book = dict(tp_efficiency=1.0, efficiency=1.0, **room)
    l3 = preset("llama-3-70b")
    assert fleet.kv_room_sequences(l3, V5E, **room) == pytest.approx(43, abs=1)
    # sharded by KV heads only, the 8 heads are kept twice over 16 chips: half the room
    copies = fleet.kv_room_sequences(l3, V5E, tp=16, context_tokens=8192, usable_fraction=1.0)
    assert copies == fleet.kv_room_sequences(l3, V5E, **room) // 2
    curve = fleet.batch_latency_frontier(l3, V5E, **book)
    full = curve[-1]
    assert full.batch == pytest.approx(43, abs=1)
    assert full.itl_seconds == pytest.approx(0.019, rel=0.05)
    assert full.output_tokens_per_s_per_gpu / 512 == pytest.approx(0.27, rel=0.05)
    # the Pareto frontier: latency and throughput per chip both rise with the batch
    assert [p.batch for p in curve] == [1, 2, 4, 8, 16, 32, full.batch]
    for a, b in zip(curve, curve[1:], strict=False):
        assert b.itl_seconds > a.itl_seconds
        assert b.output_tokens_per_s_per_gpu > a.output_tokens_per_s_per_gpu


def test_tensor_parallel_follows_kv_room_not_a_fixed_batch():
    """With the batch each TP degree's KV room allows (issue: at a fixed batch of 16 TP2 looked
    best), Llama-2-70B on TP4 makes several times TP2's tokens/s per GPU: TP2 has room for 66
    sequences of 768 tokens beside its weights, TP4 for 680."""
    opts = {o.tp: o for o in fleet.tensor_parallel_options(L70, "h100-sxm")}
    assert sorted(opts) == [2, 4, 8]
    assert all(o.batch == o.kv_room_batch and o.batch_limit == "KV room" for o in opts.values())
    assert opts[4].output_tokens_per_s_per_gpu > 2 * opts[2].output_tokens_per_s_per_gpu
    # the model's arithmetic, one option by hand: slot = B x prefill + 256 x step
    o = opts[4]
    speed = 4 * 0.9**2
    first = inference.prefill(L70, 512, "h100-sxm", efficiency=0.6).seconds / speed
    step = inference.decode(L70, "h100-sxm", batch=680, context_tokens=768, efficiency=0.6)
    assert o.itl_seconds == pytest.approx(step.step_seconds / speed)
    assert o.slot_seconds == pytest.approx(680 * first + 256 * o.itl_seconds)
    assert o.tpot_seconds == pytest.approx(o.itl_seconds + 679 * first / 256)


def test_tensor_parallel_options_print_as_a_table_of_the_options():
    """The options are a report.Table of TPOption rows (one per TP degree, the GPU in the title)
    whose cells are formatted by the unit in the column's name: seconds as ms, not raw floats."""
    opts = fleet.tensor_parallel_options(L70, "h100-sxm", tpot_slo_seconds=0.04)
    assert isinstance(opts, Table) and all(isinstance(o, fleet.TPOption) for o in opts)
    assert [o.tp for o in opts] == [2, 4, 8]
    assert opts.columns == [f.name for f in dataclasses.fields(fleet.TPOption) if f.name != "gpu"]
    assert "H100" in opts.title
    frame = opts.to_pandas()
    assert list(frame["tp"]) == [2, 4, 8]
    assert list(frame["itl_seconds"]) == [o.itl_seconds for o in opts]
    text = str(opts).splitlines()
    first = dict(zip(opts.columns, opts.text_rows()[0], strict=True))
    assert first["tpot_seconds"] == units.fmt_seconds(opts[0].tpot_seconds)
    assert first["tpot_seconds"].endswith(" ms") and first["batch_limit"] == "TPOT SLO"
    assert first["kv_room_batch"] == "66"
    assert len(text) == 2 + len(opts)  # title, header, one line per option


def test_a_tpot_slo_caps_the_batch_at_the_largest_that_meets_it():
    slo = 0.04
    opts = fleet.tensor_parallel_options(L70, "h100-sxm", tpot_slo_seconds=slo)
    for o in opts:
        assert o.tpot_seconds <= slo and o.batch_limit == "TPOT SLO"
        one_more = fleet.replica_option(L70, "h100-sxm", tp=o.tp, batch=o.batch + 1)
        assert one_more.tpot_seconds > slo
    with pytest.raises(ValueError, match="tpot_slo_seconds"):
        fleet.replica_option(L70, "h100-sxm", tp=8, tpot_slo_seconds=1e-4)
    with pytest.raises(ValueError, match="no tensor-parallel degree"):
        fleet.tensor_parallel_options(L70, "h100-sxm", tpot_slo_seconds=1e-4)


def test_fleet_on_the_frontier_needs_fewer_gpus_than_a_fixed_batch():
    kw = dict(peak_requests_per_s=50, ttft_slo_seconds=1.0)
    fixed = fleet.replicas_for_slo(L70, "h100-sxm", batch=16, **kw)
    best = fleet.replicas_for_slo(L70, "h100-sxm", tpot_slo_seconds=0.04, **kw)
    assert best.gpus < fixed.gpus / 2
    assert best.tpot_seconds <= 0.04 and best.ttft_quantile_seconds <= 1.0
    # it is the cheapest of the TP options, each sized the same way
    for t in fleet.tp_degrees(L70):
        try:
            other = fleet.replicas_for_slo(L70, "h100-sxm", tp=t, tpot_slo_seconds=0.04, **kw)
        except ValueError:
            continue
        assert other.gpus >= best.gpus


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


def test_the_day_starts_with_the_replicas_its_first_step_needs():
    # 10 req/s from midnight, 4 per replica at full load, target 100 %: 3 replicas from the start
    day = fleet.simulate_day(
        [10.0] * 4,
        step_seconds=300,
        requests_per_s_per_replica=4,
        target_utilisation=1.0,
        min_replicas=1,
        scale_up_delay_seconds=600,
    )
    assert day.ready_replicas == (3, 3, 3, 3) and day.slo_miss_seconds == 0
    # at a target of 80 % the autoscaler keeps ceil(10 / 3.2) = 4 where the fixed fleet has 3
    margin = fleet.simulate_day(
        [10.0] * 4, step_seconds=300, requests_per_s_per_replica=4, target_utilisation=0.8
    )
    fixed = fleet.simulate_day(
        [10.0] * 4, step_seconds=300, requests_per_s_per_replica=4, policy="fixed"
    )
    assert margin.peak_replicas == 4 > fixed.peak_replicas == 3


def test_a_measured_prefill_efficiency_slows_the_prefill_only():
    """Issue 44: efficiency (decode, prefill) applies each phase's own measured share of its floor:
    the prefill (TTFT floor, and each newcomer's pause) stretches by 0.714 / 0.544, the decode step
    does not, so the TPOT-limited batch shrinks and the fleet can only grow."""
    one = fleet.replica_option(L70, "a100-80gb-sxm", tp=8, batch=64, efficiency=0.714)
    two = fleet.replica_option(L70, "a100-80gb-sxm", tp=8, batch=64, efficiency=(0.714, 0.544))
    assert two.prefill_seconds == pytest.approx(one.prefill_seconds * 0.714 / 0.544)
    assert two.itl_seconds == pytest.approx(one.itl_seconds)
    kw = dict(peak_requests_per_s=50, ttft_slo_seconds=1.0, tpot_slo_seconds=0.04)
    same = fleet.replicas_for_slo(L70, "a100-80gb-sxm", efficiency=0.714, **kw)
    apart = fleet.replicas_for_slo(L70, "a100-80gb-sxm", efficiency=(0.714, 0.544), **kw)
    assert apart.gpus > same.gpus and apart.prefill_seconds > same.prefill_seconds
