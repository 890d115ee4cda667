"""Inference calculators: prefill and decode floors below the H100 reference run
(inference_7b.json), memory- vs compute-bound decode, time to first token, serving GPUs and cost."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.calculators import cloud, inference
from course.facts.data import reference
from course.facts.models import PRESETS

LLAMA2_7B = PRESETS["llama-2-7b"]
REF = reference.load(reference.H100, "inference_7b")


def test_prefill_floor_is_below_the_reference_run_which_reached_55_to_61_percent():
    """H100 SXM reference run (inference_7b.json): prefill at 549-597 TFLOP/s."""
    for rec in REF["prefill"]:
        est = inference.prefill(LLAMA2_7B, rec["tokens"], "h100-sxm", batch=rec["batch"])
        assert est.bound == "compute"
        # the run counted 2N per token with the 131M-entry embedding table, which does no matmul
        assert est.work_flops == pytest.approx(rec["flops"], rel=0.025)
        assert 0.5 < est.seconds / rec["seconds"] < 0.65


@pytest.mark.parametrize("batch", [1, 4, 16, 64])
def test_decode_floor_is_below_the_reference_run_with_cuda_graphs(batch):
    """H100 SXM reference run: 6.38 ms per step at batch 1 (CUDA graphs), 17.7 ms at batch 64,
    1,024-token KV cache; the weights + KV floor is 4.2 and 14.3 ms."""
    rec = next(r for r in REF["decode"] if r["batch"] == batch and r["cuda_graph"])
    est = inference.decode(LLAMA2_7B, "h100-sxm", batch=batch, context_tokens=rec["context"])
    assert est.kv_cache_bytes == pytest.approx(rec["kv_bytes_read"], rel=2e-3)  # run: 1,025 tokens
    assert est.bound == "memory"
    assert 0.5 < est.step_seconds / rec["seconds_per_step"] < 0.9


def test_decode_at_batch_1_is_memory_bound_and_at_the_ridge_compute_bound():
    a100 = inference.decode(LLAMA2_7B, "a100-80gb-sxm", batch=1, context_tokens=1)
    assert a100.bound == "memory"
    big = inference.decode(LLAMA2_7B, "a100-80gb-sxm", batch=2048, context_tokens=1)
    assert big.bound == "compute"
    assert big.tokens_per_s > 100 * a100.tokens_per_s


def test_time_to_first_token_grows_with_the_prompt_and_shrinks_on_a_faster_gpu():
    short = inference.prefill(LLAMA2_7B, 256, "a100-80gb-sxm", efficiency=0.6)
    long = inference.prefill(LLAMA2_7B, 4096, "a100-80gb-sxm", efficiency=0.6)
    h100 = inference.prefill(LLAMA2_7B, 4096, "h100-sxm", efficiency=0.6)
    assert short.seconds < long.seconds and h100.seconds < long.seconds


@settings(max_examples=40, deadline=None)
@given(rate=st.floats(0.1, 500), more=st.floats(0, 500))
def test_more_requests_never_need_fewer_gpus(rate, more):
    a = inference.serving(LLAMA2_7B, "h100-sxm", requests_per_s=rate)
    b = inference.serving(LLAMA2_7B, "h100-sxm", requests_per_s=rate + more)
    assert b.gpus >= a.gpus >= 1


def test_serving_cost_per_million_tokens_is_price_over_throughput():
    s = inference.serving(
        PRESETS["llama-2-70b"], "a100-80gb-sxm", requests_per_s=20, usd_per_gpu_hour=2.0
    )
    assert s.gpus_per_replica == 2  # 140 GB of bf16 weights > 0.9 x 80 GiB
    assert s.gpus == s.replicas * s.gpus_per_replica
    assert s.usd_per_million_output_tokens == pytest.approx(
        cloud.usd_per_million_tokens(s.cost_per_hour_usd, s.output_tokens_per_s)
    )


def test_a_fleet_past_any_campus_power_names_the_request_rate():
    """A hundred million requests a second of Llama 2 7B on H100s draws over 10 GW (TDP 700 W
    per GPU, NVIDIA's datasheet): more than any datacenter campus, and the error names the rate."""
    s = inference.serving(PRESETS["llama-2-7b"], "h100-sxm", requests_per_s=1e8)
    assert s.gpus * 700 > 1e10
    with pytest.raises(ValueError, match="^requests per second: serving 1e\\+08 requests"):
        inference.serving_footprint(s, "h100-sxm")
    small = inference.serving(PRESETS["llama-2-70b"], "h100-sxm", requests_per_s=10)
    assert inference.serving_footprint(small, "h100-sxm").energy_joules > 0
