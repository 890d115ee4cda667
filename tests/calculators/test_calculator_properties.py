"""Properties of the calculators: physics (monotonic where it must be) and robustness (any junk
input raises ValueError and nothing else). Plus: the calculator path never imports torch."""

from __future__ import annotations

import inspect
import math
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from course.calculators import (
    cloud,
    cluster,
    communication,
    compute,
    context,
    energy,
    facility,
    finetune,
    fleet,
    inference,
    memory,
    moe,
    offload,
    parallel,
    planner,
    queueing,
    reliability,
    serving,
    systems,
    techniques,
)
from course.claims import (
    ai_infrastructure,
    computation_requirements,
    gpu_infrastructure,
    silicon_to_tensors,
)
from course.facts import dtypes, models
from course.facts.models import PRESETS

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

params_st = st.floats(min_value=1e6, max_value=1e13)
gpus_st = st.integers(min_value=1, max_value=100_000)


# ---------------------------------------------------------------------------------------------
# Physics
# ---------------------------------------------------------------------------------------------


@FAST
@given(a=params_st, b=params_st, dtype=st.sampled_from(list(dtypes.BYTES_PER_VALUE)))
def test_more_params_never_need_less_memory(a, b, dtype):
    small, big = sorted((a, b))
    assert memory.weights_bytes(small, dtype) <= memory.weights_bytes(big, dtype)
    assert memory.model_state_bytes(small).total_bytes <= memory.model_state_bytes(big).total_bytes
    assert (
        memory.training_memory(small, precision="fp32").total_bytes
        <= memory.training_memory(big, precision="fp32").total_bytes
    )


@FAST
@given(params=params_st, n=gpus_st, stage=st.sampled_from([0, 1, 2]))
def test_higher_zero_stage_never_means_more_memory_per_gpu(params, n, stage):
    lower = parallel.zero_model_state_bytes_per_gpu(params, n, stage).total_bytes
    higher = parallel.zero_model_state_bytes_per_gpu(params, n, stage + 1).total_bytes
    assert higher <= lower * (1 + 1e-12)


@FAST
@given(params=params_st, n=gpus_st, extra=st.integers(1, 1000), stage=st.sampled_from([0, 1, 2, 3]))
def test_more_gpus_never_mean_more_memory_per_gpu_under_zero(params, n, extra, stage):
    few = parallel.zero_model_state_bytes_per_gpu(params, n, stage).total_bytes
    many = parallel.zero_model_state_bytes_per_gpu(params, n + extra, stage).total_bytes
    assert many <= few * (1 + 1e-12)


@FAST
@given(p=st.integers(1, 64), m=st.integers(1, 512), more=st.integers(1, 512), v=st.integers(1, 8))
def test_more_microbatches_shrink_the_bubble(p, m, more, v):
    a = parallel.pipeline_bubble_fraction(p, m, virtual_stages=v)
    b = parallel.pipeline_bubble_fraction(p, m + more, virtual_stages=v)
    assert 0 <= b <= a < 1
    if p > 1:
        assert b < a
    assert parallel.pipeline_bubble_fraction(p, m, virtual_stages=v + 1) <= a


@FAST
@given(
    params=params_st,
    tokens=st.floats(1e9, 1e14),
    n=gpus_st,
    extra=st.integers(1, 10_000),
    mfu=st.floats(0.01, 1.0),
)
def test_more_gpus_never_lengthen_training_at_fixed_mfu(params, tokens, n, extra, mfu):
    slow = compute.training_seconds(params, tokens, n, 989.4e12, mfu=mfu)
    fast = compute.training_seconds(params, tokens, n + extra, 989.4e12, mfu=mfu)
    assert fast <= slow
    assert slow == pytest.approx(6 * params * tokens / (n * 989.4e12 * mfu))


@FAST
@given(
    seq=st.integers(1, 32768),
    batch=st.integers(1, 64),
    key=st.sampled_from(list(PRESETS)),
    t_index=st.integers(0, 3),
)
def test_recomputation_and_parallelism_never_add_activation_memory(seq, batch, key, t_index):
    cfg = PRESETS[key]
    divisors = [d for d in (1, 2, 4, 8) if cfg.heads % d == 0]  # gpt2-xl has 25 heads
    t = divisors[t_index % len(divisors)]
    args = (seq, batch, cfg.hidden, cfg.heads)
    none = memory.activation_bytes_per_layer(*args, tensor_parallel=t)
    selective = memory.activation_bytes_per_layer(*args, tensor_parallel=t, recompute="selective")
    full = memory.activation_bytes_per_layer(*args, tensor_parallel=t, recompute="full")
    with_sp = memory.activation_bytes_per_layer(*args, tensor_parallel=t, sequence_parallel=True)
    assert full <= selective <= none and with_sp <= none
    assert memory.activation_bytes_per_layer(seq, batch + 1, cfg.hidden, cfg.heads) > (
        memory.activation_bytes_per_layer(seq, batch, cfg.hidden, cfg.heads)
    )


@FAST
@given(
    size=st.floats(0, 1e12), n=st.integers(1, 4096), bw=st.floats(1e6, 1e13), lat=st.floats(0, 1e-3)
)
def test_allreduce_costs_twice_allgather_and_less_than_twice_the_message_over_bandwidth(
    size, n, bw, lat
):
    ar = communication.ring_allreduce_seconds(size, n, bw, latency_seconds=lat)
    ag = communication.ring_allgather_seconds(size, n, bw, latency_seconds=lat)
    assert ar == pytest.approx(2 * ag)
    assert ar <= 2 * size / bw + 2 * (n - 1) * lat + 1e-12


@FAST
@given(
    compute_seconds=st.floats(1e-3, 10),
    grad=st.floats(0, 1e12),
    n=st.integers(1, 1024),
    overlap=st.floats(0, 1),
)
def test_data_parallel_efficiency_is_a_fraction_and_overlap_only_helps(
    compute_seconds, grad, n, overlap
):
    none = parallel.data_parallel_step_seconds(compute_seconds, grad, n, 100e9)
    some = parallel.data_parallel_step_seconds(compute_seconds, grad, n, 100e9, overlap=overlap)
    assert 0 < none.scaling_efficiency <= some.scaling_efficiency <= 1
    assert some.step_seconds >= compute_seconds


@FAST
@given(
    flops=st.floats(0, 1e20),
    moved=st.floats(1, 1e15),
    peak=st.floats(1e9, 1e16),
    bw=st.floats(1e9, 1e13),
)
def test_roofline_time_is_at_least_both_bounds_and_bound_matches_the_ridge(flops, moved, peak, bw):
    r = compute.roofline_seconds(flops, moved, peak, bw)
    assert r.seconds >= flops / peak and r.seconds >= moved / bw
    assert r.attainable_flop_per_s <= peak * (1 + 1e-12)
    expected = "compute" if flops / moved >= peak / bw else "memory"
    if not math.isclose(flops / moved, peak / bw, rel_tol=1e-9):
        assert r.bound == expected


@FAST
@given(key=st.sampled_from(list(PRESETS)), s=st.integers(1, 8192), more=st.integers(1, 8192))
def test_longer_context_costs_more_flops_and_more_kv_cache(key, s, more):
    """Per sequence, always more. Per token, more for decoders; BERT's pooler (once per sequence)
    is spread over more tokens, so there per-token cost can fall (hypothesis found this)."""
    cfg = PRESETS[key]
    assert compute.forward_flops(cfg, s + more) > compute.forward_flops(cfg, s)
    if not cfg.pooler:
        per_token = compute.forward_flops_per_token
        assert per_token(cfg, s + more) > per_token(cfg, s)
    kv = memory.kv_cache_bytes
    assert kv(cfg.layers, cfg.kv_heads, cfg.head_dim, s + more) > kv(
        cfg.layers, cfg.kv_heads, cfg.head_dim, s
    )


@FAST
@given(
    purchase=st.floats(1, 1e7),
    rent=st.floats(0.01, 1e3),
    u=st.floats(0.01, 1),
    du=st.floats(0.01, 1),
)
def test_higher_utilisation_never_delays_breakeven(purchase, rent, u, du):
    low, high = sorted((u, du))
    assert cloud.breakeven_months(purchase, rent, utilisation=high) <= cloud.breakeven_months(
        purchase, rent, utilisation=low
    )


@FAST
@given(watts=st.floats(0, 1e7), price=st.floats(0, 10), pue=st.floats(1, 3), n=st.integers(1, 999))
def test_energy_cost_is_linear_in_systems_and_pue(watts, price, pue, n):
    one = energy.annual_electricity_usd(watts, price)
    assert energy.annual_electricity_usd(watts, price, systems=n, pue=pue) == pytest.approx(
        one * n * pue
    )


# ---------------------------------------------------------------------------------------------
# Robustness: junk in, ValueError out (never TypeError, ZeroDivisionError, OverflowError, ...)
# ---------------------------------------------------------------------------------------------

CFG = PRESETS["llama-2-7b"]
MOE = models.MOE_PRESETS["mixtral-8x7b"]
SMALL = PRESETS["gpt2"]
MIX = serving.request_mix(12, max_seq_len=512, arrivals_per_second=1.0, seed=2)

# One valid call per public function, by keyword. Every parameter gets junk in turn.
VALID: dict[str, tuple] = {
    "models.param_count": (models.param_count, {"config": CFG}),
    "models.param_breakdown": (models.param_breakdown, {"config": CFG}),
    "models.non_embedding_param_count": (models.non_embedding_param_count, {"config": CFG}),
    "models.matmul_params_per_layer": (models.matmul_params_per_layer, {"config": CFG}),
    "models.preset": (models.preset, {"key": "gpt2"}),
    "models.TransformerConfig": (
        models.TransformerConfig,
        {
            "name": "x",
            "layers": 2,
            "hidden": 64,
            "heads": 4,
            "kv_heads": 2,
            "ffn_hidden": 128,
            "vocab": 100,
            "max_positions": 32,
            "gated_mlp": True,
            "tied_embeddings": False,
            "norm": "rmsnorm",
            "bias": False,
            "positions": "rope",
            "norm_placement": "pre",
            "token_types": 0,
            "causal": True,
            "lm_head": True,
            "pooler": False,
            "activation": "silu",
            "norm_eps": 1e-5,
            "experts": 4,
            "experts_per_token": 2,
            "shared_experts": 1,
            "expert_ffn_hidden": 32,
            "dense_layers": 1,
            "source": "test",
        },
    ),
    "models.active_param_count": (models.active_param_count, {"config": MOE}),
    "models.active_matmul_params": (models.active_matmul_params, {"config": MOE}),
    "reliability.job_mtbf_seconds": (
        reliability.job_mtbf_seconds,
        {"components": 16_384, "component_mtbf_seconds": 1.8e8},
    ),
    "reliability.component_mtbf_seconds": (
        reliability.component_mtbf_seconds,
        {"interruptions": 419, "window_seconds": 4.67e6, "components": 16_384},
    ),
    "reliability.expected_interruptions": (
        reliability.expected_interruptions,
        {"run_seconds": 4.67e6, "mtbf_seconds": 11_000},
    ),
    "reliability.probability_no_failure": (
        reliability.probability_no_failure,
        {"run_seconds": 3600, "mtbf_seconds": 11_000},
    ),
    "reliability.young_interval_seconds": (
        reliability.young_interval_seconds,
        {"checkpoint_seconds": 30, "mtbf_seconds": 11_000},
    ),
    "reliability.daly_interval_seconds": (
        reliability.daly_interval_seconds,
        {"checkpoint_seconds": 30, "mtbf_seconds": 11_000},
    ),
    "reliability.expected_wall_clock_seconds": (
        reliability.expected_wall_clock_seconds,
        {
            "solve_seconds": 3.6e5,
            "interval_seconds": 900,
            "checkpoint_seconds": 30,
            "mtbf_seconds": 11_000,
            "restart_seconds": 300,
        },
    ),
    "reliability.goodput_fraction": (
        reliability.goodput_fraction,
        {
            "interval_seconds": 900,
            "checkpoint_seconds": 30,
            "mtbf_seconds": 11_000,
            "restart_seconds": 300,
        },
    ),
    "reliability.failure_plan": (
        reliability.failure_plan,
        {
            "work_seconds": 2.6e6,
            "components": 16_384,
            "component_mtbf_seconds": 1.8e8,
            "checkpoint_seconds": 30,
            "restart_seconds": 300,
            "interval_seconds": 900,
            "deadline_seconds": 3e6,
        },
    ),
    "reliability.checkpoint_bytes": (
        reliability.checkpoint_bytes,
        {
            "params": 7e9,
            "ranks": 8,
            "precision": "mixed",
            "optimizer": "adam",
            "rng_bytes_per_rank": 5056,
            "dataloader_bytes_per_rank": 8,
            "bandwidth_bytes_per_s": 1e9,
        },
    ),
    "reliability.write_seconds": (
        reliability.write_seconds,
        {"total_bytes": 1e11, "bandwidth_bytes_per_s": 1e9},
    ),
    "moe.moe_account": (moe.moe_account, {"config": MOE, "seq_len": 128, "dtype": "bf16"}),
    "moe.all_to_all_bytes": (
        moe.all_to_all_bytes,
        {
            "tokens_per_rank": 4096,
            "hidden": 4096,
            "experts_per_token": 2,
            "ranks": 8,
            "moe_layers": 32,
            "bytes_per_value": 2,
            "training": True,
        },
    ),
    "context.causal_balance": (
        context.causal_balance,
        {"seq_len": 8192, "ranks": 8, "zigzag": True},
    ),
    "context.ring_overlap": (
        context.ring_overlap,
        {
            "seq_len": 131072,
            "ranks": 16,
            "heads": 32,
            "head_dim": 128,
            "flop_per_s": 989e12,
            "link_bytes_per_s": 450e9,
            "kv_heads": 8,
            "batch": 1,
            "bytes_per_value": 2,
        },
    ),
    "moe.all_to_all_seconds": (
        moe.all_to_all_seconds,
        {"bytes_off_rank": 1e9, "link_bytes_per_s": 450e9},
    ),
    "context.ring_attention_bytes": (
        context.ring_attention_bytes,
        {
            "seq_len": 8192,
            "ranks": 8,
            "heads": 32,
            "head_dim": 128,
            "kv_heads": 8,
            "batch": 1,
            "bytes_per_value": 2,
            "materialize_scores": True,
        },
    ),
    "memory.weights_bytes": (memory.weights_bytes, {"params": 7e9, "dtype": "bf16"}),
    "memory.model_state_bytes": (
        memory.model_state_bytes,
        {"params": 7e9, "precision": "mixed", "optimizer": "adam"},
    ),
    "memory.activation_bytes_per_layer": (
        memory.activation_bytes_per_layer,
        {
            "seq_len": 2048,
            "batch": 1,
            "hidden": 4096,
            "heads": 32,
            "tensor_parallel": 2,
            "sequence_parallel": False,
            "recompute": "none",
        },
    ),
    "memory.kv_cache_bytes": (
        memory.kv_cache_bytes,
        {
            "layers": 32,
            "kv_heads": 8,
            "head_dim": 128,
            "tokens": 4096,
            "batch": 2,
            "bytes_per_value": 2,
        },
    ),
    "memory.inference_memory": (
        memory.inference_memory,
        {
            "model": CFG,
            "dtype": "bf16",
            "seq_len": 512,
            "batch": 2,
            "kv_dtype": "fp8",
            "overhead_fraction": 0.1,
        },
    ),
    "memory.training_memory": (
        memory.training_memory,
        {
            "model": CFG,
            "batch": 1,
            "seq_len": 512,
            "precision": "mixed",
            "optimizer": "adam",
            "recompute": "none",
        },
    ),
    "memory.step_activation_bytes": (
        memory.step_activation_bytes,
        {
            "config": CFG,
            "batch": 1,
            "seq_len": 512,
            "precision": "bf16_autocast",
            "checkpointing": False,
        },
    ),
    "memory.training_step_memory": (
        memory.training_step_memory,
        {"config": CFG, "batch": 1, "seq_len": 512, "precision": "fp32", "checkpointing": True},
    ),
    "memory.gpus_needed": (
        memory.gpus_needed,
        {"total_bytes": 1e11, "gpu": "h100-sxm", "usable_fraction": 0.9},
    ),
    "memory.params_of": (memory.params_of, {"name": "params", "value": 7e9}),
    "computation_requirements.inference_gpus_as_written": (
        computation_requirements.inference_gpus_as_written,
        {"params": 7e9, "bytes_per_param": 2, "gpu_memory_bytes": 8e10},
    ),
    "computation_requirements.training_gpus_as_written": (
        computation_requirements.training_gpus_as_written,
        {"params": 7e9, "bytes_per_param": 2, "gpu_memory_bytes": 8e10},
    ),
    "ai_infrastructure.model_bytes_as_written": (
        ai_infrastructure.model_bytes_as_written,
        {"params": 7e9},
    ),
    "ai_infrastructure.training_bytes_as_written": (
        ai_infrastructure.training_bytes_as_written,
        {"params": 7e9},
    ),
    "ai_infrastructure.purchase_usd_as_written": (
        ai_infrastructure.purchase_usd_as_written,
        {"gpu": "h100-sxm", "gpus": 8},
    ),
    "models.checked_config": (models.checked_config, {"config": CFG}),
    "gpu_infrastructure.memory_requirements_as_written": (
        gpu_infrastructure.memory_requirements_as_written,
        {
            "num_parameters": 7_000_000_000,
            "precision_bytes": 2,
            "batch_size": 4,
            "sequence_length": 2048,
            "training": True,
        },
    ),
    "compute.attention_flops_per_token": (
        compute.attention_flops_per_token,
        {"config": CFG, "seq_len": 2048, "causal": False},
    ),
    "compute.forward_flops_per_token": (
        compute.forward_flops_per_token,
        {"config": SMALL, "seq_len": 1024, "causal": True},
    ),
    "compute.forward_flops": (
        compute.forward_flops,
        {"config": CFG, "seq_len": 128, "batch": 2, "causal": False},
    ),
    "compute.training_flops": (compute.training_flops, {"params": 7e9, "tokens": 1e12}),
    "compute.training_flops_with_attention": (
        compute.training_flops_with_attention,
        {"config": CFG, "tokens": 1e12, "seq_len": 4096, "recompute": False},
    ),
    "compute.inference_flops": (compute.inference_flops, {"params": 7e9, "tokens": 1000}),
    "compute.arithmetic_intensity": (
        compute.arithmetic_intensity,
        {"flops": 1e12, "bytes_moved": 1e9},
    ),
    "compute.critical_intensity": (
        compute.critical_intensity,
        {"peak_flop_per_s": 1e15, "bandwidth_bytes_per_s": 3e12},
    ),
    "compute.attainable_flop_per_s": (
        compute.attainable_flop_per_s,
        {"intensity": 10, "peak_flop_per_s": 1e15, "bandwidth_bytes_per_s": 3e12},
    ),
    "compute.roofline_seconds": (
        compute.roofline_seconds,
        {"flops": 1e12, "bytes_moved": 1e9, "peak_flop_per_s": 1e15, "bandwidth_bytes_per_s": 3e12},
    ),
    "compute.matmul_flops": (compute.matmul_flops, {"m": 64, "n": 64, "k": 64}),
    "compute.matmul_bytes": (
        compute.matmul_bytes,
        {"m": 64, "n": 64, "k": 64, "bytes_per_element": 2},
    ),
    "compute.weights_read_seconds": (
        compute.weights_read_seconds,
        {"params": 13e9, "dtype": "fp16", "bandwidth_bytes_per_s": 9e11},
    ),
    "compute.core_paths": (
        compute.core_paths,
        {"gpu": "h100-sxm", "precision": "fp8", "m": 4096, "n": 1, "k": 4096},
    ),
    "compute.precisions_on": (compute.precisions_on, {"gpu": "a100-80gb-sxm"}),
    "compute.decode_step": (
        compute.decode_step,
        {"params": 7e9, "dtype": "bf16", "gpu": "h100-sxm", "batch": 8, "compute_dtype": "fp8"},
    ),
    "compute.training_seconds": (
        compute.training_seconds,
        {
            "params": 7e9,
            "tokens": 1e12,
            "n_gpus": 64,
            "peak_flops_per_gpu": 1e15,
            "mfu": 0.4,
            "recompute": True,
        },
    ),
    "compute.mfu": (
        compute.mfu,
        {
            "params": 7e9,
            "tokens_per_second": 1e5,
            "n_gpus": 8,
            "peak_flops_per_gpu": 1e15,
            "flops_per_token": 5e10,
        },
    ),
    "compute.chinchilla_optimal": (
        compute.chinchilla_optimal,
        {"flops": 5.88e23, "tokens_per_param": 20},
    ),
    "compute.attention_share": (
        compute.attention_share,
        {"config": SMALL, "seq_len": 1024, "causal": True},
    ),
    "compute.hfu": (
        compute.hfu,
        {
            "params": 7e9,
            "tokens_per_second": 1e5,
            "n_gpus": 8,
            "peak_flops_per_gpu": 1e15,
            "recomputed_forward_fraction": 0.5,
        },
    ),
    "inference.prefill": (
        inference.prefill,
        {
            "config": SMALL,
            "prompt_tokens": 512,
            "gpu": "h100-sxm",
            "batch": 2,
            "dtype": "bf16",
            "efficiency": 0.6,
        },
    ),
    "inference.decode": (
        inference.decode,
        {
            "config": SMALL,
            "gpu": "h100-sxm",
            "batch": 4,
            "context_tokens": 1024,
            "dtype": "bf16",
            "efficiency": 0.6,
        },
    ),
    "inference.serving": (
        inference.serving,
        {
            "config": SMALL,
            "gpu": "h100-sxm",
            "requests_per_s": 5.0,
            "prompt_tokens": 512,
            "output_tokens": 128,
            "batch": 8,
            "dtype": "bf16",
            "efficiency": 0.6,
            "usd_per_gpu_hour": 2.5,
        },
    ),
    "inference.request_tokens": (
        inference.request_tokens,
        {"config": SMALL, "prompt_tokens": 512, "output_tokens": 128},
    ),
    "inference.serving_footprint": (
        inference.serving_footprint,
        {
            "s": inference.serving(SMALL, "h100-sxm", requests_per_s=5.0),
            "gpu": "h100-sxm",
            "usd_per_kwh": 0.1,
            "pue": 1.2,
            "grid_g_per_kwh": 400,
        },
    ),
    "energy.energy_joules": (
        energy.energy_joules,
        {"power_watts": 700, "seconds": 3600, "pue": 1.2},
    ),
    "energy.gpu_hours_energy_joules": (
        energy.gpu_hours_energy_joules,
        {"gpu_hours": 1000, "watts_per_gpu": 400, "pue": 1.1},
    ),
    "energy.electricity_usd": (energy.electricity_usd, {"energy": 3.6e9, "usd_per_kwh": 0.1}),
    "energy.co2_kg": (energy.co2_kg, {"energy": 3.6e9, "grid_g_per_kwh": 400}),
    "energy.run_footprint": (
        energy.run_footprint,
        {
            "params": 7e9,
            "tokens": 1e12,
            "gpu": "h100-sxm",
            "n_gpus": 64,
            "mfu": 0.4,
            "dtype": "bf16",
            "recompute": False,
            "usd_per_gpu_hour": 2.0,
            "usd_per_kwh": 0.1,
            "pue": 1.2,
            "grid_g_per_kwh": 400,
            "watts_per_gpu": 700,
        },
    ),
    "energy.sustained_power": (
        energy.sustained_power,
        {"samples": [[0.0, 100.0, 1980], [2.5, 700.0, 1350]], "skip_seconds": 1.0},
    ),
    "gpu_infrastructure.course_estimate": (
        gpu_infrastructure.course_estimate,
        {"workload": "generate", "gpu": "a100-80gb-sxm", "efficiency": 0.6},
    ),
    "parallel.zero_model_state_bytes_per_gpu": (
        parallel.zero_model_state_bytes_per_gpu,
        {"params": 7.5e9, "n_gpus": 64, "stage": 2, "precision": "mixed", "optimizer": "adam"},
    ),
    "parallel.parallel_training_memory_per_gpu": (
        parallel.parallel_training_memory_per_gpu,
        {
            "config": CFG,
            "seq_len": 2048,
            "micro_batch": 1,
            "tensor_parallel": 2,
            "pipeline_parallel": 4,
            "data_parallel": 8,
            "zero_stage": 1,
            "sequence_parallel": True,
            "recompute": "selective",
            "precision": "mixed",
            "optimizer": "adam",
        },
    ),
    "parallel.pipeline_bubble_fraction": (
        parallel.pipeline_bubble_fraction,
        {"stages": 4, "microbatches": 8, "virtual_stages": 2},
    ),
    "parallel.pipeline_bubble_overhead": (
        parallel.pipeline_bubble_overhead,
        {"stages": 4, "microbatches": 8, "virtual_stages": 2},
    ),
    "communication.ring_allreduce_seconds": (
        communication.ring_allreduce_seconds,
        {"message_bytes": 1e9, "n": 8, "bandwidth_bytes_per_s": 4.5e11, "latency_seconds": 1e-5},
    ),
    "communication.ring_allgather_seconds": (
        communication.ring_allgather_seconds,
        {"message_bytes": 1e9, "n": 8, "bandwidth_bytes_per_s": 4.5e11, "latency_seconds": 1e-5},
    ),
    "communication.ring_reduce_scatter_seconds": (
        communication.ring_reduce_scatter_seconds,
        {"message_bytes": 1e9, "n": 8, "bandwidth_bytes_per_s": 4.5e11, "latency_seconds": 1e-5},
    ),
    "communication.algorithm_bandwidth_bytes_per_s": (
        communication.algorithm_bandwidth_bytes_per_s,
        {"message_bytes": 1e9, "seconds": 0.01},
    ),
    "communication.bus_bandwidth_bytes_per_s": (
        communication.bus_bandwidth_bytes_per_s,
        {"algorithm_bytes_per_s": 1e11, "n": 8, "collective": "all_gather"},
    ),
    "parallel.data_parallel_step_seconds": (
        parallel.data_parallel_step_seconds,
        {
            "compute_seconds": 0.5,
            "gradient_bytes": 14e9,
            "n_gpus": 8,
            "bandwidth_bytes_per_s": 4.5e11,
            "latency_seconds": 1e-5,
            "overlap": 0.5,
        },
    ),
    "communication.ring_collective_seconds": (
        communication.ring_collective_seconds,
        {
            "collective": "reduce_scatter",
            "message_bytes": 1e9,
            "n": 8,
            "bandwidth_bytes_per_s": 4.5e11,
            "latency_seconds": 1e-5,
        },
    ),
    "communication.fit_alpha_beta": (
        communication.fit_alpha_beta,
        {
            "message_bytes": [1e3, 1e6, 1e7],
            "seconds": [1e-4, 2e-3, 1.5e-2],
            "collective": "all_gather",
            "n": 4,
        },
    ),
    "communication.gradient_allreduce_on_links": (
        communication.gradient_allreduce_on_links,
        {
            "params": 7e9,
            "n_gpus": 8,
            "bytes_per_gradient": 2,
            "links": ("nvlink4", "ib-ndr"),
            "efficiency": 0.8,
        },
    ),
    "communication.gpu_links": (communication.gpu_links, {"gpu": "h100-sxm"}),
    "communication.link_or_default": (
        communication.link_or_default,
        {"name": "inter_node_link", "key": "ib-ndr", "default": None},
    ),
    "planner.layout_memory_bytes": (
        planner.layout_memory_bytes,
        {
            "config": CFG,
            "tensor_parallel": 2,
            "pipeline_parallel": 2,
            "data_parallel": 4,
            "settings": planner.LayoutSettings(),
        },
    ),
    "planner.smallest_layout": (
        planner.smallest_layout,
        {
            "config": CFG,
            "usable_memory_bytes": 72e9,
            "max_tensor_parallel": 8,
            "settings": planner.LayoutSettings(),
        },
    ),
    "parallel.layout_step": (
        parallel.layout_step,
        {
            "config": CFG,
            "gpu": "h100-sxm",
            "gpus_per_node": 8,
            "nodes": 2,
            "data_parallel": 4,
            "tensor_parallel": 2,
            "pipeline_parallel": 2,
            "zero_stage": 1,
            "micro_batch": 1,
            "microbatches": 8,
            "seq_len": 2048,
            "recompute": "selective",
            "compute_hfu": 0.4,
            "intra_node_link": "nvlink4",
            "inter_node_link": "ib-ndr",
        },
    ),
    "communication.tensor_parallel_layer_comm": (
        communication.tensor_parallel_layer_comm,
        {
            "config": CFG,
            "seq_len": 4096,
            "micro_batch": 1,
            "tensor_parallel": 8,
            "bandwidth_bytes_per_s": 4.5e11,
            "bytes_per_value": 2,
        },
    ),
    "gpu_infrastructure.multi_gpu_efficiency_as_written": (
        gpu_infrastructure.multi_gpu_efficiency_as_written,
        {
            "num_gpus": 8,
            "strategy": "pipeline",
            "model_size_gb": 140,
            "batch_size": 32,
            "communication_overhead": 0.1,
        },
    ),
    "energy.annual_electricity_usd": (
        energy.annual_electricity_usd,
        {"power_watts": 10_200, "usd_per_kwh": 0.1, "systems": 4, "utilisation": 0.8, "pue": 1.3},
    ),
    "energy.electricity_usd_per_hour": (
        energy.electricity_usd_per_hour,
        {"power_watts": 700, "usd_per_kwh": 0.1, "pue": 1.2},
    ),
    "facility.pod_annual_energy": (
        facility.pod_annual_energy,
        {
            "system": "dgx-h100",
            "usd_per_kwh": 0.1,
            "gpus": 32,
            "utilisation": 1.0,
            "pue": 1.0,
            "power_watts": 6500,
        },
    ),
    "facility.rack_check": (
        facility.rack_check,
        {
            "system": "dgx-h100",
            "systems": 4,
            "power_limit_watts": 40_000,
            "other_watts": 3000,
            "rack_units": 42,
            "other_rack_units": 4,
        },
    ),
    "cluster.cluster_for_model": (
        cluster.cluster_for_model,
        {
            "config": SMALL,
            "system": "dgx-a100-640gb",
            "seq_len": 1024,
            "micro_batch": 1,
            "tokens": 1e10,
            "days": 1.0,
            "dtype": "bf16",
            "mfu": 0.4,
            "recompute": "selective",
            "sequence_parallel": True,
            "zero_stage": 1,
            "precision": "mixed",
            "optimizer": "adam",
            "usable_fraction": 0.9,
            "usd_per_kwh": 0.1,
            "pue": 1.2,
        },
    ),
    "systems.dgx_from_parts": (systems.dgx_from_parts, {"system": "dgx-h100"}),
    "systems.superpod": (
        systems.superpod,
        {"sus": 4, "architecture": "dgx-superpod-h100", "watts_per_switch": 1000},
    ),
    "systems.mig_layout": (
        systems.mig_layout,
        {"gpu": "h100-sxm", "profiles": ["3g.40gb", "2g.20gb"]},
    ),
    "systems.mig_serving_fit": (
        systems.mig_serving_fit,
        {
            "model": CFG,
            "gpu": "h100-sxm",
            "dtype": "bf16",
            "seq_len": 1024,
            "batch": 2,
            "overhead_fraction": 0.1,
        },
    ),
    "facility.power_levels": (
        facility.power_levels,
        {
            "system": "dgx-h100",
            "systems": 32,
            "systems_per_rack": 4,
            "other_watts_per_rack": 3000,
            "pue": 1.5,
        },
    ),
    "systems.gpu_job": (
        systems.gpu_job,
        {
            "model": CFG,
            "tokens": 1e10,
            "gpus": 8,
            "workload": "training",
            "dtype": "bf16",
            "gpu_a": "v100-sxm2-32gb",
            "gpu_b": "h100-sxm",
            "usd_per_gpu_hour_a": 2.0,
            "usd_per_gpu_hour_b": 4.0,
            "batch": 4,
            "seq_len": 1024,
            "mfu": 0.4,
            "pue": 1.2,
        },
    ),
    "systems.choose_gpu": (
        systems.choose_gpu,
        {
            "model": CFG,
            "workload": "serving",
            "dtype": "fp8",
            "gpu_a": "a100-80gb-sxm",
            "gpu_b": "h100-sxm",
            "usd_per_gpu_hour_a": 2.0,
            "usd_per_gpu_hour_b": 4.0,
            "batch": 4,
            "seq_len": 1024,
            "mfu": 0.4,
            "budget_usd": 1000,
        },
    ),
    "offload.offload_decode_step": (
        offload.offload_decode_step,
        {
            "model": PRESETS["llama-2-70b"],
            "gpu": "gh200-96gb",
            "dtype": "bf16",
            "seq_len": 4096,
            "batch": 2,
            "usable_fraction": 0.9,
        },
    ),
    "cluster.dgx_design": (
        cluster.dgx_design,
        {
            "config": SMALL,
            "tokens": 1e10,
            "days": 1.0,
            "system": "dgx-h100",
            "dtype": "bf16",
            "mfu": 0.4,
            "recompute": "selective",
            "seq_len": 1024,
            "pipeline_parallel": None,
            "systems_per_rack": 4,
            "usd_per_kwh": 0.1,
            "pue": 1.3,
            "usd_per_system": 4e5,
        },
    ),
    "cloud.breakeven_hours": (
        cloud.breakeven_hours,
        {
            "purchase_usd": 475_000,
            "rent_usd_per_hour": 98.32,
            "power_watts": 10_200,
            "usd_per_kwh": 0.1,
            "pue": 1.4,
            "other_usd_per_hour": 1.0,
        },
    ),
    "cloud.breakeven_months": (
        cloud.breakeven_months,
        {
            "purchase_usd": 475_000,
            "rent_usd_per_hour": 98.32,
            "utilisation": 0.5,
            "power_watts": 10_200,
            "usd_per_kwh": 0.1,
            "pue": 1.4,
            "other_usd_per_month": 500,
        },
    ),
    "cloud.instance": (cloud.instance, {"key": "aws-p5.48xlarge"}),
    "cloud.instance_gpu": (cloud.instance_gpu, {"key": "aws-p5.48xlarge"}),
    "cloud.rent_to_match": (cloud.rent_to_match, {"key": "runpod-h100-sxm", "gpus": 8}),
    "cloud.instances_table": (cloud.instances_table, {"provider": "AWS"}),
    "cloud.price_history": (cloud.price_history, {"key": "aws-p5.48xlarge", "kind": "on-demand"}),
    "cloud.price_change_fraction": (cloud.price_change_fraction, {"key": "aws-p5.48xlarge"}),
    "cloud.own_vs_rent": (
        cloud.own_vs_rent,
        {
            "purchase_usd": 400_000,
            "on_demand_usd_per_hour": 55.04,
            "reserved_usd_per_hour": 39.33,
            "spot_usd_per_hour": 27.0,
            "spot_overhead_fraction": 0.2,
            "lifetime_years": 3,
            "utilisation": 0.6,
            "power_watts": 10_200,
            "usd_per_kwh": 0.1,
            "pue": 1.4,
            "hosting_usd_per_year": 20_000,
            "staff_usd_per_year": 30_000,
        },
    ),
    "silicon_to_tensors.breakeven_table_as_written": (
        silicon_to_tensors.breakeven_table_as_written,
        {"utilisation": 0.5, "usd_per_kwh": 0.15, "pue": 1.5, "hosting_usd_per_gpu_year": 1000},
    ),
    "cloud.training_run_cost_on": (
        cloud.training_run_cost_on,
        {
            "key": "aws-p5.48xlarge",
            "params": 7e9,
            "tokens": 1e12,
            "instances": 4,
            "mfu": 0.4,
            "dtype": "bf16",
            "usd_per_hour": 50.0,
        },
    ),
    "cloud.usd_per_million_tokens": (
        cloud.usd_per_million_tokens,
        {"usd_per_hour": 55.04, "tokens_per_s": 3000},
    ),
    "cloud.serving_cost": (
        cloud.serving_cost,
        {
            "key": "aws-p5.48xlarge",
            "params": 7e9,
            "dtype": "bf16",
            "batch": 8,
            "efficiency": 0.5,
            "usd_per_hour": 50.0,
        },
    ),
    "cloud.young_interval_seconds": (
        cloud.young_interval_seconds,
        {"checkpoint_seconds": 300, "mtbf_seconds": 86_400},
    ),
    "cloud.daly_interval_seconds": (
        cloud.daly_interval_seconds,
        {"checkpoint_seconds": 300, "mtbf_seconds": 86_400},
    ),
    "cloud.expected_wall_clock_seconds": (
        cloud.expected_wall_clock_seconds,
        {
            "solve_seconds": 3.6e5,
            "interval_seconds": 3600,
            "checkpoint_seconds": 300,
            "mtbf_seconds": 21_600,
            "restart_seconds": 120,
        },
    ),
    "cloud.spot_training": (
        cloud.spot_training,
        {
            "solve_seconds": 3.6e5,
            "spot_usd_per_hour": 27.2,
            "on_demand_usd_per_hour": 63.3,
            "checkpoint_seconds": 300,
            "mtbf_seconds": 21_600,
            "restart_seconds": 120,
            "interval_seconds": 3000,
        },
    ),
    "memory.attention_scores_bytes": (
        memory.attention_scores_bytes,
        {"batch": 4, "heads": 16, "seq_len": 2048, "layers": 12, "bytes_per_value": 2},
    ),
    "serving.request_mix": (
        serving.request_mix,
        {
            "n": 20,
            "mean_prompt_tokens": 100,
            "mean_output_tokens": 50,
            "max_seq_len": 512,
            "arrivals_per_second": 2.0,
            "seed": 1,
        },
    ),
    "serving.kv_allocation": (
        serving.kv_allocation,
        {
            "requests": MIX,
            "kv_bytes_per_token": 819_200,
            "policy": "contiguous",
            "max_seq_len": 512,
            "block_tokens": 16,
            "memory_bytes": 1e10,
        },
    ),
    "serving.simulate_batching": (
        serving.simulate_batching,
        {
            "requests": MIX,
            "policy": "static",
            "max_batch": 4,
            "step_base_seconds": 0.01,
            "step_per_seq_seconds": 0.001,
            "prefill_seconds_per_token": 1e-5,
        },
    ),
    "offload.link_bandwidth_bytes_per_s": (offload.link_bandwidth_bytes_per_s, {"link": "pcie4"}),
    "offload.optimizer_offload": (
        offload.optimizer_offload,
        {
            "params": 7e9,
            "link": 55e9,
            "compute_seconds": 2.0,
            "cpu_seconds_per_param": 1e-9,
            "overlap": 0.5,
        },
    ),
    "offload.weight_streaming": (
        offload.weight_streaming,
        {"params": 7e9, "dtype": "bf16", "link": "nvlink-c2c", "gpu": "h100-sxm"},
    ),
    "finetune.lora_params": (
        finetune.lora_params,
        {"config": CFG, "rank": 8, "targets": ("q", "v")},
    ),
    "finetune.lora_targets": (finetune.lora_targets, {"config": CFG}),
    "finetune.lora_memory": (
        finetune.lora_memory,
        {
            "config": CFG,
            "rank": 8,
            "targets": ("q", "k", "v", "o"),
            "base_dtype": "int4",
            "batch": 1,
            "seq_len": 512,
            "recompute": "full",
        },
    ),
    "techniques.rank_techniques": (
        techniques.rank_techniques,
        {
            "config": CFG,
            "workload": "serving",
            "constraint": "too_costly",
            "gpu": "l40s",
            "batch": 2,
            "seq_len": 1024,
            "measured": {"torch.compile": 1.2},
        },
    ),
    "finetune.accumulation_steps": (
        finetune.accumulation_steps,
        {"global_batch": 64, "micro_batch": 4, "data_parallel": 2, "seq_len": 1024},
    ),
    "fleet.batch_latency_frontier": (
        fleet.batch_latency_frontier,
        {
            "config": CFG,
            "gpu": "h100-sxm",
            "tp": 2,
            "context_tokens": 768,
            "dtype": "bf16",
            "efficiency": 0.7,
            "tp_efficiency": 0.9,
            "usable_fraction": 0.9,
            "kv_sharding": "heads",
        },
    ),
    "fleet.cost_per_million_tokens": (
        fleet.cost_per_million_tokens,
        {"usd_per_gpu_hour": 3.0, "gpus": 8, "capacity_tokens_per_s": 20_000, "utilisation": 0.7},
    ),
    "fleet.diurnal_rates": (
        fleet.diurnal_rates,
        {"peak_requests_per_s": 50, "trough_fraction": 0.2, "peak_hour": 14, "step_seconds": 3600},
    ),
    "fleet.kv_room_sequences": (
        fleet.kv_room_sequences,
        {
            "config": CFG,
            "gpu": "h100-sxm",
            "tp": 2,
            "context_tokens": 768,
            "dtype": "bf16",
            "usable_fraction": 0.9,
            "kv_sharding": "heads",
        },
    ),
    "fleet.replica_option": (
        fleet.replica_option,
        {
            "config": CFG,
            "gpu": "h100-sxm",
            "tp": 2,
            "batch": 16,
            "tpot_slo_seconds": 0.04,
            "prompt_tokens": 512,
            "output_tokens": 256,
            "dtype": "bf16",
            "efficiency": 0.7,
            "tp_efficiency": 0.9,
            "usable_fraction": 0.9,
        },
    ),
    "fleet.replicas_for_slo": (
        fleet.replicas_for_slo,
        {
            "config": CFG,
            "gpu": "h100-sxm",
            "peak_requests_per_s": 50,
            "ttft_slo_seconds": 1.0,
            "tpot_slo_seconds": 0.04,
            "quantile": 0.99,
            "prompt_tokens": 512,
            "output_tokens": 256,
            "tp": None,
            "batch": None,
            "dtype": "bf16",
            "efficiency": 0.7,
            "tp_efficiency": 0.9,
            "max_tp": 8,
            "usd_per_gpu_hour": 3.0,
        },
    ),
    "fleet.scale_up_delay_seconds": (
        fleet.scale_up_delay_seconds,
        {"weights_bytes": 1.4e11, "load_bytes_per_s": 1e9, "boot_seconds": 120},
    ),
    "fleet.simulate_day": (
        fleet.simulate_day,
        {
            "rates_per_s": (10.0, 40.0, 80.0, 30.0),
            "step_seconds": 3600,
            "requests_per_s_per_replica": 20.0,
            "gpus_per_replica": 8,
            "policy": "autoscaled",
            "min_replicas": 1,
            "target_utilisation": 0.8,
            "scale_up_delay_seconds": 300,
        },
    ),
    "fleet.speculative_decoding": (
        fleet.speculative_decoding,
        {"acceptance_rate": 0.7, "draft_tokens": 4, "draft_cost_ratio": 0.05},
    ),
    "fleet.tensor_parallel_options": (
        fleet.tensor_parallel_options,
        {
            "config": CFG,
            "gpu": "h100-sxm",
            "tpot_slo_seconds": 0.04,
            "prompt_tokens": 512,
            "output_tokens": 256,
            "dtype": "bf16",
            "efficiency": 0.7,
            "tp_efficiency": 0.9,
            "max_tp": 8,
            "usable_fraction": 0.9,
        },
    ),
    "fleet.tp_degrees": (fleet.tp_degrees, {"config": CFG, "max_tp": 8}),
    "fleet.tp_speedup": (fleet.tp_speedup, {"tp": 4, "tp_efficiency": 0.9}),
    "queueing.route": (
        queueing.route,
        {
            "arrival_seconds": (0.0, 0.1, 0.15, 0.4, 0.5),
            "service_seconds": (0.3, 0.2, 0.5, 0.1, 0.2),
            "replicas": 2,
            "slots": 1,
            "policy": "least-outstanding",
        },
    ),
    "queueing.erlang_c": (queueing.erlang_c, {"servers": 8, "offered_erlangs": 6.0}),
    "queueing.latency_summary": (
        queueing.latency_summary,
        {"values_seconds": (0.12, 0.15, 0.11, 0.95)},
    ),
    "queueing.littles_law": (
        queueing.littles_law,
        {"arrivals_per_second": 4.0, "time_in_system_seconds": 2.5},
    ),
    "queueing.mmc": (
        queueing.mmc,
        {"arrivals_per_second": 6.0, "service_seconds": 1.0, "servers": 8},
    ),
    "queueing.percentile": (queueing.percentile, {"values_seconds": (0.1, 0.2, 0.4), "q": 99}),
    "reliability.checkpoint_args": (
        reliability.checkpoint_args,
        {"checkpoint_seconds": 60.0, "mtbf_seconds": 3600.0},
    ),
    "queueing.percentile_interval": (
        queueing.percentile_interval,
        {"values_seconds": tuple(0.01 * k for k in range(1, 101)), "q": 90, "confidence": 0.95},
    ),
    "queueing.samples_for_bound": (
        queueing.samples_for_bound,
        {"q": 99, "confidence": 0.95, "sided": "upper"},
    ),
    "queueing.servers_for_wait": (
        queueing.servers_for_wait,
        {
            "arrivals_per_second": 6.0,
            "service_seconds": 1.0,
            "wait_slo_seconds": 0.5,
            "quantile": 0.99,
        },
    ),
    "queueing.ttft_quantile_seconds": (
        queueing.ttft_quantile_seconds,
        {
            "arrivals_per_second": 6.0,
            "service_seconds": 1.0,
            "servers": 8,
            "prefill_seconds": 0.05,
            "quantile": 0.99,
        },
    ),
}

JUNK = st.one_of(
    st.none(),
    st.booleans(),
    st.text(max_size=4),
    st.sampled_from(
        [
            math.nan,
            math.inf,
            -math.inf,
            0,
            0.0,
            -1,
            -1e-9,
            1e308,
            -1e308,
            5e-324,
            10**400,
            -(10**400),
            2**63,
            1e20,
            3.5,
            [],
            {},
            (),
            object(),
            b"1",
        ]
    ),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
)


def test_every_public_function_has_a_junk_input_case():
    public = {
        f"{mod.__name__.split('.')[-1]}.{name}"
        for mod in (
            models,
            memory,
            compute,
            parallel,
            communication,
            planner,
            facility,
            systems,
            cluster,
            cloud,
            inference,
            energy,
            serving,
            offload,
            finetune,
            techniques,
            ai_infrastructure,
            computation_requirements,
            silicon_to_tensors,
            reliability,
            moe,
            context,
            fleet,
            queueing,
        )
        for name in mod.__all__
        if inspect.isfunction(getattr(mod, name))
    }
    public.add("models.TransformerConfig")
    public.add("gpu_infrastructure.memory_requirements_as_written")
    public.add("gpu_infrastructure.multi_gpu_efficiency_as_written")
    public.add(
        "gpu_infrastructure.course_estimate"
    )  # the seed's own estimate_runtime takes its dataclasses
    assert public == set(VALID)


@pytest.mark.parametrize("name", list(VALID))
def test_valid_call_succeeds_and_prints(name):
    fn, kwargs = VALID[name]
    result = fn(**kwargs)
    assert str(result)


@pytest.mark.parametrize("name", list(VALID))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_junk_inputs_raise_only_value_error(name, data):
    """Any value in any parameter either works or raises ValueError naming that parameter's
    problem; never TypeError, ZeroDivisionError, OverflowError or a silent NaN result."""
    fn, kwargs = VALID[name]
    param = data.draw(st.sampled_from(sorted(kwargs)), label="parameter")
    junk = data.draw(JUNK, label="value")
    try:
        result = fn(**(kwargs | {param: junk}))
    except ValueError as err:
        assert str(err)
        return
    if isinstance(result, float):
        assert not math.isnan(result)
    str(result)  # a result that was accepted must also display


# ---------------------------------------------------------------------------------------------
# No torch on the calculator path
# ---------------------------------------------------------------------------------------------


def test_calculators_do_not_import_torch_and_import_fast():
    """The calculators import no torch (importing torch costs ~2 s per kernel). The import
    time is printed for the record, not asserted beyond a generous bound."""
    code = (
        "import sys, time; t = time.perf_counter(); "
        "import course.calculators.memory, course.calculators.compute, course.calculators.parallel, course.calculators.facility, course.calculators.systems, course.calculators.cluster, course.calculators.cloud, "
        "course.calculators.inference, course.calculators.energy, course.claims.gpu_infrastructure, course.facts.data.published_runs, "
        "course.calculators.serving, course.calculators.offload, course.calculators.finetune, course.calculators.techniques, "
        "course.calculators.reliability, course.calculators.moe, course.calculators.context; "
        "dt = time.perf_counter() - t; "
        "assert 'torch' not in sys.modules, 'torch was imported'; "
        "assert 'numpy' not in sys.modules, 'numpy was imported'; print(f'{dt:.4f}')"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    seconds = float(out.stdout.strip())
    print(f"import of the five calculator modules: {seconds * 1e3:.1f} ms")
    assert seconds < 2.0
