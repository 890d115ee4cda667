"""course.calculators.cluster: datacenter planning against published cases."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from course.calculators import cluster, facility
from course.calculators.cluster import cluster_for_model
from course.facts.models import PRESETS
from course.facts.units import DAY


def test_cluster_for_gpt3_175b_uses_a_full_nvlink_domain_for_tensor_parallelism():
    """Practice question 8 of seed 003. Megatron practice (Narayanan et al. 2021): tensor
    parallelism across the 8 GPUs of a DGX, pipeline stages across systems. 175B needs
    2.8 TB of model states alone, so one 8-GPU system cannot hold it."""
    plan = cluster_for_model(PRESETS["gpt-3-175b"], system="dgx-h100")
    assert plan.tensor_parallel == 8
    assert plan.pipeline_parallel > 1 and 96 % plan.pipeline_parallel == 0
    assert plan.memory_per_gpu_bytes <= plan.usable_memory_per_gpu_bytes == 0.9 * 80 * 2**30
    assert plan.data_parallel == 1 and plan.systems == plan.pipeline_parallel
    assert math.isnan(plan.training_seconds)


def test_cluster_time_target_adds_data_parallel_replicas():
    plan = cluster_for_model(PRESETS["gpt-3-175b"], tokens=300e9, days=30, mfu=0.4)
    assert plan.training_seconds <= 30 * DAY
    assert plan.gpus == plan.tensor_parallel * plan.pipeline_parallel * plan.data_parallel
    assert plan.systems == math.ceil(plan.gpus / 8)
    fewer = cluster_for_model(PRESETS["gpt-3-175b"], tokens=300e9, days=60, mfu=0.4)
    assert fewer.gpus < plan.gpus


def test_small_model_fits_one_gpu():
    plan = cluster_for_model(PRESETS["gpt2"], system="dgx-a100-640gb")
    assert (plan.tensor_parallel, plan.pipeline_parallel, plan.gpus, plan.systems) == (1, 1, 1, 1)


def test_cluster_planner_refuses_what_cannot_fit_and_incomplete_targets():
    with pytest.raises(ValueError, match="does not fit"):
        cluster_for_model(
            PRESETS["gpt-3-175b"], recompute="none", micro_batch=64, sequence_parallel=False
        )
    with pytest.raises(ValueError, match="days needs tokens"):
        cluster_for_model(PRESETS["gpt2"], days=3)
    with pytest.raises(ValueError, match="system must be one of"):
        cluster_for_model(PRESETS["gpt2"], system="dgx-b200")


def test_gpt3_on_1024_a100s_takes_34_days_as_megatron_reports():
    """Narayanan et al. 2021, sec. 5.1: GPT-3 175B, 300B tokens, 1,024 A100 GPUs at 140 TFLOP/s
    per GPU, 8 x params x tokens (full recomputation): 'about 34 days'."""
    d = cluster.dgx_design(
        PRESETS["gpt-3-175b"],
        tokens=300e9,
        gpus=1024,
        system="dgx-a100-640gb",
        mfu=140 / 312,
        recompute="full",
        pipeline_parallel=16,
    )
    assert d.training_seconds / DAY == pytest.approx(34, abs=0.5)
    assert (d.tensor_parallel, d.pipeline_parallel, d.data_parallel) == (8, 16, 8)
    assert d.systems == 128 and d.sus == 4
    assert d.memory_per_gpu_bytes <= 0.9 * 80e9


def test_gpt3_flops_match_brown_et_al_and_the_design_scales_to_a_deadline():
    """Brown et al. 2020, table D.1: GPT-3 175B used 3.14e23 FLOPs (6 x 174.6B x 300B)."""
    d = cluster.dgx_design(PRESETS["gpt-3-175b"], tokens=300e9, days=30)
    assert d.flops == pytest.approx(3.14e23, rel=0.01)
    assert d.training_seconds <= 30 * DAY and d.tensor_parallel == 8
    assert d.systems == math.ceil(d.gpus / 8) and d.racks == math.ceil(d.systems / 4)
    assert d.it_power_watts == d.systems * 10_200
    assert d.energy_joules == pytest.approx(
        d.it_power_watts * facility.PUE_INDUSTRY_AVERAGE * d.training_seconds
    )
    faster = cluster.dgx_design(PRESETS["gpt-3-175b"], tokens=300e9, days=10)
    assert faster.gpus > d.gpus and faster.sus >= d.sus


def test_design_refuses_what_cannot_work():
    cfg = PRESETS["gpt-3-175b"]
    with pytest.raises(ValueError, match="exactly one of days and gpus"):
        cluster.dgx_design(cfg, tokens=300e9)
    with pytest.raises(ValueError, match="multiple of tensor x pipeline"):
        cluster.dgx_design(cfg, tokens=300e9, gpus=1000)
    with pytest.raises(ValueError, match="does not fit"):
        cluster.dgx_design(cfg, tokens=300e9, days=30, pipeline_parallel=1)
    with pytest.raises(ValueError, match="divide"):
        cluster.dgx_design(cfg, tokens=300e9, days=30, pipeline_parallel=5)


@settings(max_examples=20, deadline=None)
@given(days=st.floats(5, 200), more=st.floats(1.01, 4))
def test_a_longer_deadline_never_needs_more_gpus(days, more):
    cfg = PRESETS["gpt-3-175b"]
    tight = cluster.dgx_design(cfg, tokens=300e9, days=days)
    loose = cluster.dgx_design(cfg, tokens=300e9, days=days * more)
    assert loose.gpus <= tight.gpus and loose.it_power_watts <= tight.it_power_watts
    assert tight.training_seconds <= days * DAY * (1 + 1e-9)


def test_a_design_past_the_largest_superpod_names_the_deadline_and_the_tokens():
    """1e15 tokens of GPT-3 in 30 days needs about 130,000 scalable units; a three-tier fabric of
    64-port switches connects 256 (65,536 GPUs: NVIDIA DGX SuperPOD H100 reference architecture's
    rule, ``systems.MAX_SUS``). The error says which inputs to change, not an internal count."""
    with pytest.raises(ValueError, match=r"later deadline \(days\) or fewer training tokens"):
        cluster.dgx_design(PRESETS["gpt-3-175b"], tokens=1e15, days=30)
    ok = cluster.dgx_design(PRESETS["gpt-3-175b"], tokens=300e9, days=30)
    assert ok.sus <= 256
