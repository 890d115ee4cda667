"""course.calculators.cluster: datacenter planning against published cases."""

from __future__ import annotations

import math

import pytest

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
